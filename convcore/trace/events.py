"""Boxes, writes and the running state: the parts every event is made of.

A phase generator works in the engine's internal order (NCHW / OIHW) and asks a
``TraceContext`` for plain-data pieces; the context converts them to the trace's
layout at the edge:

- ``box(name, start, stop, step)`` -> ``{"tensor", "start", "stop", "step"}``;
- ``write(name, start, stop, step, delta)`` adds ``delta`` (an array of the Box's
  shape, internal order) to the running state of ``name`` and returns the Write:
  the Box plus ``delta`` and ``value`` (the cells after the add), row-major in the
  trace's order;
- ``write_cell(name, index, delta)``: the same for one cell and a float;
- ``text(name, start, stop, step)`` / ``cell_text(name, index)``: the Box as the step
  text prints it (``xp[0,0:3,0:3,4:7]``), in the trace's order;
- ``cells(name)``: per-cell tables (boxes, text, values) for the
  multiply-accumulate hot loops, built once per tensor.

Every tensor an event writes starts at zero in the running state (the replay rule),
so ``value`` is exactly what replaying the deltas so far gives.

Events share immutable pieces (cell Boxes, ``step`` lists): treat events as read-only.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from . import format as fmt
from .axes import kind_of

__all__ = ["CellTable", "TraceContext"]


class CellTable:
    """Per-cell pieces of one tensor, indexed by the internal row-major flat index.

    Attributes
    ----------
    boxes : the one-cell read Box of each cell (shared dicts)
    starts, stops : the Box's start and stop lists (for writes)
    names : ``xp[0,0,4,4]`` per cell, in the trace's order
    values : the reference value of each cell (Python floats)
    factors : the value as a product factor, ``(−2)``
    """

    __slots__ = ("boxes", "starts", "stops", "names", "values", "_factors")

    def __init__(self, name: str, internal_shape: Sequence[int], perm: Sequence[int] | None, data: np.ndarray | None):
        index = np.indices(internal_shape).reshape(len(internal_shape), -1)
        if perm:
            index = index[list(perm)]
        starts = index.T.tolist()
        stops = (index.T + 1).tolist()
        one = [1] * len(internal_shape)
        self.starts = starts
        self.stops = stops
        self.boxes = [
            {"tensor": name, "start": a, "stop": b, "step": one} for a, b in zip(starts, stops)
        ]
        self.names = [f"{name}[{','.join(map(str, a))}]" for a in starts]
        self.values = data.ravel().tolist() if data is not None else None
        self._factors = None

    @property
    def factors(self) -> list[str]:
        """Each cell's value as a product factor (built on first use)."""
        if self._factors is None:
            self._factors = [fmt.factor(v) for v in self.values]
        return self._factors


class TraceContext:
    """The tensors of one trace and the builders of its events.

    Parameters
    ----------
    rc : the ResolvedConfig
    reference : {name: internal-order array}: every tensor of the trace, as the
        vectorised core computes it
    written : the names events write (their running state starts at zero)
    """

    def __init__(self, rc: Any, reference: dict[str, np.ndarray], written: Iterable[str]):
        self.rc = rc
        self.spec = rc.spec
        self.layout = rc.layout
        self.ref = reference
        self.perm = {name: kind_of(name).perm(rc.layout) for name in reference}
        self.shape = {
            name: [arr.shape[p] for p in self.perm[name]] if self.perm[name] else list(arr.shape)
            for name, arr in reference.items()
        }
        self.state = {name: np.zeros_like(reference[name]) for name in written}
        self._cells: dict[str, CellTable] = {}
        self._ones = {}
        self.memo: dict[str, Any] = {}  # per-trace objects a view shares between its phases

    # -- boxes ------------------------------------------------------------------------

    def _ones_for(self, ndim: int) -> list[int]:
        one = self._ones.get(ndim)
        if one is None:
            one = self._ones[ndim] = [1] * ndim
        return one

    def box(self, name: str, start: Sequence[int], stop: Sequence[int], step: Sequence[int] | None = None) -> dict:
        """The Box of ``name`` from internal-order start/stop/step (step None: all 1)."""
        p = self.perm[name]
        if p:
            start = [start[i] for i in p]
            stop = [stop[i] for i in p]
            step = [step[i] for i in p] if step is not None else self._ones_for(len(p))
        else:
            start, stop = list(start), list(stop)
            step = list(step) if step is not None else self._ones_for(len(start))
        return {"tensor": name, "start": start, "stop": stop, "step": step}

    def text(self, name: str, start: Sequence[int], stop: Sequence[int], step: Sequence[int] | None = None) -> str:
        """``xp[0,0:3,0:3,4:7]``: the Box as text, in the trace's order."""
        step = step if step is not None else (1,) * len(start)
        p = self.perm[name]
        if p:
            start, stop, step = ([s[i] for i in p] for s in (start, stop, step))
        return fmt.box_text(name, start, stop, step, self.shape[name])

    def cell_text(self, name: str, index: Sequence[int]) -> str:
        """``z[0,1,0,2]``, in the trace's order."""
        p = self.perm[name]
        if p:
            index = [index[i] for i in p]
        return fmt.cell(name, index)

    # -- writes -----------------------------------------------------------------------

    def write(
        self,
        name: str,
        start: Sequence[int],
        stop: Sequence[int],
        step: Sequence[int] | None,
        delta: np.ndarray | float,
    ) -> dict:
        """Add ``delta`` (broadcastable to the Box's internal shape) to the running state
        of ``name`` and return the Write with ``delta`` and ``value`` in the trace's order."""
        steps = step if step is not None else (1,) * len(start)
        index = tuple(slice(a, b, s) for a, b, s in zip(start, stop, steps))
        block = self.state[name][index]
        delta = np.broadcast_to(np.asarray(delta, dtype=np.float64), block.shape)
        block += delta
        p = self.perm[name]
        if p:
            delta, block = delta.transpose(p), block.transpose(p)
        out = self.box(name, start, stop, step)
        out["delta"] = delta.ravel().tolist()
        out["value"] = block.ravel().tolist()
        return out

    def write_cell(self, name: str, index: Sequence[int], delta: float) -> dict:
        """Add the float ``delta`` to one cell (internal index) and return the Write."""
        arr = self.state[name]
        index = tuple(index)
        value = float(arr[index]) + delta
        arr[index] = value
        out = self.box(name, index, [i + 1 for i in index])
        out["delta"] = [delta]
        out["value"] = [value]
        return out

    # -- per-cell tables for the hot loops --------------------------------------------

    def release_cells(self) -> None:
        """Forget the per-cell tables (the engine calls this between phases, so that
        memory holds at most one phase's tables)."""
        self._cells.clear()

    def cells(self, name: str) -> CellTable:
        """The CellTable of ``name`` (built on first use)."""
        table = self._cells.get(name)
        if table is None:
            arr = self.ref[name]
            table = self._cells[name] = CellTable(name, arr.shape, self.perm[name], arr)
        return table


def running_sums(state: np.ndarray, targets: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """Add ``deltas[k]`` to ``state[targets[k]]`` in order k = 0, 1, …; return the value
    of the target cell after each add, and leave the final sums in ``state``.

    ``state``: a flat float64 array (updated in place); ``targets``: int array (K,);
    ``deltas``: float64 (K,). Vectorised, yet bit-identical to adding one at a time
    (``np.cumsum`` adds sequentially along a row): per target cell, a row holds its
    current value then its deltas in order.
    """
    if targets.size == 0:
        return deltas.copy()
    if targets.size == 1:
        value = state[targets] + deltas
        state[targets] = value
        return value
    # a stable sort groups the adds per cell, keeping their order (16-bit keys: radix sort)
    keys = targets.astype(np.uint16) if state.size <= 1 << 16 else targets
    order = np.argsort(keys, kind="stable")
    sorted_targets = targets[order]
    first = np.flatnonzero(np.concatenate(([True], sorted_targets[1:] != sorted_targets[:-1])))
    counts = np.diff(np.append(first, targets.size))
    cells = sorted_targets[first]
    column = np.repeat(np.arange(cells.size), counts)
    step = np.arange(targets.size) - first[column] + 1
    # table[0, cell] = its current value, table[s, cell] = its s-th delta; a cumsum down
    # the rows adds them one at a time, all cells at once
    table = np.zeros((int(counts.max()) + 1, cells.size))
    table[0] = state[cells]
    table[step, column] = deltas[order]
    np.cumsum(table, axis=0, out=table)
    values = np.empty_like(deltas)
    values[order] = table[step, column]
    state[cells] = table[counts, np.arange(cells.size)]
    return values
