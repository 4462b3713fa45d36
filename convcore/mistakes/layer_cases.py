"""Cases of the layers beside Conv2d: a ConvTranspose2d and a Conv1d with their inputs,
as ``convcore.mistakes.case.Case`` is a Conv2d's (the grader searches over them, the
catalogue states its transposed setups in them).

Each is a ``convcore.mistakes.case.LayerCase``, as a Case is (validity, size, plain
data and description shared), holds the numbers in PyTorch's terms and draws its inputs
as a Case does (``values`` "int": distinct non-zero small integers; "float": normal
floats; the upstream gradient ``dout`` random, never ones). ``truth`` is convcore's own
``conv_transpose2d_*`` / ``conv1d_*`` (tested against PyTorch). ``smaller(knob)`` is
the one-step-smaller neighbour along a knob, as for a Case
(``convcore.mistakes.case.one_step_smaller`` walks them).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..conv1d import conv1d_backward, conv1d_forward, conv1d_spec
from ..conv_transpose import conv_transpose2d_backward, conv_transpose2d_forward
from ..spec import ConvSpec
from ..transpose_spec import TransposeSpec
from .case import Arrays, LayerCase, _short, drawn_inputs, step_down

__all__ = ["Conv1dCase", "LayerTruth", "TransposedCase"]


class LayerTruth(NamedTuple):
    """The true tensors of a layer's case (PyTorch's layouts)."""

    out: np.ndarray
    dx: np.ndarray
    dw: np.ndarray
    db: np.ndarray


# knob -> (field, indices it lowers together, lowest value)
_TRANSPOSED_TUPLES = {
    "stride_h": ("stride", (0,), 1),
    "stride_w": ("stride", (1,), 1),
    "pad_h": ("padding", (0,), 0),
    "pad_w": ("padding", (1,), 0),
    "output_padding_h": ("output_padding", (0,), 0),
    "output_padding_w": ("output_padding", (1,), 0),
    "dilation_h": ("dilation", (0,), 1),
    "dilation_w": ("dilation", (1,), 1),
}
_TRANSPOSED_INTS = {"n": 1, "cg": 1, "fg": 1, "groups": 1, "h": 1, "w": 1, "kh": 1, "kw": 1}


@dataclass(frozen=True)
class TransposedCase(LayerCase):
    """One ConvTranspose2d and its inputs.

    Attributes
    ----------
    n, cg, fg, groups : as a ``LayerCase``'s, cg and fg the input and output channels per
        group (C_in = groups·cg, C_out = groups·fg)
    h, w : input rows and columns
    kh, kw : kernel rows and columns
    stride, padding, output_padding, dilation : (h, w) pairs, as ``F.conv_transpose2d``'s
    values : "int" or "float"; seed : the seed the inputs are drawn with
    """

    h: int = 2
    w: int = 2
    kh: int = 2
    kw: int = 2
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    output_padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    values: str = "int"
    seed: int = 0

    TUPLES = ("stride", "padding", "output_padding", "dilation")
    COUNTS = ("c_in", "c_out")
    KNOBS = (*_TRANSPOSED_INTS, *_TRANSPOSED_TUPLES, "values")

    c_in = LayerCase.c  # groups·cg
    c_out = LayerCase.f  # groups·fg

    @cached_property
    def spec(self) -> TransposeSpec:
        """The resolved geometry; raises ConvSpecError for an impossible setup."""
        return TransposeSpec.create(
            (self.n, self.c_in, self.h, self.w),
            (self.c_in, self.fg, self.kh, self.kw),
            self.stride,
            self.padding,
            self.output_padding,
            self.dilation,
            self.groups,
        )

    def trace_config(self) -> dict[str, Any] | None:
        """The config of ``convcore.trace`` (and of the page) for this case: the layer
        ``conv_transpose2d``, its tensors as nested lists; None when its output_padding
        is not below the stride (the trace does not take it; the core computes it)."""
        if any(op >= s for op, s in zip(self.output_padding, self.stride)):
            return None
        x, w, b, dout = self.arrays
        config = {"layer": "conv_transpose2d", "x": x.tolist(), "w": w.tolist(), "b": b.tolist(), "dout": dout.tolist()}
        return config | {k: list(v) if isinstance(v, tuple) else v for k, v in self.keywords().items()}

    def keywords(self) -> dict[str, Any]:
        """The keyword arguments of ``conv_transpose2d_forward`` / ``_backward``."""
        return {
            "stride": self.stride,
            "padding": self.padding,
            "output_padding": self.output_padding,
            "groups": self.groups,
            "dilation": self.dilation,
        }

    def input_shapes(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """x: (N, C_in, H, W), w: (C_in, C_out/groups, KH, KW), b: (C_out,)."""
        return (self.n, self.c_in, self.h, self.w), (self.c_in, self.fg, self.kh, self.kw), (self.c_out,)

    @cached_property
    def arrays(self) -> Arrays:
        """x: (N, C_in, H, W), w: (C_in, C_out/groups, KH, KW), b: (C_out,),
        dout: (N, C_out, H_out, W_out)."""
        return Arrays(*drawn_inputs(self.values, self.seed, (*self.input_shapes(), self.spec.out_shape)))

    @cached_property
    def truth(self) -> LayerTruth:
        """y (N, C_out, H_out, W_out), dx (N, C_in, H, W), dw (C_in, C_out/groups, KH, KW),
        db (C_out,) by convcore's vectorised core."""
        x, w, b, dout = self.arrays
        out = conv_transpose2d_forward(x, w, b, **self.keywords())
        return LayerTruth(out, *conv_transpose2d_backward(dout, x, w, b, **self.keywords()))

    def smaller(self, knob: str) -> TransposedCase | None:
        """This case one step smaller along ``knob`` (``KNOBS``), or None at its lowest."""
        return step_down(self, knob, _TRANSPOSED_INTS, _TRANSPOSED_TUPLES)

    def describe(self) -> str:
        """One line: ``N=1 C_in=1 H×W=2×2 C_out=1 KH×KW=3×3 stride 2 padding 1 output_padding 1 …``."""
        parts = [
            f"N={self.n}",
            f"C_in={self.c_in}",
            f"H×W={self.h}×{self.w}",
            f"C_out={self.c_out}",
            f"KH×KW={self.kh}×{self.kw}",
            f"stride {_short(self.stride)}",
            f"padding {_short(self.padding)}",
            f"output_padding {_short(self.output_padding)}",
        ]
        return self._line(parts, _short(self.dilation) if self.dilation != (1, 1) else None)


_CONV1D_INTS = {"n": 1, "cg": 1, "fg": 1, "groups": 1, "length": 1, "k": 1, "stride": 1, "dilation": 1}


@dataclass(frozen=True)
class Conv1dCase(LayerCase):
    """One Conv1d (NCL) and its inputs.

    Attributes
    ----------
    n, cg, fg, groups : as a ``LayerCase``'s (C = groups·cg, F = groups·fg)
    length, k : the input's length L and the kernel's K
    stride, dilation : ints
    padding : an int (on both ends) or "causal" (dilation·(K − 1) on the left only)
    values : "int" or "float"; seed : the seed the inputs are drawn with
    """

    length: int = 3
    k: int = 2
    stride: int = 1
    padding: int | str = 0
    dilation: int = 1
    values: str = "int"
    seed: int = 0

    KNOBS = (*_CONV1D_INTS, "pad", "causal", "values")

    @cached_property
    def spec(self) -> ConvSpec:
        """The resolved geometry (a one-row Conv2d's); raises ConvSpecError for an
        impossible setup."""
        return conv1d_spec((self.n, self.c, self.length), (self.f, self.cg, self.k), **self.keywords())

    def keywords(self) -> dict[str, Any]:
        """The keyword arguments of ``conv1d_forward`` / ``conv1d_backward``."""
        return {"stride": self.stride, "padding": self.padding, "dilation": self.dilation, "groups": self.groups}

    @property
    def out_length(self) -> int:
        return self.spec.out_hw[1]

    def input_shapes(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """x: (N, C, L), w: (F, C/groups, K), b: (F,)."""
        return (self.n, self.c, self.length), (self.f, self.cg, self.k), (self.f,)

    @cached_property
    def arrays(self) -> Arrays:
        """x: (N, C, L), w: (F, C/groups, K), b: (F,), dout: (N, F, L_out)."""
        dout_shape = (self.n, self.f, self.out_length)
        return Arrays(*drawn_inputs(self.values, self.seed, (*self.input_shapes(), dout_shape)))

    @cached_property
    def truth(self) -> LayerTruth:
        """out (N, F, L_out), dx (N, C, L), dw (F, C/groups, K), db (F,) by convcore's core."""
        x, w, b, dout = self.arrays
        out = conv1d_forward(x, w, b, **self.keywords())
        return LayerTruth(out, *conv1d_backward(dout, x, w, b, **self.keywords()))

    def smaller(self, knob: str) -> Conv1dCase | None:
        """This case one step smaller along ``knob`` (``KNOBS``): ``pad`` lowers an int
        padding, ``causal`` makes a causal one none; None at its lowest."""
        if knob == "pad":
            return replace(self, padding=self.padding - 1) if isinstance(self.padding, int) and self.padding else None
        if knob == "causal":
            return replace(self, padding=0) if self.padding == "causal" else None
        return step_down(self, knob, _CONV1D_INTS, {})

    def describe(self) -> str:
        """One line: ``N=1 C=1 L=5 F=1 K=3 stride 2 padding causal (2 on the left) …``."""
        left = self.spec.padding[2]
        padding = f"causal ({left} on the left)" if self.padding == "causal" else str(self.padding)
        parts = [
            f"N={self.n}",
            f"C={self.c}",
            f"L={self.length}",
            f"F={self.f}",
            f"K={self.k}",
            f"stride {self.stride}",
            f"padding {padding}",
        ]
        return self._line(parts, str(self.dilation) if self.dilation != 1 else None)
