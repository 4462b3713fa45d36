"""conv1d_forward / conv1d_backward against PyTorch.

Forward, dX, dW and db against ``F.conv1d`` of ``F.pad(x, (left, right), mode)`` with
autograd, float64, a random upstream gradient, a relative tolerance of 1e-10, on 300
hypothesis specs over every parameter: stride, padding (an int, (p,), (left, right),
"valid", "same", "causal"), dilation, groups, padding_mode, flip, bias or not
(tests/layer_cases.py). "causal" is checked as PyTorch writes it: ``F.pad`` on the left
by dilation·(K − 1), then ``conv1d`` with padding 0.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from layer_cases import conv1d_cases
from layer_oracle import PROPERTY, assert_all_close, torch_grads, torch_module_grads, torch_pad
from oracle import require_torch

from convcore import PADDING_MODES, conv1d_backward, conv1d_forward

pytestmark = pytest.mark.oracle


def _conv1d_sides(padding, length: int, stride: int, extent: int) -> tuple[int, int]:
    """(left, right) as the test reads conv1d's padding argument."""
    if padding == "valid":
        return (0, 0)
    if padding == "causal":  # PyTorch has no "causal": F.pad on the left, then padding 0
        return (extent - 1, 0)
    if padding == "same":  # TensorFlow's: output ceil(L / stride), the odd cell on the right
        total = max((-(-length // stride) - 1) * stride + extent - length, 0)
        return (total // 2, total - total // 2)
    return (padding, padding) if isinstance(padding, int) else (padding[0], padding[-1])


@PROPERTY
@given(conv1d_cases())
def test_conv1d_matches_torch(case):
    torch = require_torch()
    x, w, b, dout = case.arrays()
    kw = case.args
    stride, dilation = np.ravel(kw["stride"])[0], np.ravel(kw["dilation"])[0]
    sides = _conv1d_sides(kw["padding"], x.shape[2], stride, dilation * (w.shape[2] - 1) + 1)

    def layer(xt, wt, bt):
        kernel = torch.flip(wt, (2,)) if kw["flip"] else wt
        padded = torch_pad(xt, sides, kw["padding_mode"])
        return torch.nn.functional.conv1d(padded, kernel, bt, kw["stride"], 0, kw["dilation"], kw["groups"])

    out = conv1d_forward(x, w, b, **kw)
    grads = conv1d_backward(dout, x, w, b, **kw)
    assert_all_close((out, *grads), torch_grads(layer, x, w, b, dout))


def test_causal_output_reads_only_the_past():
    """padding='causal': output t depends on inputs ≤ t only, and is as long as x."""
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(1, 2, 10)), rng.normal(size=(3, 2, 3))
    out = conv1d_forward(x, w, padding="causal", dilation=2)
    assert out.shape == (1, 3, 10)
    for t in range(10):
        changed = x.copy()
        changed[:, :, t] += 1.0
        moved = np.flatnonzero(np.any(conv1d_forward(changed, w, padding="causal", dilation=2) != out, axis=(0, 1)))
        assert moved.min() == t, t


@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@pytest.mark.parametrize("padding", [1, "same"])
def test_padding_modes_are_those_of_torch_nn_conv1d(padding_mode, padding):
    """What torch.nn.Conv1d does with padding_mode (its own padding, not our F.pad call)."""
    torch = require_torch()
    rng = np.random.default_rng(6)
    x, w, b = rng.normal(size=(2, 4, 7)), rng.normal(size=(6, 2, 3)), rng.normal(size=6)
    conv = torch.nn.Conv1d(4, 6, 3, padding=padding, groups=2, padding_mode=padding_mode, dtype=torch.float64)
    kw = dict(padding=padding, groups=2, padding_mode=padding_mode)
    out = conv1d_forward(x, w, b, **kw)
    dout = rng.normal(size=out.shape)
    assert_all_close((out, *conv1d_backward(dout, x, w, b, **kw)), torch_module_grads(conv, x, w, b, dout))
