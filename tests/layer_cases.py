"""Hypothesis strategies for the layers beside Conv2d: ConvTranspose2d and Conv1d specs
over every parameter each allows, small enough for hundreds of torch calls a second."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from convcore import PADDING_MODES, ConvSpecError, TransposeSpec
from convcore.conv1d import conv1d_spec
from convcore.padding_modes import check_mode_fits

__all__ = ["LayerCase", "conv1d_cases", "transpose_cases"]


@dataclass(frozen=True)
class LayerCase:
    """A valid layer spec: the shapes, the keyword arguments (PyTorch's names), whether
    there is a bias, the output shape and a seed for the arrays."""

    x_shape: tuple[int, ...]
    w_shape: tuple[int, ...]
    kwargs: tuple[tuple[str, Any], ...]  # (name, value) pairs: a frozen case hashes
    bias: bool
    out_shape: tuple[int, ...]
    seed: int

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.kwargs)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """x, w, b (or None) and dout, all drawn from a normal distribution."""
        rng = np.random.default_rng(self.seed)
        x, w = rng.normal(size=self.x_shape), rng.normal(size=self.w_shape)
        b = rng.normal(size=self.out_shape[1]) if self.bias else None
        return x, w, b, rng.normal(size=self.out_shape)


def _int_or_pair(values: tuple[int, int]):
    """An (h, w) pair as PyTorch takes it: the int when both are equal (or the pair)."""
    return st.sampled_from([values[0], values]) if values[0] == values[1] else st.just(values)


def _pair(draw, low: int, high: int) -> tuple[int, int]:
    return (draw(st.integers(low, high)), draw(st.integers(low, high)))


@st.composite
def transpose_cases(draw, max_n=2, max_c=4, max_hw=5, max_k=4, max_stride=3, max_dilation=3, max_padding=3):
    """ConvTranspose2d specs: groups dividing C_in and C_out, non-square kernels, per-axis
    stride, dilation, padding and output_padding (every value below the stride or the
    dilation of its axis), with and without a bias."""
    groups = draw(st.integers(1, max_c))
    c_in = groups * draw(st.integers(1, max(1, max_c // groups)))
    c_out_per_group = draw(st.integers(1, max(1, max_c // groups)))
    x_shape = (draw(st.integers(1, max_n)), c_in, draw(st.integers(1, max_hw)), draw(st.integers(1, max_hw)))
    w_shape = (c_in, c_out_per_group, draw(st.integers(1, max_k)), draw(st.integers(1, max_k)))
    stride, dilation = _pair(draw, 1, max_stride), _pair(draw, 1, max_dilation)
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    kwargs = {
        "stride": draw(_int_or_pair(stride)),
        "padding": draw(_int_or_pair(_pair(draw, 0, max_padding))),
        "output_padding": draw(_int_or_pair(output_padding)),
        "dilation": draw(_int_or_pair(dilation)),
        "groups": groups,
    }
    try:
        spec = TransposeSpec.create(x_shape, w_shape, **kwargs)
    except ConvSpecError:  # padding cropped the whole output
        assume(False)
    return LayerCase(
        x_shape, w_shape, tuple(kwargs.items()), draw(st.booleans()), spec.out_shape, draw(st.integers(0, 2**32 - 1))
    )


conv1d_paddings = st.one_of(
    st.integers(0, 3),
    st.tuples(st.integers(0, 3)),
    st.tuples(st.integers(0, 3), st.integers(0, 3)),
    st.sampled_from(["valid", "same", "causal"]),
)


@st.composite
def conv1d_cases(draw, max_n=3, max_cf=4, max_length=12, max_k=5, max_stride=3, max_dilation=3):
    """Conv1d specs: groups dividing C and F, stride and dilation as ints or 1-tuples,
    every padding form (int, (p,), (left, right), "valid", "same", "causal"), every
    padding_mode the padding fits, flipped or not, with and without a bias."""
    groups = draw(st.integers(1, max_cf))
    c = groups * draw(st.integers(1, max(1, max_cf // groups)))
    f = groups * draw(st.integers(1, max(1, max_cf // groups)))
    x_shape = (draw(st.integers(1, max_n)), c, draw(st.integers(1, max_length)))
    w_shape = (f, c // groups, draw(st.integers(1, max_k)))
    stride, dilation = draw(st.integers(1, max_stride)), draw(st.integers(1, max_dilation))
    kwargs = {
        "stride": draw(st.sampled_from([stride, (stride,)])),
        "padding": draw(conv1d_paddings),
        "dilation": draw(st.sampled_from([dilation, (dilation,)])),
        "groups": groups,
        "padding_mode": draw(st.sampled_from(PADDING_MODES)),
        "flip": draw(st.booleans()),
    }
    try:
        spec = conv1d_spec(x_shape, w_shape, kwargs["stride"], kwargs["padding"], kwargs["dilation"], groups)
        check_mode_fits(kwargs["padding_mode"], spec.padding, (spec.H, spec.W))
    except ConvSpecError:
        assume(False)
    out_shape = (x_shape[0], f, spec.out_hw[1])
    return LayerCase(
        x_shape, w_shape, tuple(kwargs.items()), draw(st.booleans()), out_shape, draw(st.integers(0, 2**32 - 1))
    )
