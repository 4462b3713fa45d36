"""How a page draws each tensor of a trace: the header's drawing facts.

``tensor_drawing(name, spec)`` gives the fields the header adds to a tensor beside its
shape, data, axes, grid and role, so that a page needs no table of tensor names and
recomputes no geometry:

``title``   what the tensor is, in words ("padded input")
``group``   where it belongs in the data flow: "inputs", "forward" or "backward"
``order``   its place in drawing order (smaller first; a number, x.5 for a tensor
            drawn between two others: ``DRAWN_AFTER``)
``detail``  (when there is more to say) a longer help text, e.g. what a matrix's rows are
``gradient_of``  (gradients only) the tensor this one is the gradient of ("xp" for dxp):
            a reader of a step's factors leaves it out (dxp += dz·w reads xp too)
``added``   (the bias only) true: the tensor is added to a sum, never multiplied
``marks``   (padded, dilated, strided past the kernel and floor-truncated tensors only)
            one string per row of the tensor's grid (its two ``grid`` axes), one
            character per cell, the same for every slice: ``.`` an ordinary cell, ``p``
            padding (zero by definition, never written), ``g`` padding that receives
            gradient (cropped away at the end), ``z`` an inserted zero (zero by
            definition, never written), ``u`` an input cell no window reads (x, xp),
            ``n`` its gradient cell (dx, dxp): never reached by a window, so no window
            adds to it and its gradient is exactly 0 from the start (stride gaps,
            floor-truncated rows and columns); with a padding mode that copies
            (reflect, replicate, circular) ``c`` padding that copies an input cell
            (xp) and ``f`` padding whose gradient folds back onto that cell (dxp); in
            a transposed layer's stamps (``transpose_layer``) ``k`` the border its
            padding crops away and ``o`` a cell no stamp reaches

A view that names a new tensor registers its facts with ``register_drawing``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..spec import ConvSpec

__all__ = ["DRAWINGS", "GRADIENT_OF", "MARK_KINDS", "register_drawing", "tensor_drawing"]

MARK_KINDS: dict[str, str] = {
    "p": "padding",
    "g": "padding (receives gradient, cropped away)",
    "z": "inserted zero",
    "u": "never read",
    "n": "never reached by a window (its gradient is exactly 0)",
    "c": "padding copied from an input cell",
    "f": "padding (its gradient folds back onto the cell it copied)",
    "k": "cropped away by padding (stamped, then trimmed)",
    "o": "no stamp reaches it (its value is the bias alone)",
}

# name -> (title, group, detail); the order of this table is the drawing order
DRAWINGS: dict[str, tuple[str, str, str]] = {
    "x": ("input", "inputs", ""),
    "xp": ("padded input", "inputs", ""),
    "w": ("filters", "inputs", ""),
    "b": ("bias", "inputs", ""),
    "cols": (
        "im2col columns",
        "forward",
        "one column per output position (n, i, j); one row per input value a window reads (c, kh, kw)",
    ),
    "z": ("pre-activation", "forward", ""),
    "out": ("output", "forward", ""),
    "dout": ("upstream gradient", "backward", ""),
    "dz": ("gradient at z", "backward", ""),
    "db": ("bias gradient", "backward", ""),
    "dw": ("filter gradient", "backward", ""),
    "dcols": (
        "gradient of the columns",
        "backward",
        "Wᵀ·dZ: the gradient of every column entry; col2im adds it back into dxp",
    ),
    "dz_dilated": (
        "dz dilated: stride−1 zeros between cells, padded for a full correlation",
        "backward",
        "dz with stride−1 zero rows and columns between its cells, framed by kernel−1 zeros: "
        "sliding the rotated kernel over it gives dX (hatched cells are inserted zeros)",
    ),
    "w_rot": ("w rotated 180°", "backward", "each kernel slice turned by 180°: w_rot[f,c,k,l] = w[f,c,KH−1−k,KW−1−l]"),
    "dxp": ("gradient of the padded input", "backward", ""),
    "dx": ("input gradient", "backward", ""),
}

# tensors drawn between two of DRAWINGS's: name -> (title, group, detail, the tensor
# drawn just before it). Their ``order`` is that tensor's plus a half, so that adding
# them changed the order of no tensor (every trace without them is as it was).
DRAWN_AFTER: dict[str, tuple[str, str, str, str]] = {
    "wf": (
        "filters turned 180°",
        "forward",
        "a true convolution flips the kernel: wf[f,c,k,l] = w[f,c,KH−1−k,KW−1−l]; the steps slide wf",
        "b",
    ),
    "dwf": ("gradient of the turned filters", "backward", "what the steps gather for wf; turned back, it is dw", "db"),
}


# a gradient -> the tensor it is the gradient of
# the tensors added to a sum, never multiplied
ADDED = frozenset({"b"})
GRADIENT_OF: dict[str, str] = {
    "dout": "out",
    "dz": "z",
    "db": "b",
    "dw": "w",
    "dwf": "wf",
    "dcols": "cols",
    "dxp": "xp",
    "dx": "x",
}


def register_drawing(name: str, title: str, group: str, detail: str = "") -> None:
    """Declare how a view's new tensor is drawn (after every tensor known so far)."""
    if group not in ("inputs", "forward", "backward"):
        raise ValueError(f"group must be inputs, forward or backward; got {group!r}")
    DRAWINGS[name] = (title, group, detail)


def _read_lines(n_out: int, stride: int, dilation: int, k: int, size: int) -> np.ndarray:
    """read: (size,) bool, the padded rows (or columns) some window reads."""
    read = np.zeros(size, dtype=bool)
    taps = np.add.outer(np.arange(n_out) * stride, np.arange(k) * dilation).ravel()
    read[taps[taps < size]] = True
    return read


def _rows(chars: np.ndarray) -> list[str]:
    """chars: (rows, cols) of one-character strings -> one string per row."""
    return ["".join(r) for r in chars]


def _padded_marks(spec: ConvSpec, pad_char: str, unread_char: str) -> np.ndarray:
    """(Hp, Wp) marks of xp (pad_char "p", unread_char "u") or dxp ("g", "n"): padding,
    then the cells no window reads."""
    (hp, wp), (ho, wo) = spec.padded_hw, spec.out_hw
    top, bottom, left, right = spec.padding
    rows = _read_lines(ho, spec.stride[0], spec.dilation[0], spec.KH, hp)
    cols = _read_lines(wo, spec.stride[1], spec.dilation[1], spec.KW, wp)
    marks = np.full((hp, wp), ".", dtype="<U1")
    marks[~np.logical_and.outer(rows, cols)] = unread_char
    pad = np.ones((hp, wp), dtype=bool)
    pad[top : hp - bottom, left : wp - right] = False
    marks[pad] = pad_char
    return marks


def _marks(name: str, spec: ConvSpec, padding_mode: str = "zeros") -> list[str] | None:
    if name in ("xp", "dxp"):
        pad_char = ("p", "g") if padding_mode == "zeros" else ("c", "f")
        return _rows(_padded_marks(spec, *((pad_char[0], "u") if name == "xp" else (pad_char[1], "n"))))
    if name in ("x", "dx"):
        top, bottom, left, right = spec.padding
        hp, wp = spec.padded_hw
        unread = "u" if name == "x" else "n"
        inner = _padded_marks(spec, "p", unread)[top : hp - bottom, left : wp - right]
        return _rows(inner) if (inner == unread).any() else None
    if name == "dz_dilated":
        (hp, wp), (eh, ew), (ho, wo) = spec.padded_hw, spec.kernel_extent, spec.out_hw
        marks = np.full((hp + eh - 1, wp + ew - 1), "z", dtype="<U1")
        marks[
            eh - 1 : eh - 1 + (ho - 1) * spec.stride[0] + 1 : spec.stride[0],
            ew - 1 : ew - 1 + (wo - 1) * spec.stride[1] + 1 : spec.stride[1],
        ] = "."
        return _rows(marks)
    return None


def tensor_drawing(name: str, spec: ConvSpec, padding_mode: str = "zeros") -> dict[str, Any]:
    """The drawing facts of tensor ``name`` of a trace over ``spec`` with ``padding_mode``
    (module notes)."""
    names = list(DRAWINGS)
    if name in DRAWN_AFTER:
        title, group, detail, before = DRAWN_AFTER[name]
        order: float = names.index(before) + 0.5
    else:
        title, group, detail = DRAWINGS.get(name, (name, "backward", ""))
        order = names.index(name) if name in names else len(names)
    facts: dict[str, Any] = {"title": title, "group": group, "order": order}
    if detail:
        facts["detail"] = detail
    if name in GRADIENT_OF:
        facts["gradient_of"] = GRADIENT_OF[name]
    if name in ADDED:
        facts["added"] = True
    marks = _marks(name, spec, padding_mode)
    if marks is not None:
        facts["marks"] = marks
    return facts
