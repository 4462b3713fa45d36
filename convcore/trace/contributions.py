"""Any cell's story: which events wrote it, what each added, and from which factors.

``contributions(doc, tensor, index)`` reads a trace document (as ``build_trace``
returns it, or the same decoded from JSON) and lists, in event order, every write that
reached one cell::

    [{"event": 812, "phase": "backward", "delta": -2.0, "value": -2.0,
      "factors": [{"tensor": "dz", "index": [0, 1, 1, 1], "value": -2.0},
                  {"tensor": "w", "index": [1, 0, 0, 2], "value": 1.0}]}, ...]

``event`` is the event's position in ``doc["events"]``, ``delta`` what it added to the
cell, ``value`` the cell after it; replaying the deltas from zero gives the cell's value
(the replay rule), so they sum to it. ``factors`` are the read cells whose product is
the delta, where the event's reads show them (a window sending dz back: dz and the
filter tap, ``delta = dz·w``; a MAC: its two cells, plus ``b[f]`` on a bias MAC; db: the
dz cell itself); an event that writes a whole sum (a forward window, an im2col matrix
cell) has none.

``dx`` follows the gradient back through the crop: its contributions are those of the
cell of ``dxp`` it was cropped from (the windows, taps or columns that wrote it), not the
one crop step that copied it. Without padding there is no crop: the windows write dx
itself. A padding mode that copies folds dxp onto dx (several cells into one): there
the fold step is dx's story. A name the header lists under ``aliases`` (``xp`` for ``x`` without padding,
``z`` for ``out`` with the identity, …) is read as the tensor that stands for it. An
input tensor (no event writes it) has none.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..messages import shorten
from .model import Box

__all__ = ["contributions"]


def _tensor(doc: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    tensors = doc.get("tensors") if isinstance(doc, Mapping) else None
    if not isinstance(tensors, Mapping) or "events" not in doc:
        raise ValueError("contributions needs a trace document with 'tensors' and 'events' (build_trace's)")
    if name not in tensors:
        raise ValueError(f"tensor {shorten(name)} is not in the trace; it has {', '.join(tensors)}")
    return tensors[name]


def _checked_index(meta: Mapping[str, Any], name: str, index: Sequence[int]) -> tuple[int, ...]:
    shape = list(meta["shape"])
    try:
        cell = tuple(int(i) for i in index)
    except (TypeError, ValueError):
        raise ValueError(
            f"index must be {len(shape)} integers for {name} {tuple(shape)}, got {shorten(index)}"
        ) from None
    if len(cell) != len(shape) or any(not 0 <= i < s for i, s in zip(cell, shape)):
        raise ValueError(
            f"index {shorten(cell)} is outside {name}, whose shape is {tuple(shape)} (axes {', '.join(meta['axes'])})"
        )
    return cell


def _offset(box: Mapping[str, Any], cell: Sequence[int]) -> int | None:
    """The row-major position of ``cell`` among the Box's cells, None if not in it."""
    offset = 0
    for i, a, b, s in zip(cell, box["start"], box["stop"], box["step"]):
        if not (a <= i < b) or (i - a) % s:
            return None
        offset = offset * len(range(a, b, s)) + (i - a) // s
    return offset


def _cell_at(box: Box, offset: int) -> list[int]:
    """The index of the ``offset``-th cell (row-major) of a Box."""
    counts = [len(range(a, b, s)) for a, b, s in zip(box["start"], box["stop"], box["step"])]
    steps = np.unravel_index(offset, counts)
    return [int(a + s * k) for a, s, k in zip(box["start"], box["step"], steps)]


def _value(doc: Mapping[str, Any], name: str, cell: Sequence[int]) -> float:
    meta = doc["tensors"][name]
    flat = int(np.ravel_multi_index(tuple(cell), tuple(meta["shape"])))
    return float(meta["data"][flat])


def _cell_count(box: Box) -> int:
    return math.prod(len(range(a, b, s)) for a, b, s in zip(box["start"], box["stop"], box["step"]))


def _factors(
    doc: Mapping[str, Any], reads: Sequence[Box], target: str, size: int, offset: int, delta: float
) -> list[dict] | None:
    """The read cells whose product (plus a bias, on a bias MAC) is ``delta``: a one-cell
    read is a scalar factor, a read of the write's size gives the cell at the same
    position. The tensor whose gradient ``target`` is (xp for dxp) is not a factor of
    it."""
    meta = doc["tensors"][target]
    # (a header without the drawing fact: a gradient is named d + what it is the gradient of)
    skip = meta.get("gradient_of", target[1:] if target.startswith("d") else None)
    found = []
    for box in reads:
        if box["tensor"] == skip:
            continue
        cells = _cell_count(box)
        if cells == 1 or cells == size:
            cell = _cell_at(box, 0 if cells == 1 else offset)
            found.append({"tensor": box["tensor"], "index": cell, "value": _value(doc, box["tensor"], cell)})
    # the bias is added, never multiplied (the header's drawing fact ``added``)
    added = {n for n, t in doc["tensors"].items() if t.get("added", n == "b")}
    bias = [f for f in found if f["tensor"] in added]
    others = [f for f in found if f["tensor"] not in added]
    if len(others) == 1 and others[0]["value"] == delta:
        return others
    for k, a in enumerate(others):
        for b in others[k + 1 :]:
            if a["value"] * b["value"] == delta:
                return [a, b]
            if bias and a["value"] * b["value"] + bias[0]["value"] == delta:
                return [a, b, bias[0]]
    return None


def _writes_to(doc: Mapping[str, Any], name: str, cell: tuple[int, ...]) -> Iterator[dict]:
    for k, event in enumerate(doc["events"]):
        for write in event["writes"]:
            if write["tensor"] != name:
                continue
            offset = _offset(write, cell)
            if offset is None:
                continue
            delta = float(write["delta"][offset])
            item = {"event": k, "phase": event["phase"], "delta": delta, "value": float(write["value"][offset])}
            factors = _factors(doc, event["reads"], name, len(write["delta"]), offset, delta)
            if factors is not None:
                item["factors"] = factors
            yield item


def _cropped_from(doc: Mapping[str, Any], tensor: str, cell: tuple[int, ...]) -> tuple[int, ...]:
    """The cell a cell of ``tensor`` is cropped from (dx from dxp; a transposed layer's
    y from its stamps yp): h + top, w + left (by the axes' names; the spec's padding is
    [top, bottom, left, right], a transposed layer's [rows, columns] on each side, a
    sequence's [left, right]: l + left)."""
    padding = doc["spec"]["padding"]
    if doc["spec"].get("layer") == "conv1d":
        shift = {"l": padding[0]}
    else:
        top, left = (padding[0], padding[2]) if len(padding) == 4 else (padding[0], padding[1])
        shift = {"h": top, "w": left}
    return tuple(i + shift.get(axis, 0) for i, axis in zip(cell, doc["tensors"][tensor]["axes"]))


def contributions(doc: Mapping[str, Any], tensor: str, index: Sequence[int]) -> list[dict]:
    """Every write to ``tensor[index]`` in event order (module notes): dicts with
    ``event``, ``phase``, ``delta``, ``value`` and, where the reads show them,
    ``factors``. ``index``: one int per axis, in the header's axis order. Raises
    ValueError for a tensor the trace lacks or an index outside it."""
    aliases = doc.get("aliases") if isinstance(doc, Mapping) else None
    tensor = aliases.get(tensor, tensor) if isinstance(aliases, Mapping) else tensor
    cell = _checked_index(_tensor(doc, tensor), tensor, index)
    # (a header without the key: dx is dxp's crop unless a padding mode folds it)
    crop = tensor == "dx" and "dxp" in doc["tensors"] and doc["spec"].get("padding_mode", "zeros") == "zeros"
    source = doc["tensors"][tensor].get("cropped_from", "dxp" if crop else None)
    if source:
        tensor, cell = source, _cropped_from(doc, tensor, cell)
    return list(_writes_to(doc, tensor, cell))
