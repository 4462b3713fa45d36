"""The steps of a naive conv layer, one overridable method each: the parameters of the
plain loops (``convcore.mistakes.plain_loops.PlainLoops``), which a mistake
(``convcore.mistakes.in_cs231n``, ``in_layer``, ``in_torch``) changes one of, and
``LoopInputs``, what the loops read.

Geometry steps (``pads``, ``out_hw``, ``backward_hw``, ``images``) read the spec alone,
so that the cost can be known before anything runs; value steps take the arrays a loop
iteration works on, in internal order (NCHW / OIHW), and compute as the code does; the
``*_words`` say the step in a step's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..activations import Activation, get_activation
from ..spec import ConvSpec

__all__ = ["LoopInputs", "PlainSteps", "clamped"]


@dataclass(frozen=True, eq=False)
class LoopInputs:
    """What the plain loops read, as a trace's ResolvedConfig holds it (which the lab
    passes instead).

    Attributes
    ----------
    spec : ConvSpec (NCHW / OIHW geometry)
    x : (N, C, H, W)
    w : (F, C/groups, KH, KW)
    b : (F,) or None (no bias)
    dout : (N, F, Ho, Wo), or None until a layer's backward receives it
    activation : convcore.activations.Activation
    layout : the order of the axes the events' boxes name ("NCHW" or "NHWC")
    padding_mode, flip : as a ResolvedConfig's; the plain loops pad with zeros and
        correlate, so always "zeros" and False (the trace context reads them)
    """

    spec: ConvSpec
    x: np.ndarray
    w: np.ndarray
    b: np.ndarray | None
    dout: np.ndarray | None
    activation: Activation = get_activation("identity")
    layout: str = "NCHW"
    padding_mode: str = "zeros"
    flip: bool = False


def clamped(sl: slice, size: int) -> tuple[int, int, int]:
    """start, stop, step of ``sl`` on an axis of ``size`` cells, as NumPy clamps it
    (an empty slice has stop = start)."""
    start, stop, step = sl.indices(size)
    return start, max(start, stop), step


class PlainSteps:
    """The steps of a correct naive conv layer.

    Parameters
    ----------
    rc : LoopInputs, or a ResolvedConfig (``convcore.trace.config``): x (N, C, H, W),
        w (F, C/groups, KH, KW), b (F,), dout (N, F, Ho, Wo), the geometry and the
        activation
    convention : "cs231n", "layer" or "torch": whose loops these are
    """

    def __init__(self, rc: Any, convention: str):
        self.rc, self.spec, self.convention = rc, rc.spec, convention

    @classmethod
    def for_geometry(cls, spec: ConvSpec, convention: str) -> PlainSteps:
        """Steps that only the geometry steps may be asked of (no arrays)."""
        return cls(LoopInputs(spec, None, None, None, None), convention)

    # -- geometry steps (from the spec alone; the cost reads them) --------------------

    def pads(self) -> tuple[int, int, int, int]:
        """The (top, bottom, left, right) zeros put around x."""
        return tuple(self.spec.padding)

    def out_hw(self) -> tuple[int, int]:
        """The output rows and columns the forward loops run over."""
        return tuple(self.spec.out_hw)

    def backward_hw(self) -> tuple[int, int]:
        """The positions the backward loops run over: the layer recomputes its output
        size, the others read it from dout's shape."""
        return self.out_hw() if self.convention == "layer" else tuple(self.spec.out_hw)

    def images(self) -> range:
        """The images the forward loops run over."""
        return range(self.spec.N)

    # -- value steps ------------------------------------------------------------------

    def origin(self, i: int, stride: int) -> int:
        """Row (column) of xp where output row (column) i's window starts."""
        return i * stride

    def column_origin(self, j: int, stride: int) -> int:
        """Column of xp where output column j's window starts (``origin``, unless the
        code strides its rows and columns apart)."""
        return self.origin(j, stride)

    def channels(self, f: int) -> slice:
        """The input channels filter f reads: those of its group."""
        cg = self.spec.channels_per_group
        g = f // self.spec.filters_per_group
        return slice(g * cg, (g + 1) * cg)

    def window(
        self, xp: np.ndarray, n: int, f: int, r: int, c: int, dilation: tuple[int, int]
    ) -> tuple[tuple, tuple, tuple, np.ndarray]:
        """The receptive field of filter f at (r, c) on xp: (N, C, Hp, Wp) -> its Box's
        start, stop, step (internal order, clamped as NumPy slices) and its cells
        (C/groups, KH', KW')."""
        (dh, dw), (kh, kw) = dilation, (self.spec.KH, self.spec.KW)
        slices = (self.channels(f), slice(r, r + dh * (kh - 1) + 1, dh), slice(c, c + dw * (kw - 1) + 1, dw))
        parts = [(n, n + 1, 1)] + [clamped(s, size) for s, size in zip(slices, xp.shape[1:])]
        start, stop, step = zip(*parts)
        return start, stop, step, xp[(n, *slices)]

    def forward_window(self, xp: np.ndarray, n: int, f: int, r: int, c: int) -> tuple[tuple, tuple, tuple, np.ndarray]:
        """The window the forward pass reads (``window`` with the layer's dilation)."""
        return self.window(xp, n, f, r, c, tuple(self.spec.dilation))

    def kernel(self, w: np.ndarray, f: int) -> np.ndarray:
        """w: (F, C/groups, KH, KW) -> the kernel of filter f the forward pass reads."""
        return w[f]

    def forward_kernel(self, kernel: np.ndarray) -> np.ndarray:
        """The kernel as the forward pass multiplies a window with it."""
        return kernel

    def bias(self, b: np.ndarray, f: int) -> float:
        return b[f]

    def bias_words(self, f: int) -> str:
        """The bias term as the forward step's text says it ("" when none is added)."""
        return f" + b[{f}]"

    def kernel_words(self, f: int) -> str:
        """The kernel as the forward step's text says it."""
        return f"w[{f}]"

    dz_words = "dout·f′(z)"
    dw_words = ""  # what dw_window does to the window, for the text

    def dz(self, z: np.ndarray, out: np.ndarray, dout: np.ndarray) -> np.ndarray:
        """dz: dout·f'(z) for the layer (z, out: its forward's, dout: (N, F, Ho, Wo));
        dout itself for code without an activation."""
        if self.convention == "layer":
            return self.rc.activation.backward(z, dout)
        return np.array(dout, dtype=np.float64)

    db_words = "Σ dz over n, i, j"

    def db(self, dz: np.ndarray) -> np.ndarray:
        """dz: (N, F, Ho, Wo) -> db: (F,)."""
        return dz.sum(axis=(0, 2, 3))

    def backward_dilation(self) -> tuple[int, int]:
        return tuple(self.spec.dilation)

    def dw_window(self, window: np.ndarray) -> np.ndarray:
        """The window (C/groups, KH, KW) that dz scales into dw[f]."""
        return window

    assign_dx = False  # dxp[window] = … instead of +=
    assign_dw = False  # dw[f] = … instead of +=
    unwritten: tuple[str, ...] = ()  # "dx", "dw": the backward loop never adds into them (left unfinished)
    left_none: tuple[str, ...] = ()  # results returned as None (the assignment's `dx, dw, db = None, None, None`)
    dx_by_rotation = False  # dxp by a gather over dz and the rotated kernel (``dx_gather``)
    # the mistake in the code beside its steps: (text, replacement) pairs applied to the lines
    # of the lab's correct listing (``convcore.mistakes.listing``); () where none is written
    listing_change: tuple[tuple[str, str], ...] = ()

    def crop(self, h: int, w: int) -> tuple[slice, slice]:
        """The rows and columns of dxp that dx keeps (by the padding the code was given)."""
        top, _, left, _ = self.spec.padding
        return slice(top, top + h), slice(left, left + w)

    def full_dz(self, dz: np.ndarray) -> np.ndarray:
        """dz: (N, F, Ho, Wo) as the full correlation reads it: stride − 1 zeros between
        its cells, framed by KH − 1 (KW − 1) zeros."""
        (sh, sw), kh, kw = self.spec.stride, self.spec.KH, self.spec.KW
        n, f, ho, wo = dz.shape
        dilated = np.zeros((n, f, (ho - 1) * sh + 1, (wo - 1) * sw + 1))
        dilated[:, :, ::sh, ::sw] = dz
        return np.pad(dilated, ((0, 0), (0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1)))
