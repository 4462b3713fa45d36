"""Which axes each trace tensor has, in which order, and how it is drawn.

The engine computes in NCHW / OIHW internally. Every tensor belongs to a *kind*; the
kind fixes its axis names per layout, the permutation from the internal order to the
order the trace shows (``convcore.layout``'s permutations, NumPy transpose rule) and
the two axes the page draws as a grid (rows, columns). A view that adds a tensor
(im2col's ``cols``) registers its name with a kind in ``TENSOR_KINDS`` (kind
"matrix": 2-D, never permuted).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..layout import NCHW_TO_NHWC, OIHW_TO_HWIO

__all__ = ["KINDS", "TENSOR_KINDS", "TensorKind", "kind_of", "register_tensor"]


class TensorKind:
    """Axis names and permutation of one kind of tensor in one layout.

    Attributes
    ----------
    axes : internal axis names, e.g. ("n", "c", "h", "w")
    nhwc_perm : internal -> NHWC/HWIO permutation (None: the same in both layouts)
    grid : (row axis or None, column axis) by name
    """

    def __init__(self, axes: Sequence[str], nhwc_perm: Sequence[int] | None, grid: tuple[str | None, str]):
        self.axes = tuple(axes)
        self.nhwc_perm = tuple(nhwc_perm) if nhwc_perm is not None else None
        self.grid = grid

    def perm(self, layout: str) -> tuple[int, ...] | None:
        """The permutation from internal to ``layout`` order; None when it is the identity."""
        if layout == "NHWC" and self.nhwc_perm is not None:
            return self.nhwc_perm
        return None

    def axes_in(self, layout: str) -> list[str]:
        p = self.perm(layout)
        return [self.axes[i] for i in p] if p else list(self.axes)

    def axis_facts(self, layout: str) -> dict[str, list]:
        """The header's axis fields of a tensor of this kind in ``layout``: ``axes``,
        ``grid``, and ``slice_axes`` when the slices are not drawn in axis order.

        A page draws one slice per combination of the axes outside the grid, the
        internal order's outermost first: one filter's channels stand together in HWIO
        (kh, kw, c, f) as in OIHW, so ``slice_axes`` is ["f", "c"] there."""
        axes = self.axes_in(layout)
        facts: dict[str, list] = {"axes": axes, "grid": list(self.grid)}
        drawn = [a for a in self.axes if a not in self.grid]
        if drawn != [a for a in axes if a not in self.grid]:
            facts["slice_axes"] = drawn
        return facts


KINDS: dict[str, TensorKind] = {
    "image": TensorKind(("n", "c", "h", "w"), NCHW_TO_NHWC, ("h", "w")),
    "filter": TensorKind(("f", "c", "kh", "kw"), OIHW_TO_HWIO, ("kh", "kw")),
    "bias": TensorKind(("f",), None, (None, "f")),
    "output": TensorKind(("n", "f", "h", "w"), NCHW_TO_NHWC, ("h", "w")),
    "matrix": TensorKind(("row", "col"), None, ("row", "col")),
}

TENSOR_KINDS: dict[str, str] = {
    "x": "image",
    "xp": "image",
    "dx": "image",
    "dxp": "image",
    "w": "filter",
    "dw": "filter",
    "w_given": "filter",
    "dw_given": "filter",
    "wf": "filter",
    "dwf": "filter",
    "b": "bias",
    "db": "bias",
    "z": "output",
    "out": "output",
    "dout": "output",
    "dz": "output",
    "cols": "matrix",
    "overlaps": "matrix",
    "dcols": "matrix",
}


def register_tensor(name: str, kind: str) -> None:
    """Declare a view's new tensor name as one of ``KINDS``."""
    if kind not in KINDS:
        raise ValueError(f"unknown tensor kind {kind!r}; kinds: {', '.join(KINDS)}")
    TENSOR_KINDS[name] = kind


def kind_of(name: str) -> TensorKind:
    return KINDS[TENSOR_KINDS[name]]
