"""Numbers and indices as the step text prints them.

Integers print without ".0", negatives with the real minus sign (−2), other numbers
with six significant digits (``convcore.fill.format_number``, the one number format of
ConvScope). A factor in a product is parenthesised when negative: ``0.5·(−2)``.
Index text is in the tensor's own axis order (NHWC when the config says so):
``z[0,1,0,2]``; a Box prints as NumPy slices, ``xp[0,0:3,0:5:2,4:7]``, dropping
trailing axes it covers whole (``w[1]`` is the whole filter 1).

How much a text spells out: a row of at most ``LIST_LIMIT`` values is listed
(``= [0, 3, −1]``), a sum of at most ``EXPAND_LIMIT`` products is written out
(``3·0 + 4·1 + 6·2``, ``products``); longer ones are named (``Σ xp[…]·w[0]``).

The hot loops call ``number``/``factor`` per event; both are cached by value (floats
of small traces repeat a lot), and the cache is bounded so memory stays flat.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..fill import format_number

__all__ = [
    "DEAD_WINDOW",
    "EXPAND_LIMIT",
    "LIST_LIMIT",
    "number",
    "number_list",
    "factor",
    "factor_list",
    "numbers",
    "products",
    "row_slices",
    "cell",
    "cell_names",
    "box_text",
    "box_slices",
]

LIST_LIMIT = 8  # values a text lists
EXPAND_LIMIT = 9  # products a text writes out
# what a backward window step says when its dz is exactly 0 (its writes all add 0)
DEAD_WINDOW = "nothing flows back through this window"

_CACHE_LIMIT = 1 << 12
_numbers: dict[float, str] = {}
_factors: dict[float, str] = {}


def number(v: float) -> str:
    """``4``, ``−2``, ``0.5``: a value as the text prints it."""
    s = _numbers.get(v)
    if s is None:
        if len(_numbers) >= _CACHE_LIMIT:
            _numbers.clear()
        s = _numbers[v] = format_number(float(v))
    return s


def factor(v: float) -> str:
    """A value as a factor of a product: negatives in parentheses, ``(−2)``."""
    s = _factors.get(v)
    if s is None:
        if len(_factors) >= _CACHE_LIMIT:
            _factors.clear()
        t = number(v)
        s = _factors[v] = f"({t})" if t.startswith("−") else t
    return s


def number_list(values: Sequence[float] | np.ndarray) -> list[str]:
    """``number`` of every value, formatted in bulk (one C-level format call): the same
    strings as ``number``, ~10× faster for values that are not cached."""
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size == 0:
        return []
    joined = ("%g\x00" * arr.size) % tuple(arr.tolist())
    out = joined.replace("-", "−").split("\x00")[:-1]
    # "%g" keeps 6 significant digits; format_number prints integers below 1e15 whole,
    # and −0 as 0
    magnitude = np.abs(arr)
    fix = ((magnitude >= 1e6) & (magnitude < 1e15) & (arr == np.floor(arr))) | ((arr == 0) & np.signbit(arr))
    for k in np.flatnonzero(fix).tolist():
        out[k] = number(arr[k].item())
    return out


def factor_list(strings: list[str]) -> list[str]:
    """Numbers (from ``number_list``) as product factors: negatives in parentheses."""
    return [f"({s})" if s[0] == "−" else s for s in strings]


def numbers(values: Sequence[float]) -> str:
    """``[0, 3, −1]``."""
    return "[" + ", ".join(number(v) for v in values) + "]"


def products(a: Sequence[float], b: Sequence[float]) -> str:
    """``3·0 + 4·1 + (−1)·2``: the products of a and b, pairwise, as a sum."""
    return factor_products(map(factor, a), map(factor, b))


def factor_products(a: Iterable[str], b: Iterable[str]) -> str:
    """products() of numbers already written as factors (``factor``): a column's
    factors made once serve every event that reads it."""
    return " + ".join(f"{u}·{v}" for u, v in zip(a, b))


def cell(name: str, index: Sequence[int]) -> str:
    """``z[0,1,0,2]``."""
    return f"{name}[{','.join(map(str, index))}]"


def cell_names(name: str, index: np.ndarray) -> list[str]:
    """``z[0,1,0,2]`` for every row of ``index`` (int array (cells, ndim), the tensor's
    axis order), formatted in bulk (one C-level format call)."""
    if index.size == 0:
        return [f"{name}[]"] * len(index)
    template = name.replace("%", "%%") + "[" + ",".join(["%d"] * index.shape[1]) + "]\x00"
    return ((template * len(index)) % tuple(index.ravel().tolist())).split("\x00")[:-1]


def box_text(
    name: str,
    start: Sequence[int],
    stop: Sequence[int],
    step: Sequence[int],
    shape: Sequence[int],
) -> str:
    """A Box as NumPy slices of ``name`` (all sequences in the tensor's axis order).

    An axis with one cell prints its index, others ``a:b`` or ``a:b:s``; trailing axes
    the Box covers whole are dropped (``w[1]``) unless the Box is a single cell, and a
    Box covering the whole tensor prints as the bare name.
    """
    return name + box_slices(start, stop, step, shape)


def row_slices(
    starts: Sequence[Sequence[int]],
    stops: Sequence[Sequence[int]],
    step: Sequence[int],
    shape: Sequence[int],
    axis: int | None,
) -> list[str]:
    """``box_slices`` of Boxes that differ only in their one index on ``axis`` (the rows
    of a slice), formatted from one template: that axis is one cell wide and, unless the
    tensor has a single cell on it, never a whole axis, so it always prints, as its
    index, and the other axes print alike for every Box (``axis`` None: the Boxes'
    tensor shows no row axis, a sequence's)."""
    if not starts or axis is None or shape[axis] == 1:
        return [box_slices(a, b, step, shape) for a, b in zip(starts, stops)]
    parts = box_slices(starts[0], stops[0], step, shape)[1:-1].split(",")
    parts[axis] = "%d"
    template = "[" + ",".join(parts) + "]"  # the other parts are digits and colons
    return [template % a[axis] for a in starts]


def box_slices(start: Sequence[int], stop: Sequence[int], step: Sequence[int], shape: Sequence[int]) -> str:
    """The bracket part of ``box_text``: ``[0,0:3,0:3,4:7]``, or "" for a whole tensor."""
    parts = []
    multi = False  # more than one cell
    for a, b, s in zip(start, stop, step):
        if b - a <= s:
            parts.append(str(a))
        else:
            multi = True
            parts.append(f"{a}:{b}" if s == 1 else f"{a}:{b}:{s}")
    keep = len(parts)
    if multi:
        floor = 1 if stop[0] - start[0] <= step[0] else 0  # keep a single first index: w[0]
        while keep > floor and start[keep - 1] == 0 and stop[keep - 1] == shape[keep - 1] and step[keep - 1] == 1:
            keep -= 1
    if keep == 0:
        return ""
    return f"[{','.join(parts[:keep])}]"
