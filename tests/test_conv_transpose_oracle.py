"""conv_transpose2d_forward / conv_transpose2d_backward against PyTorch.

Forward, dX, dW and db against ``F.conv_transpose2d`` with autograd, float64, a random
upstream gradient, a relative tolerance of 1e-10, on 300 hypothesis specs over every
parameter the layer takes: stride, padding, output_padding, dilation (each per axis),
groups, bias or not (tests/layer_cases.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from layer_cases import transpose_cases
from layer_oracle import PROPERTY, assert_all_close, torch_grads
from oracle import require_torch

from convcore import conv_transpose2d_backward, conv_transpose2d_forward

pytestmark = pytest.mark.oracle


@PROPERTY
@given(transpose_cases())
def test_conv_transpose2d_matches_torch(case):
    F = require_torch().nn.functional
    x, w, b, dout = case.arrays()
    kw = case.args
    out = conv_transpose2d_forward(x, w, b, **kw)
    grads = conv_transpose2d_backward(dout, x, w, b, **kw)
    theirs = torch_grads(lambda xt, wt, bt: F.conv_transpose2d(xt, wt, bt, **kw), x, w, b, dout)
    assert_all_close((out, *grads), theirs)


def test_transposed_stamps_overlap_in_a_checkerboard():
    """Ones through a ones kernel 3×3 at stride 2: each output cell counts the stamps
    landing on it, 1 2 1 2 1 per axis (the checkerboard of stride < kernel)."""
    y = conv_transpose2d_forward(np.ones((1, 1, 2, 2)), np.ones((1, 1, 3, 3)), stride=2)
    counts = np.array([1, 1, 2, 1, 1])
    np.testing.assert_array_equal(y[0, 0], np.outer(counts, counts))


@pytest.mark.parametrize(
    "stride,padding,output_padding,dilation", [(2, 1, 1, 1), (3, 0, 2, 1), (1, 2, 1, 2), (2, 0, 0, 3)]
)
def test_transposed_output_size_is_torchs(stride, padding, output_padding, dilation):
    F = require_torch().nn.functional
    torch = require_torch()
    kw = dict(stride=stride, padding=padding, output_padding=output_padding, dilation=dilation)
    x, w = np.zeros((1, 2, 4, 3)), np.zeros((2, 3, 3, 2))
    theirs = F.conv_transpose2d(torch.tensor(x), torch.tensor(w), **kw).shape
    assert conv_transpose2d_forward(x, w, **kw).shape == tuple(theirs)


def test_positional_arguments_are_in_torchs_order():
    """Code written for F.conv_transpose2d (input, weight, bias, stride, padding,
    output_padding, groups, dilation) passes its arguments by position and means the same."""
    import inspect

    torch = require_torch()
    ours = list(inspect.signature(conv_transpose2d_forward).parameters)[:8]
    assert ours == ["x", "w", "b", "stride", "padding", "output_padding", "groups", "dilation"]
    x = np.random.default_rng(5).normal(size=(1, 4, 3, 3))
    w = np.random.default_rng(6).normal(size=(4, 1, 3, 3))
    theirs = torch.nn.functional.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), None, 2, 1, 1, 2, 2)
    np.testing.assert_allclose(
        conv_transpose2d_forward(x, w, None, 2, 1, 1, 2, 2), theirs.numpy(), rtol=1e-10, atol=1e-12
    )
