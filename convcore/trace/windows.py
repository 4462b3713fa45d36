"""Receptive fields made in bulk: the windows of xp, their Boxes and texts, per chunk of
output positions, for the window-granularity generators (``forward_window``,
``direct_window``).

A window of output position (n, f, i, j) is the Box ``xp[n, g·C/G : (g+1)·C/G,
i·sh : i·sh + eh : dh, j·sw : j·sw + ew : dw]`` (g = the group of filter f). Per
chunk of positions NumPy computes each window's first cell and the flat indices of
its cells; Boxes and texts are made in bulk, once per trace (up to ``TABLE_LIMIT``
windows; forward and backward share them), else per chunk, so memory stays flat.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .events import TraceContext
from .loops import ordered_chunks
from .model import Box, make_boxes

__all__ = ["ReceptiveFields", "TABLE_LIMIT", "WindowChunk"]

TABLE_LIMIT = 1 << 14  # windows (N·G·Ho·Wo) up to which one table serves the whole trace


class WindowChunk:
    """One chunk of output positions, in loop order.

    Attributes
    ----------
    filters, first_cells, z_cells : int arrays (K,): each position's filter f, the flat
        index into xp of its window's first cell, and its flat index into z (and dz)
    filter_list, z_list : the same as lists
    loops : each position's loop dict ``{n, f, i, j}`` (shared by forward and backward)
    windows : each position's (xp Box, its text ``xp[0,0:3,1:4]``)
    """

    __slots__ = ("filters", "first_cells", "z_cells", "filter_list", "z_list", "loops", "windows")

    def __init__(self, filters, first_cells, z_cells, loops, windows):
        self.filters, self.first_cells, self.z_cells = filters, first_cells, z_cells
        self.filter_list, self.z_list = filters.tolist(), z_cells.tolist()
        self.loops, self.windows = loops, windows


class ReceptiveFields:
    """The windows of one trace: geometry, per-filter Boxes and texts, window tables."""

    def __init__(self, ctx: TraceContext):
        spec = ctx.spec
        self.ctx = ctx
        self.spec = spec
        self.name = ctx.name("xp")  # the tensor the windows read: x itself without padding
        _, self.C, self.Hp, self.Wp = spec.padded_shape
        self.N, self.F, self.Ho, self.Wo = spec.out_shape
        self.G, self.cg, self.fg = spec.groups, spec.channels_per_group, spec.filters_per_group
        self.kh, self.kw = spec.KH, spec.KW
        self.sh, self.sw = spec.stride
        self.sizes = {"n": self.N, "f": self.F, "i": self.Ho, "j": self.Wo}
        block = (1, self.cg, self.kh, self.kw)  # one filter, one window: internal shape
        c, k, l = np.indices(block[1:]).reshape(3, -1)
        self.cell_offsets = (c * self.Hp + k * spec.dilation[0]) * self.Wp + l * spec.dilation[1]
        self.cells = self.cg * self.kh * self.kw
        # the order of a window's (and a filter's) cells in the trace's layout
        self.cell_order = {name: ctx.block_order(name, block) for name in ("xp", "w", "dw", "dxp") if name in ctx.ref}
        self.filter_box = [ctx.box("w", (f, 0, 0, 0), (f + 1, *block[1:])) for f in range(self.F)]
        self.filter_text = [ctx.text("w", (f, 0, 0, 0), (f + 1, *block[1:])) for f in range(self.F)]
        if "dw" in ctx.ref:
            self.dw_box = [ctx.box("dw", (f, 0, 0, 0), (f + 1, *block[1:])) for f in range(self.F)]
            self.dw_text = [ctx.text("dw", (f, 0, 0, 0), (f + 1, *block[1:])) for f in range(self.F)]
        self._template()
        self._table = None
        if self.N * self.G * self.Ho * self.Wo <= TABLE_LIMIT:
            n, g, i, j = np.indices((self.N, self.G, self.Ho, self.Wo)).reshape(4, -1)
            self._table = self._make(n, g, i, j)  # indexed by the window key (n, g, i, j)
        positions = self.N * self.F * self.Ho * self.Wo
        self._loops = None  # every position's loop dict, by its flat index into z
        if positions <= TABLE_LIMIT:
            n, f, i, j = np.indices((self.N, self.F, self.Ho, self.Wo)).reshape(4, -1).tolist()
            self._loops = [{"n": a, "f": b, "i": c, "j": d} for a, b, c, d in zip(n, f, i, j)]

    @classmethod
    def of(cls, ctx: TraceContext) -> ReceptiveFields:
        """The trace's ReceptiveFields, shared by its window phases (and their table)."""
        fields = ctx.memo.get("receptive fields")
        if fields is None:
            fields = ctx.memo["receptive fields"] = cls(ctx)
        return fields

    def chunks(self, order: str) -> Iterator[WindowChunk]:
        """The output positions in loop ``order`` (letters n, f, i, j), in chunks."""
        for n, f, i, j in ordered_chunks(order, "nfij", self.sizes):
            g = f // self.fg
            first_cells = ((n * self.C + g * self.cg) * self.Hp + i * self.sh) * self.Wp + j * self.sw
            z_cells = ((n * self.F + f) * self.Ho + i) * self.Wo + j
            if self._table is not None:
                table = self._table
                windows = [table[k] for k in (((n * self.G + g) * self.Ho + i) * self.Wo + j).tolist()]
            else:
                windows = self._make(n, g, i, j)
            chunk = WindowChunk(f, first_cells, z_cells, None, windows)
            if self._loops is not None:
                loops = self._loops
                chunk.loops = [loops[z] for z in chunk.z_list]
            else:
                chunk.loops = [
                    {"n": a, "f": b, "i": c, "j": d}
                    for a, b, c, d in zip(n.tolist(), chunk.filter_list, i.tolist(), j.tolist())
                ]
            yield chunk

    def window_cells(self, chunk: WindowChunk) -> np.ndarray:
        """int (K, cells): the flat xp index of every cell of every window of the chunk."""
        return chunk.first_cells[:, None] + self.cell_offsets[None, :]

    def _template(self) -> None:
        """How every window prints: each axis's extent and step are the same for all
        windows, so which axes print ``a``, ``a:b`` or ``a:b:s`` and which trailing axes
        are whole (dropped, as ``format.box_slices`` does) is fixed; one %-template
        formats every window's text in one C-level call."""
        ctx = self.ctx
        extent = ctx.order("xp", (1, self.cg, *self.spec.kernel_extent))
        step = ctx.order("xp", (1, 1, *self.spec.dilation))
        shape = ctx.shape["xp"]
        parts, columns = [], []  # columns: (0 = start, 1 = stop, axis in trace order)
        for a, (e, s) in enumerate(zip(extent, step)):
            if e <= s:
                parts.append("%d")
                columns.append((0, a))
            else:
                parts.append("%d:%d" if s == 1 else f"%d:%d:{s}")
                columns += [(0, a), (1, a)]
        keep = len(extent)
        if any(e > s for e, s in zip(extent, step)):
            floor = 1 if extent[0] <= step[0] else 0
            # a window covers an axis whole only if its extent is the axis (then it starts at 0)
            while keep > floor and extent[keep - 1] == shape[keep - 1] and step[keep - 1] == 1:
                keep -= 1
        self._extent = np.array([(1, self.cg, *self.spec.kernel_extent)])
        self._step = step
        self._text = self.name + "[" + ",".join(parts[:keep]) + "]\x00" if keep else None
        self._text_columns = [c for c in columns if c[1] < keep]

    def _make(self, n: np.ndarray, g: np.ndarray, i: np.ndarray, j: np.ndarray) -> list[tuple[Box, str]]:
        """(xp Box, text) of the windows (n, g, i, j) (int arrays, internal order)."""
        start = np.stack([n, g * self.cg, i * self.sh, j * self.sw], axis=1)
        stop = start + self._extent
        start, stop = self.ctx.order_rows("xp", start), self.ctx.order_rows("xp", stop)
        step = self._step  # one list shared by every window Box
        boxes = make_boxes(self.name, start.tolist(), stop.tolist(), step)
        if self._text is None:
            return [(box, self.name) for box in boxes]
        both = (start, stop)
        values = np.stack([both[kind][:, a] for kind, a in self._text_columns], axis=1)
        texts = ((self._text * len(boxes)) % tuple(values.ravel().tolist())).split("\x00")
        return list(zip(boxes, texts))

    def rows(self, name: str, block: np.ndarray) -> list:
        """float64 (K, cells) deltas or values of ``name``'s window (or filter) cells,
        internal order -> the rows of the events' writes, in the trace's order
        (``TraceContext.rows``: lists, or arrays)."""
        order = self.cell_order[name]
        return self.ctx.rows(block if order is None else block[:, order])

    def lists(self, name: str, block: np.ndarray) -> list[list]:
        """``rows`` as lists whatever the trace's ``arrays`` (text pieces, cell indices)."""
        order = self.cell_order[name]
        return (block if order is None else block[:, order]).tolist()
