"""Boxes, writes and the running state: the parts every event is made of.

A phase generator works in the engine's internal order (NCHW / OIHW) and asks a
``TraceContext`` for plain-data pieces (``model.Box``, ``model.Write``, built by
``model.make_box`` / ``make_write``); the context converts them to the trace's layout
at the edge, and this is the one place that permutes: ``order(name, seq)`` for one
index list, ``block_order(name, shape)`` for the cells of a block made in bulk.

- ``box(name, start, stop, step)`` -> ``{"tensor", "start", "stop", "step"}``;
- ``write(name, start, stop, step, delta)`` adds ``delta`` (an array of the Box's
  shape, internal order) to the running state of ``name`` and returns the Write:
  the Box plus ``delta`` and ``value`` (the cells after the add), row-major in the
  trace's order;
- ``write_cell(name, index, delta)``: the same for one cell and a float;
- ``text(name, start, stop, step)`` / ``cell_text(name, index)``: the Box as the step
  text prints it (``xp[0,0:3,0:3,4:7]``), in the trace's order;
- ``cells(name)``: per-cell tables (boxes, text, values) for the
  multiply-accumulate hot loops, built once per tensor;
- ``rows(block)``: a block of delta or value rows made in bulk, as lists (plain data)
  or, for a trace made ``arrays=True``, as float64 arrays (see ``TraceContext``).

Every tensor an event writes starts at zero in the running state (the replay rule),
so ``value`` is exactly what replaying the deltas so far gives.

Events share immutable pieces (cell Boxes, start/stop/step lists, loop dicts, equal
delta lists): treat events as read-only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import format as fmt
from .aliases import trace_names
from .axes import full_permutation, in_layout, kind_of
from .model import Box, Write, make_box, make_boxes, make_write

__all__ = ["CellIndex", "CellTable", "SHARED_INDEX_LIMIT", "TraceContext", "running_rows", "running_sums"]

SHARED_INDEX_LIMIT = 1 << 16  # cells: index lists up to this size outlive their phase


class CellIndex:
    """The index lists of every cell of one shape in one axis order, shared by the
    CellTables of same-shaped tensors (z and dz, xp and dxp, w and dw).

    Attributes
    ----------
    starts, stops : each cell's one-cell Box start and stop lists, in the trace's order
    suffixes : ``[0,1,0,2]`` per cell (a name plus its suffix is the cell's text)
    """

    __slots__ = ("starts", "stops", "suffixes")

    def __init__(self, internal_shape: Sequence[int], perm: Sequence[int] | None):
        index = np.indices(internal_shape).reshape(len(internal_shape), -1)
        if perm:
            index = index[list(perm)]
        index = index.T
        self.starts = index.tolist()
        self.stops = (index + 1).tolist()
        self.suffixes = fmt.cell_names("", index)


class CellTable:
    """Per-cell pieces of one tensor, indexed by the internal row-major flat index.

    Attributes
    ----------
    boxes : the one-cell read Box of each cell (shared dicts; built on first use)
    starts, stops : the Box's start and stop lists (for writes)
    names : ``xp[0,0,4,4]`` per cell, in the trace's order
    values : the reference value of each cell (Python floats)
    factors : the value as a product factor, ``(−2)`` (built on first use)
    """

    __slots__ = ("name", "starts", "stops", "names", "values", "_boxes", "_factors")

    def __init__(self, name: str, index: CellIndex, data: np.ndarray | None):
        self.name = name
        self.starts = index.starts
        self.stops = index.stops
        self.names = [name + suffix for suffix in index.suffixes]
        self.values = data.ravel().tolist() if data is not None else None
        self._boxes = None
        self._factors = None

    @property
    def boxes(self) -> list[dict]:
        """Each cell's one-cell read Box (built on first use: not every phase reads them)."""
        if self._boxes is None:
            name, one = self.name, [1] * (len(self.starts[0]) if self.starts else 0)
            self._boxes = make_boxes(name, self.starts, self.stops, one)
        return self._boxes

    @property
    def factors(self) -> list[str]:
        """Each cell's value as a product factor (built on first use)."""
        if self._factors is None:
            self._factors = fmt.factor_list(fmt.number_list(self.values)) if self.values else []
        return self._factors


class TraceContext:
    """The tensors of one trace and the builders of its events.

    Parameters
    ----------
    rc : the ResolvedConfig
    reference : {name: internal-order array}: every tensor of the trace, as the
        vectorised core computes it
    written : the names events write (their running state starts at zero)
    arrays : False: every ``delta`` and ``value`` is a list of floats (plain data).
        True: the rows a phase makes in bulk (``rows``) are 1-D float64 arrays instead,
        the same numbers: for an encoder that writes arrays itself (orjson with
        OPT_SERIALIZE_NUMPY gives byte-identical JSON), which then never makes one
        Python float per number.
    """

    def __init__(self, rc: Any, reference: dict[str, np.ndarray], written: Iterable[str], arrays: bool = False):
        self.rc = rc
        self.arrays = arrays
        self.spec = rc.spec
        self.layout = rc.layout
        self.ref = reference
        self.perm = {name: kind_of(name).perm(rc.layout) for name in reference}
        self.shape = {
            name: [arr.shape[p] for p in self.perm[name]] if self.perm[name] else list(arr.shape)
            for name, arr in reference.items()
        }  # (a sequence layout's perm leaves the one-cell row axis out: three axes)
        self.state = {name: np.zeros_like(reference[name]) for name in written}
        self._cells: dict[str, CellTable] = {}
        self._index: dict[tuple, CellIndex] = {}
        self._ones = {}
        self.memo: dict[str, Any] = {}  # per-trace objects a view shares between its phases
        self.aliases = trace_names(rc)  # engine name -> the trace's tensor (aliases.py)

    def name(self, name: str) -> str:
        """The trace's name of the engine's tensor ``name`` (``xp`` is ``x`` without
        padding, ``z`` is ``out`` with the identity activation, ``w`` is ``wf`` with
        flip: ``aliases.trace_names``)."""
        return self.aliases.get(name, name)

    # -- boxes ------------------------------------------------------------------------

    def ones(self, ndim: int) -> list[int]:
        """``[1] * ndim``, one shared list per trace (a step of Boxes; read-only)."""
        one = self._ones.get(ndim)
        if one is None:
            one = self._ones[ndim] = [1] * ndim
        return one

    def unit(self, name: str) -> list[int]:
        """The all-1 step of a Box of ``name``, one per axis the trace shows."""
        return self.ones(len(self.shape[name]))

    def order(self, name: str, index: Sequence[int]) -> list[int]:
        """An internal-order index list (start, stop, step, a cell) of ``name`` in the
        trace's axis order."""
        p = self.perm[name]
        return [index[i] for i in p] if p else list(index)

    def order_rows(self, name: str, index: np.ndarray) -> np.ndarray:
        """``order`` for many index lists at once: int array (K, ndim), internal order
        -> the same rows in the trace's axis order."""
        p = self.perm[name]
        return index[:, list(p)] if p else index

    def block_order(self, name: str, shape: Sequence[int]) -> np.ndarray | None:
        """Where each cell of a Box of ``name`` with internal ``shape`` goes: the flat
        internal indices in the trace's row-major order (None: the same order). Rows of
        such blocks made in bulk are permuted with it: ``block[:, order]``."""
        p = self.perm[name]
        if not p:
            return None
        return np.arange(int(np.prod(shape))).reshape(shape).transpose(full_permutation(p, len(shape))).ravel()

    def cell_list(self, name: str, block: np.ndarray) -> list[float]:
        """A block of ``name``'s cells (internal order, a Box's shape) as the row-major
        list of its values in the trace's order."""
        return in_layout(block, self.perm[name]).ravel().tolist()

    def box(self, name: str, start: Sequence[int], stop: Sequence[int], step: Sequence[int] | None = None) -> Box:
        """The Box of ``name`` from internal-order start/stop/step (step None: all 1)."""
        step = self.order(name, step) if step is not None else self.unit(name)
        return make_box(self.name(name), self.order(name, start), self.order(name, stop), step)

    def text(self, name: str, start: Sequence[int], stop: Sequence[int], step: Sequence[int] | None = None) -> str:
        """``xp[0,0:3,0:3,4:7]``: the Box as text, in the trace's order."""
        return self.name(name) + self.slices(name, start, stop, step)

    def slices(self, name: str, start: Sequence[int], stop: Sequence[int], step: Sequence[int] | None = None) -> str:
        """The bracket part of ``text`` (``[0,0:3,0:3,4:7]``, "" for the whole tensor).
        Phases that print several same-shaped tensors over one Box compute it once."""
        step = self.order(name, step) if step is not None else self.unit(name)
        return fmt.box_slices(self.order(name, start), self.order(name, stop), step, self.shape[name])

    def cell_text(self, name: str, index: Sequence[int]) -> str:
        """``z[0,1,0,2]``, in the trace's order."""
        return fmt.cell(self.name(name), self.order(name, index))

    # -- writes -----------------------------------------------------------------------

    def write(
        self,
        name: str,
        start: Sequence[int],
        stop: Sequence[int],
        step: Sequence[int] | None,
        delta: np.ndarray | float,
    ) -> Write:
        """Add ``delta`` (broadcastable to the Box's internal shape) to the running state
        of ``name`` and return the Write with ``delta`` and ``value`` in the trace's order."""
        steps = step if step is not None else (1,) * len(start)
        index = tuple(slice(a, b, s) for a, b, s in zip(start, stop, steps))
        block = self.state[name][index]
        delta = np.broadcast_to(np.asarray(delta, dtype=np.float64), block.shape)
        block += delta
        box = self.box(name, start, stop, step)
        return make_write(
            box["tensor"],
            box["start"],
            box["stop"],
            box["step"],
            self.cell_list(name, delta),
            self.cell_list(name, block),
        )

    def write_cell(self, name: str, index: Sequence[int], delta: float) -> Write:
        """Add the float ``delta`` to one cell (internal index) and return the Write."""
        arr = self.state[name]
        index = tuple(index)
        value = float(arr[index]) + delta
        arr[index] = value
        one = self.unit(name)
        return make_write(
            self.name(name), self.order(name, index), self.order(name, [i + 1 for i in index]), one, [delta], [value]
        )

    def rows(self, block: np.ndarray) -> list:
        """float64 (K, M) -> its K rows, each a delta or value: lists of floats, or
        with ``arrays`` 1-D float64 arrays (contiguous views of one block)."""
        if self.arrays:
            return list(np.ascontiguousarray(block))
        return block.tolist()

    # -- per-cell tables for the hot loops --------------------------------------------

    def release_cells(self) -> None:
        """Forget the per-cell tables (the engine calls this between phases, so that
        memory holds at most one phase's tables; index lists of tensors up to
        ``SHARED_INDEX_LIMIT`` cells are kept for the next same-shaped table)."""
        self._cells.clear()
        for key in [k for k, index in self._index.items() if len(index.starts) > SHARED_INDEX_LIMIT]:
            del self._index[key]

    def cells(self, name: str) -> CellTable:
        """The CellTable of ``name`` (built on first use)."""
        table = self._cells.get(name)
        if table is None:
            arr = self.ref[name]
            key = (arr.shape, self.perm[name])
            index = self._index.get(key)
            if index is None:
                index = self._index[key] = CellIndex(arr.shape, self.perm[name])
            table = self._cells[name] = CellTable(self.name(name), index, arr)
        return table


def running_sums(state: np.ndarray, targets: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """Add ``deltas[k]`` to ``state[targets[k]]`` in order k = 0, 1, …; return the value
    of the target cell after each add, and leave the final sums in ``state``.

    ``state``: a flat float64 array (updated in place); ``targets``: int array (K,);
    ``deltas``: float64 (K,). Vectorised, yet bit-identical to adding one at a time
    (``np.cumsum`` adds sequentially along a column): per target cell, a column holds
    its current value then its deltas in order.
    """
    size = targets.size
    if size == 0:
        return deltas.copy()
    if size == 1:
        value = state[targets] + deltas
        state[targets] = value
        return value
    # a stable sort groups the adds per cell, keeping their order (16-bit keys: radix sort)
    keys = targets.astype(np.uint16) if state.size <= 1 << 16 else targets
    order = np.argsort(keys, kind="stable")
    sorted_targets = targets[order]
    new_cell = np.empty(size, dtype=bool)
    new_cell[0] = True
    np.not_equal(sorted_targets[1:], sorted_targets[:-1], out=new_cell[1:])
    first = np.flatnonzero(new_cell)
    counts = np.diff(first, append=size)
    cells = sorted_targets[first]
    ncells = cells.size
    # table[0, cell] = its current value, table[s, cell] = its s-th delta; a cumsum down
    # the columns adds them one at a time, all cells at once. One flat index into the
    # table (row·ncells + column) serves both the scatter and the gather.
    column = np.cumsum(new_cell) - 1  # (cheaper than np.repeat)
    flat = (np.arange(1, size + 1) - first[column]) * ncells + column
    table = np.zeros((int(counts.max()) + 1, ncells))
    table[0] = state[cells]
    table.ravel()[flat] = deltas[order]
    np.cumsum(table, axis=0, out=table)
    values = np.empty_like(deltas)
    values[order] = table.ravel()[flat]
    state[cells] = table.ravel()[counts * ncells + np.arange(ncells)]
    return values


def running_rows(state: np.ndarray, rows: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """``running_sums`` when each add covers a whole row: add ``deltas[k]`` to
    ``state[rows[k]]`` in order k = 0, 1, …; return the row after each add (K, M).

    ``state``: float64 (R, M), updated in place; ``rows``: int array (K,); ``deltas``:
    float64 (K, M). Bit-identical to adding one row at a time (per row of ``state``, one
    sequential cumsum over its adds) and cheaper than ``running_sums`` on the K·M cells:
    the direct window view's dw (one row per filter).
    """
    values = np.empty_like(deltas)
    if rows.size == 0:
        return values
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    bounds = np.flatnonzero(sorted_rows[1:] != sorted_rows[:-1]) + 1
    for group in np.split(order, bounds):
        r = rows[group[0]]
        block = np.empty((group.size + 1, deltas.shape[1]))
        block[0] = state[r]
        block[1:] = deltas[group]
        np.cumsum(block, axis=0, out=block)
        values[group] = block[1:]
        state[r] = block[-1]
    return values
