"""Which axes each trace tensor has, in which order, and how it is drawn.

The engine computes in NCHW / OIHW internally. Every tensor belongs to a *kind*; the
kind fixes its axis names per layout, the permutation from the internal order to the
order the trace shows (``convcore.layout``'s permutations, NumPy transpose rule) and
the two axes the page draws as a grid (rows, columns). A view that adds a tensor
(im2col's ``cols``) registers its name with a kind in ``TENSOR_KINDS`` (kind
"matrix": 2-D, never permuted).

Sequences. A Conv1d trace (layouts "NCL" and "NLC") computes on one-row images, H = 1
(``convcore.conv1d``); its permutations leave the row axis out, so every index list,
shape and block the trace shows has three axes: (n, c, l), (f, c, k) in NCL, (n, l, c),
(k, c, f) in NLC. A dropped axis always has one cell (``in_layout``, ``to_internal``). Each slice of a
sequence is drawn as one row: its grid is (None, "l").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..layout import NCHW_TO_NHWC, OIHW_TO_HWIO, inverse_permutation

__all__ = [
    "KINDS",
    "SEQUENCE_LAYOUTS",
    "TENSOR_KINDS",
    "TensorKind",
    "full_permutation",
    "in_layout",
    "kind_of",
    "to_internal",
    "register_tensor",
]

SEQUENCE_LAYOUTS = ("NCL", "NLC")
_SEQUENCE_AXES = {"w": "l", "kw": "k"}  # a sequence's axis names (its h and kh are dropped)


class TensorKind:
    """Axis names and permutation of one kind of tensor in one layout.

    Attributes
    ----------
    axes : internal axis names, e.g. ("n", "c", "h", "w")
    nhwc_perm : internal -> NHWC/HWIO permutation (None: the same in both layouts)
    grid : (row axis or None, column axis) by name
    sequence_perms : {"NCL": perm, "NLC": perm}: internal -> a sequence layout, the row
        axis left out (None: the kind has no row axis, the same in every layout)
    """

    def __init__(
        self,
        axes: Sequence[str],
        nhwc_perm: Sequence[int] | None,
        grid: tuple[str | None, str],
        sequence_perms: dict[str, tuple[int, ...]] | None = None,
    ):
        self.axes = tuple(axes)
        self.nhwc_perm = tuple(nhwc_perm) if nhwc_perm is not None else None
        self.grid = grid
        self.sequence_perms = sequence_perms

    def perm(self, layout: str) -> tuple[int, ...] | None:
        """The permutation from internal to ``layout`` order (shorter than the axes when
        ``layout`` drops the row axis); None when it is the identity."""
        if layout == "NHWC" and self.nhwc_perm is not None:
            return self.nhwc_perm
        if layout in SEQUENCE_LAYOUTS and self.sequence_perms is not None:
            return self.sequence_perms[layout]
        return None

    def _names(self, layout: str) -> tuple[str, ...]:
        if layout in SEQUENCE_LAYOUTS and self.sequence_perms is not None:
            return tuple(_SEQUENCE_AXES.get(a, a) for a in self.axes)
        return self.axes

    def axes_in(self, layout: str) -> list[str]:
        p, names = self.perm(layout), self._names(layout)
        return [names[i] for i in p] if p else list(names)

    def grid_in(self, layout: str) -> tuple[str | None, str]:
        """The grid's (row, column) axis names in ``layout`` (a sequence: one row)."""
        if layout in SEQUENCE_LAYOUTS and self.sequence_perms is not None:
            return (None, _SEQUENCE_AXES[self.grid[1]])
        return self.grid

    def axis_facts(self, layout: str) -> dict[str, list]:
        """The header's axis fields of a tensor of this kind in ``layout``: ``axes``,
        ``grid``, and ``slice_axes`` when the slices are not drawn in axis order.

        A page draws one slice per combination of the axes outside the grid, the
        internal order's outermost first: one filter's channels stand together in HWIO
        (kh, kw, c, f) as in OIHW, so ``slice_axes`` is ["f", "c"] there."""
        axes, grid = self.axes_in(layout), self.grid_in(layout)
        shown = set(axes)
        facts: dict[str, list] = {"axes": axes, "grid": list(grid)}
        drawn = [a for a in self._names(layout) if a not in grid and a in shown]
        if drawn != [a for a in axes if a not in grid]:
            facts["slice_axes"] = drawn
        return facts


_SEQUENCE_PERMS = {"NCL": (0, 1, 3), "NLC": (0, 3, 1)}  # (n, c, l), (n, l, c)

KINDS: dict[str, TensorKind] = {
    "image": TensorKind(("n", "c", "h", "w"), NCHW_TO_NHWC, ("h", "w"), _SEQUENCE_PERMS),
    "filter": TensorKind(("f", "c", "kh", "kw"), OIHW_TO_HWIO, ("kh", "kw"), {"NCL": (0, 1, 3), "NLC": (3, 1, 0)}),
    "bias": TensorKind(("f",), None, (None, "f")),
    "output": TensorKind(("n", "f", "h", "w"), NCHW_TO_NHWC, ("h", "w"), _SEQUENCE_PERMS),
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


def full_permutation(perm: Sequence[int], ndim: int) -> list[int]:
    """``perm`` with the axes it leaves out appended (each has one cell): a transpose of
    an ``ndim``-axis array whose row-major order is ``perm``'s."""
    return list(perm) + [a for a in range(ndim) if a not in perm]


def in_layout(arr: np.ndarray, perm: Sequence[int] | None) -> np.ndarray:
    """``arr`` (internal order) in the order of ``perm`` (``TensorKind.perm``), the axes
    it leaves out dropped (each has one cell)."""
    if not perm:
        return arr
    if len(perm) == arr.ndim:
        return arr.transpose(perm)
    moved = arr.transpose(full_permutation(perm, arr.ndim))
    return moved.reshape(moved.shape[: len(perm)])


def to_internal(arr: np.ndarray, perm: Sequence[int] | None, shape: Sequence[int]) -> np.ndarray:
    """``in_layout`` undone: ``arr`` in the order of ``perm`` -> the internal array of
    ``shape`` (the axes ``perm`` leaves out restored, one cell each)."""
    if not perm:
        return arr
    full = full_permutation(perm, len(shape))
    return arr.reshape([shape[p] for p in full]).transpose(inverse_permutation(full))
