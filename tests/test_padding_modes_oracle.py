"""conv2d_forward / conv2d_backward with padding_mode and flip against PyTorch.

Forward, dX, dW and db against ``F.conv2d`` of ``F.pad(x, padding, mode)`` (and of
``torch.flip(w, (2, 3))`` with flip) with autograd, float64, a random upstream gradient,
a relative tolerance of 1e-10, on 300 hypothesis specs per mode over every parameter
conv2d takes (tests/strategies.py); and against ``torch.nn.Conv2d(padding_mode=...)``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from layer_oracle import PROPERTY, assert_all_close, fitting_mode, torch_conv2d, torch_grads, torch_module_grads
from oracle import require_torch
from strategies import conv_cases

from convcore import PADDING_MODES, conv2d_backward, conv2d_forward

pytestmark = pytest.mark.oracle


def _check_conv2d_against_torch(case, padding_mode: str, flip: bool) -> None:
    """conv2d_forward/backward with ``padding_mode`` and ``flip`` against F.conv2d of
    F.pad(x, padding, mode) and, with flip, of torch.flip(w, (2, 3))."""
    assume(fitting_mode(case.spec, padding_mode))
    x, w, b, dout = case.arrays()
    kw = dict(case.kwargs(), padding_mode=padding_mode, flip=flip)
    out = conv2d_forward(x, w, b, **kw)
    grads = conv2d_backward(dout, x, w, **kw)
    assert_all_close((out, *grads), torch_grads(torch_conv2d(case.spec, padding_mode, flip), x, w, b, dout))


@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@PROPERTY
@given(case=conv_cases())
def test_conv2d_padding_modes_match_torch(padding_mode, case):
    _check_conv2d_against_torch(case, padding_mode, flip=False)


@PROPERTY
@given(case=conv_cases(), padding_mode=st.sampled_from(PADDING_MODES))
def test_conv2d_flip_is_torch_conv2d_of_the_rotated_kernel(case, padding_mode):
    _check_conv2d_against_torch(case, padding_mode, flip=True)


@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@pytest.mark.parametrize("padding", [1, (2, 1), "same"])
def test_padding_modes_are_those_of_torch_nn_conv2d(padding_mode, padding):
    """What torch.nn.Conv2d does with padding_mode (its own padding, not our F.pad call):
    the same forward and gradients."""
    torch = require_torch()
    rng = np.random.default_rng(5)
    x, w, b = rng.normal(size=(2, 4, 5, 6)), rng.normal(size=(6, 2, 3, 3)), rng.normal(size=6)
    conv = torch.nn.Conv2d(4, 6, 3, padding=padding, groups=2, padding_mode=padding_mode, dtype=torch.float64)
    kw = dict(padding=padding, groups=2, padding_mode=padding_mode)
    out = conv2d_forward(x, w, b, **kw)
    dout = rng.normal(size=out.shape)
    assert_all_close((out, *conv2d_backward(dout, x, w, **kw)), torch_module_grads(conv, x, w, b, dout))


@pytest.mark.parametrize(
    "padding_mode, dx",
    [("zeros", [1, 1, 1]), ("reflect", [1, 3, 1]), ("replicate", [2, 1, 2]), ("circular", [2, 1, 2])],
)
def test_the_padding_gradient_folds_back_onto_the_cells_it_copied(padding_mode, dx):
    """A row x = [a, b, c] padded by one column on each side, a 1×1 kernel of 1, dout all
    ones (here on purpose: dx then counts the cells that hold each input's value).
    Reflect copies b twice ([b | a b c | b]), replicate and circular copy a and c once
    each ([a | a b c | c], [c | a b c | a]), zeros copies nothing."""
    x, w = np.array([[[[4.0, 5.0, 6.0]]]]), np.ones((1, 1, 1, 1))
    got, _, _ = conv2d_backward(np.ones((1, 1, 1, 5)), x, w, padding=(0, 0, 1, 1), padding_mode=padding_mode)
    np.testing.assert_array_equal(got, [[[dx]]])
