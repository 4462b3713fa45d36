"""The new layers' refusals: a ValueError (ConvSpecError) that names the argument and the
numbers, for every argument PyTorch refuses too (tinygrad's rule: bad parameters are
rejected as torch rejects them; each case runs torch's call and expects it to raise)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from layer_oracle import torch_pad
from oracle import require_torch

from convcore import (
    ConvSpecError,
    conv1d_backward,
    conv1d_forward,
    conv2d_backward,
    conv2d_forward,
    conv_transpose2d_backward,
    conv_transpose2d_forward,
)


def zeros(*shape):
    return np.zeros(shape)


def _t(*shape):
    return require_torch().zeros(*shape, dtype=require_torch().float64)


def _F():
    return require_torch().nn.functional


# (ours, field, message, torch's call of the same thing or None when torch has no such argument)
REFUSALS = {
    "conv2d padding_mode unknown": (
        lambda: conv2d_forward(zeros(1, 1, 3, 3), zeros(1, 1, 2, 2), padding=1, padding_mode="mirror"),
        "padding_mode",
        "padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular', got 'mirror'",
        lambda: require_torch().nn.Conv2d(1, 1, 2, padding=1, padding_mode="mirror"),
    ),
    "conv2d reflect as wide as the input": (
        lambda: conv2d_forward(zeros(1, 1, 4, 3), zeros(1, 1, 2, 2), padding=(1, 3), padding_mode="reflect"),
        "padding",
        "padding_mode='reflect' needs each padding smaller than the input: left padding 3, W = 3 "
        "(a mirror about the edge cell shows at most W − 1 = 2 cells)",
        lambda: torch_pad(_t(1, 1, 4, 3), (3, 3, 1, 1), "reflect"),
    ),
    "conv2d_backward reflect as tall as the input": (
        lambda: conv2d_backward(
            zeros(1, 1, 7, 2), zeros(1, 1, 2, 2), zeros(1, 1, 3, 3), padding=2, padding_mode="reflect"
        ),
        "padding",
        "padding_mode='reflect' needs each padding smaller than the input: top padding 2, H = 2",
        lambda: torch_pad(_t(1, 1, 2, 3), (2, 2, 2, 2), "reflect"),
    ),
    "conv2d circular wrapping twice": (
        lambda: conv2d_forward(zeros(1, 1, 3, 5), zeros(1, 1, 2, 2), padding=(4, 0, 0, 0), padding_mode="circular"),
        "padding",
        "padding_mode='circular' wraps around at most once: top padding 4 is more than H = 3",
        lambda: torch_pad(_t(1, 1, 3, 5), (0, 0, 4, 0), "circular"),
    ),
    "conv2d flip not a bool": (
        lambda: conv2d_forward(zeros(1, 1, 3, 3), zeros(1, 1, 2, 2), flip=1),
        "flip",
        "flip must be True (convolution) or False (cross-correlation), got 1",
        None,
    ),
    "transposed output_padding as large as stride and dilation": (
        lambda: conv_transpose2d_forward(zeros(1, 1, 3, 3), zeros(1, 1, 3, 3), stride=(2, 3), output_padding=(2, 0)),
        "output_padding",
        "output_padding must be smaller than the stride or the dilation: on the rows output_padding 2, "
        "stride 2, dilation 1",
        lambda: _F().conv_transpose2d(_t(1, 1, 3, 3), _t(1, 1, 3, 3), stride=(2, 3), output_padding=(2, 0)),
    ),
    "transposed output_padding without stride or dilation": (
        lambda: conv_transpose2d_forward(zeros(1, 1, 3, 3), zeros(1, 1, 3, 3), output_padding=(0, 1)),
        "output_padding",
        "on the columns output_padding 1, stride 1, dilation 1",
        lambda: _F().conv_transpose2d(_t(1, 1, 3, 3), _t(1, 1, 3, 3), output_padding=(0, 1)),
    ),
    "transposed negative padding": (
        lambda: conv_transpose2d_forward(zeros(1, 1, 3, 3), zeros(1, 1, 3, 3), padding=(0, -1)),
        "padding",
        "padding must be at least 0, got -1 in (0, -1)",
        lambda: _F().conv_transpose2d(_t(1, 1, 3, 3), _t(1, 1, 3, 3), padding=(0, -1)),
    ),
    "transposed zero stride": (
        lambda: conv_transpose2d_forward(zeros(1, 1, 3, 3), zeros(1, 1, 3, 3), stride=0),
        "stride",
        "stride must be at least 1, got 0 in (0, 0)",
        lambda: _F().conv_transpose2d(_t(1, 1, 3, 3), _t(1, 1, 3, 3), stride=0),
    ),
    "transposed groups not dividing C_in": (
        lambda: conv_transpose2d_forward(zeros(1, 4, 3, 3), zeros(4, 1, 2, 2), groups=3),
        "groups",
        "groups=3 does not divide the input channels C_in=4",
        lambda: _F().conv_transpose2d(_t(1, 4, 3, 3), _t(4, 1, 2, 2), groups=3),
    ),
    "transposed weight of Conv2d's layout": (
        lambda: conv_transpose2d_forward(zeros(1, 2, 3, 3), zeros(3, 2, 2, 2)),
        "w",
        "w has 3 input channels (its first axis), expected C_in = 2: conv_transpose2d's weight is "
        "(C_in, C_out/groups, KH, KW)",
        lambda: _F().conv_transpose2d(_t(1, 2, 3, 3), _t(3, 2, 2, 2)),
    ),
    "transposed padding cropping everything": (
        lambda: conv_transpose2d_forward(zeros(1, 1, 3, 3), zeros(1, 1, 1, 1), padding=2),
        "padding",
        "output would have -1 rows: (H−1)·stride − 2·padding + dilation·(KH−1) + output_padding + 1 = "
        "(3−1)·1 − 2·2 + 1·(1−1) + 0 + 1; padding crops 2 rows from each side of 3",
        lambda: _F().conv_transpose2d(_t(1, 1, 3, 3), _t(1, 1, 1, 1), padding=2),
    ),
    "transposed padding 'same'": (
        lambda: conv_transpose2d_forward(zeros(1, 1, 3, 3), zeros(1, 1, 3, 3), padding="same"),
        "padding",
        "padding of conv_transpose2d must be an int or an (h, w) pair of ints (rows and columns cropped "
        "from each side of the output), got 'same'",
        lambda: _F().conv_transpose2d(_t(1, 1, 3, 3), _t(1, 1, 3, 3), padding="same"),
    ),
    "transposed bias of C_in": (
        lambda: conv_transpose2d_forward(zeros(1, 2, 3, 3), zeros(2, 3, 2, 2), zeros(2)),
        "b",
        "b has shape (2,), expected (3,)",
        lambda: _F().conv_transpose2d(_t(1, 2, 3, 3), _t(2, 3, 2, 2), _t(2)),
    ),
    "transposed backward dout of the wrong size": (
        lambda: conv_transpose2d_backward(zeros(1, 3, 3, 3), zeros(1, 2, 3, 3), zeros(2, 3, 2, 2), stride=2),
        "dout",
        "dout has shape (1, 3, 3, 3), expected (1, 3, 6, 6)",
        None,
    ),
    "conv1d image input": (
        lambda: conv1d_forward(zeros(1, 1, 3, 3), zeros(1, 1, 2)),
        "x",
        "x must have 3 dimensions (N, C, L), got 4: shape (1, 1, 3, 3)",
        lambda: _F().conv1d(_t(1, 1, 3, 3), _t(1, 1, 2)),
    ),
    "conv1d padding 'full'": (
        lambda: conv1d_forward(zeros(1, 1, 5), zeros(1, 1, 2), padding="full"),
        "padding",
        "padding of conv1d must be an int, (left, right), 'valid', 'same' or 'causal', got 'full'",
        lambda: _F().conv1d(_t(1, 1, 5), _t(1, 1, 2), padding="full"),
    ),
    "conv1d kernel longer than the sequence": (
        lambda: conv1d_forward(zeros(1, 1, 4), zeros(1, 1, 3), dilation=2),
        "w",
        "kernel spans 5 cells with dilation 2 (kernel 3), padded input has 4 (L plus padding): "
        "output length would be less than 1",
        lambda: _F().conv1d(_t(1, 1, 4), _t(1, 1, 3), dilation=2),
    ),
    "conv1d negative padding": (
        lambda: conv1d_forward(zeros(1, 1, 5), zeros(1, 1, 2), padding=(1, -1)),
        "padding",
        "padding must not be negative, got -1",
        lambda: _F().conv1d(_t(1, 1, 5), _t(1, 1, 2), padding=-1),
    ),
    "conv1d groups not dividing C": (
        lambda: conv1d_forward(zeros(1, 3, 5), zeros(2, 1, 2), groups=2),
        "groups",
        "groups=2 does not divide the input channels C=3",
        lambda: _F().conv1d(_t(1, 3, 5), _t(2, 1, 2), groups=2),
    ),
    "conv1d stride of an image": (
        lambda: conv1d_forward(zeros(1, 1, 5), zeros(1, 1, 2), stride=(2, 2)),
        "stride",
        "stride of conv1d must be an int (or a 1-tuple), got (2, 2)",
        lambda: _F().conv1d(_t(1, 1, 5), _t(1, 1, 2), stride=(2, 2)),
    ),
    "conv1d causal reflect longer than the sequence": (
        lambda: conv1d_backward(
            zeros(1, 1, 3), zeros(1, 1, 3), zeros(1, 1, 4), padding="causal", padding_mode="reflect"
        ),
        "padding",
        "padding_mode='reflect' needs each padding smaller than the input: left padding 3, L = 3",
        lambda: torch_pad(_t(1, 1, 3), (3, 0), "reflect"),
    ),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_refusal_names_the_argument_and_the_numbers(name):
    ours, field, message, theirs = REFUSALS[name]
    with pytest.raises(ConvSpecError, match=re.escape(message)) as refused:
        ours()
    assert isinstance(refused.value, ValueError)
    assert refused.value.field == field
    if theirs is not None:
        with pytest.raises((RuntimeError, ValueError, TypeError)):
            theirs()


@pytest.mark.parametrize("padding_mode", ["reflect", "circular"])
def test_the_largest_padding_torch_takes_is_taken(padding_mode):
    """Reflect up to size − 1, circular up to the size: where torch still pads, so do we."""
    pad = 2 if padding_mode == "reflect" else 3
    x, w = np.arange(9.0).reshape(1, 1, 3, 3), np.ones((1, 1, 1, 1))
    out = conv2d_forward(x, w, padding=pad, padding_mode=padding_mode)
    np.testing.assert_array_equal(out, torch_pad(require_torch().tensor(x), (pad,) * 4, padding_mode).numpy())
