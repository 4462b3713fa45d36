"""The direct view at window granularity: one event per output position (n, f, i, j).

- ``forward``: reads the receptive field ``xp[n, group channels, i·sh : i·sh + extent
  : dh, j·sw : … : dw]`` and the filter ``w[f]`` (and ``b[f]``), writes ``z[n,f,i,j]``.
  The text lists every product when a window has at most ``EXPAND_LIMIT`` cells
  (``z[0,0,1,0] = 3·0 + 4·1 + 6·2 + 7·3 = 37``), else ``Σ xp[…]·w[f] + b[f]``.
- fused ``backward``: dz[n,f,i,j] goes back through the same window: writes
  ``db[f] += dz`` (with a bias), ``dw[f] += dz·window`` and ``dxp[window] += dz·w[f]``.
- separate ``db`` (one event per filter: the sum of dz[:, f]), ``dw`` (per position,
  ``dw[f] += dz·window``), ``dx`` (per position in ``dx_loop_order``,
  ``dxp[window] += dz·w[f]``), as CS231n's naive code.

Speed: per chunk of positions, NumPy computes every window's cell indices, the deltas
and the running values (``events.running_sums`` / ``running_rows``, bit-identical to
adding one event at a time) and turns them into lists in bulk. Window Boxes and texts
are made in bulk too: once per trace (up to ``TABLE_LIMIT`` windows; forward and
backward share them), else per chunk, so memory stays flat.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from . import format as fmt
from .events import TraceContext, running_rows, running_sums
from .loops import ordered_chunks

__all__ = ["EXPAND_LIMIT", "backward_window", "db_window", "forward_window"]

EXPAND_LIMIT = 9
TABLE_LIMIT = 1 << 14  # windows (N·G·Ho·Wo) up to which one table serves the whole trace


class _Windows:
    """Receptive-field geometry, per-filter pieces and the window Boxes and texts."""

    def __init__(self, ctx: TraceContext):
        spec = ctx.spec
        self.ctx = ctx
        self.spec = spec
        _, self.C, self.Hp, self.Wp = spec.padded_shape
        self.N, self.F, self.Ho, self.Wo = spec.out_shape
        self.G, self.cg, self.fg = spec.groups, spec.channels_per_group, spec.filters_per_group
        self.kh, self.kw = spec.KH, spec.KW
        self.eh, self.ew = spec.kernel_extent
        self.sh, self.sw = spec.stride
        self.sizes = {"n": self.N, "f": self.F, "i": self.Ho, "j": self.Wo}
        c, k, l = np.indices((self.cg, self.kh, self.kw)).reshape(3, -1)
        self.offsets = (c * self.Hp + k * spec.dilation[0]) * self.Wp + l * spec.dilation[1]
        self.cells = self.cg * self.kh * self.kw
        # the order of a window's cells in the trace's layout (NHWC: kh, kw, c)
        self.cell_order = (
            np.arange(self.cells).reshape(self.cg, self.kh, self.kw).transpose(1, 2, 0).ravel()
            if ctx.layout == "NHWC" else None
        )
        fbox = [((f, 0, 0, 0), (f + 1, self.cg, self.kh, self.kw)) for f in range(self.F)]
        self.w_box = [ctx.box("w", a, b) for a, b in fbox]
        self.w_text = [ctx.text("w", a, b) for a, b in fbox]
        if "dw" in ctx.ref:
            self.dw_box = [ctx.box("dw", a, b) for a, b in fbox]
            self.dw_text = [ctx.text("dw", a, b) for a, b in fbox]
        self._template()
        count = self.N * self.G * self.Ho * self.Wo
        self._table = None
        if count <= TABLE_LIMIT:
            n, g, i, j = np.indices((self.N, self.G, self.Ho, self.Wo)).reshape(4, -1)
            self._table = self._make(n, g, i, j)  # indexed by the window key
        # one loop dict per position, shared by its forward and backward events
        positions = self.N * self.F * self.Ho * self.Wo
        self._loops = [None] * positions if positions <= TABLE_LIMIT else None

    @classmethod
    def of(cls, ctx: TraceContext) -> "_Windows":
        """The trace's _Windows, shared by its window phases (and their window table)."""
        geo = ctx.memo.get("direct.windows")
        if geo is None:
            geo = ctx.memo["direct.windows"] = cls(ctx)
        return geo

    def chunks(self, order: str):
        """Per chunk of positions in loop order: f, base cell of the window on xp (flat),
        flat index into z (int arrays); then as lists: f, z index, the loop dict and the
        window (xp Box, its text) of each position."""
        for n, f, i, j in ordered_chunks(order, "nfij", self.sizes):
            g = f // self.fg
            base = ((n * self.C + g * self.cg) * self.Hp + i * self.sh) * self.Wp + j * self.sw
            zi = ((n * self.F + f) * self.Ho + i) * self.Wo + j
            if self._table is not None:
                table = self._table
                windows = [table[k] for k in (((n * self.G + g) * self.Ho + i) * self.Wo + j).tolist()]
            else:
                windows = self._make(n, g, i, j)
            f_list, z_list = f.tolist(), zi.tolist()
            yield f, base, zi, f_list, z_list, self._loop_dicts(n.tolist(), f_list, i.tolist(), j.tolist(), z_list), windows

    def _loop_dicts(self, n: list, f: list, i: list, j: list, zi: list) -> list[dict]:
        loops = self._loops
        if loops is None:
            return [{"n": a, "f": b, "i": c, "j": d} for a, b, c, d in zip(n, f, i, j)]
        out = []
        for a, b, c, d, z in zip(n, f, i, j, zi):
            loop = loops[z]
            if loop is None:
                loop = loops[z] = {"n": a, "f": b, "i": c, "j": d}
            out.append(loop)
        return out

    def _template(self) -> None:
        """How every window prints: each axis's extent and step are the same for all
        windows, so which axes print ``a``, ``a:b`` or ``a:b:s`` and which trailing axes
        are whole (dropped, as ``format.box_slices`` does) is fixed; one %-template
        formats every window's text in one C-level call."""
        perm = self.ctx.perm["xp"] or (0, 1, 2, 3)
        extent = [(1, self.cg, self.eh, self.ew)[a] for a in perm]
        step = [(1, 1, *self.spec.dilation)[a] for a in perm]
        shape = self.ctx.shape["xp"]
        parts, columns = [], []  # columns: (0 = start, 1 = stop, axis in trace order)
        for a, (e, s) in enumerate(zip(extent, step)):
            if e <= s:
                parts.append("%d")
                columns.append((0, a))
            else:
                parts.append("%d:%d" if s == 1 else f"%d:%d:{s}")
                columns += [(0, a), (1, a)]
        keep = 4
        if any(e > s for e, s in zip(extent, step)):
            floor = 1 if extent[0] <= step[0] else 0
            # a window covers an axis whole only if its extent is the axis (then it starts at 0)
            while keep > floor and extent[keep - 1] == shape[keep - 1] and step[keep - 1] == 1:
                keep -= 1
        self._perm = list(perm)
        self._extent = np.array([(1, self.cg, self.eh, self.ew)])
        self._step = step
        self._text = "xp[" + ",".join(parts[:keep]) + "]\x00" if keep else None
        self._text_columns = [c for c in columns if c[1] < keep]

    def _make(self, n: np.ndarray, g: np.ndarray, i: np.ndarray, j: np.ndarray) -> list[tuple[dict, str]]:
        """(xp Box, text) of the windows (n, g, i, j) (int arrays, internal order)."""
        start = np.stack([n, g * self.cg, i * self.sh, j * self.sw], axis=1)
        stop = start + self._extent
        start, stop = start[:, self._perm], stop[:, self._perm]
        step = self._step  # one list shared by every window Box
        boxes = [{"tensor": "xp", "start": a, "stop": b, "step": step} for a, b in zip(start.tolist(), stop.tolist())]
        if self._text is None:
            return [(box, "xp") for box in boxes]
        both = (start, stop)
        values = np.stack([both[kind][:, a] for kind, a in self._text_columns], axis=1)
        texts = ((self._text * len(boxes)) % tuple(values.ravel().tolist())).split("\x00")
        return list(zip(boxes, texts))

    def external(self, block: np.ndarray) -> list:
        """(E, cells) in internal (c, k, l) order -> lists in the trace's order."""
        if self.cell_order is not None:
            block = block[:, self.cell_order]
        return block.tolist()

    def external_rows(self, block: np.ndarray) -> list:
        """float64 (E, cells) deltas or values in internal order -> the rows of the
        events' writes, in the trace's order (``TraceContext.rows``)."""
        if self.cell_order is not None:
            block = block[:, self.cell_order]
        return self.ctx.rows(block)


def forward_window(ctx: TraceContext) -> Iterator[dict]:
    geo = _Windows.of(ctx)
    w_rows = ctx.ref["w"].reshape(geo.F, -1)
    z_flat = ctx.ref["z"].reshape(-1)
    state = ctx.state["z"].reshape(-1)
    Z = ctx.cells("z")
    zn, zs, ze = Z.names, Z.starts, Z.stops
    bias = ctx.ref.get("b")
    has_bias = bias is not None
    w_box = geo.w_box
    # the reads of filter f (with its bias Box), and the filter's part of the text
    if has_bias:
        b_box = [ctx.box("b", (f,), (f + 1,)) for f in range(geo.F)]
        b_num = [f" + {fmt.factor(v)}" for v in bias.tolist()]
        sigma_tail = [f"·{t} + b[{f}] = " for f, t in enumerate(geo.w_text)]
    else:
        sigma_tail = [f"·{t} = " for t in geo.w_text]
    expand = geo.cells <= EXPAND_LIMIT
    if expand:
        x_fac = ctx.cells("xp").factors
        w_fac = geo.external(np.vectorize(fmt.factor, otypes=[object])(w_rows)) if w_rows.size else []
    one = [1, 1, 1, 1]
    for f_, base_, zi_, fs, zis, loops, windows in geo.chunks(ctx.rc.loop_order):
        values = 0.0 + z_flat[zi_]  # the state after the write: zero plus z
        state[zi_] = values
        xcells = geo.external(base_[:, None] + geo.offsets[None, :]) if expand else None
        rows = zip(fs, zis, loops, windows, values.tolist(), xcells or [None] * len(values), fmt.number_list(values))
        for f, zi, loop, (box, text), v, cells, said in rows:
            if expand:
                rhs = " + ".join([f"{x_fac[c]}·{wf}" for c, wf in zip(cells, w_fac[f])])
                text = f"{zn[zi]} = {rhs}{b_num[f]} = {said}" if has_bias else f"{zn[zi]} = {rhs} = {said}"
            else:
                text = f"{zn[zi]} = Σ {text}{sigma_tail[f]}{said}"
            written = [v]  # delta = value (z starts at zero): one shared list
            yield {
                "type": "event",
                "phase": "forward",
                "loop": loop,
                "reads": [box, w_box[f], b_box[f]] if has_bias else [box, w_box[f]],
                "writes": [{"tensor": "z", "start": zs[zi], "stop": ze[zi], "step": one,
                            "delta": written, "value": written}],
                "text": text,
            }


def backward_window(ctx: TraceContext, phase: str, order: str, db: bool, dw: bool, dx: bool) -> Iterator[dict]:
    """Per output position: dz back through the window into db, dw and/or dxp.

    Fused (db, dw, dx), or one of dw and dx (the separate phases); separate db is
    ``db_window``. Per chunk, NumPy makes every delta and running value and the number
    text; the loop only assembles dicts and one f-string per event (its per-filter
    pieces precomputed), one loop per phase kind so that no event tests the kind.
    """
    geo = _Windows.of(ctx)
    xp_flat = ctx.ref["xp"].reshape(-1)
    w_rows = ctx.ref["w"].reshape(geo.F, -1)
    dz_flat = ctx.ref["dz"].reshape(-1)
    DZ = ctx.cells("dz")
    dz_box, dz_name = DZ.boxes, DZ.names
    st_db = ctx.state["db"].reshape(-1) if db else None
    st_dw = ctx.state["dw"].reshape(geo.F, -1) if dw else None
    st_dx = ctx.state["dxp"].reshape(-1) if dx else None
    w_box, F = geo.w_box, geo.F
    one1, one4 = [1], [1, 1, 1, 1]
    if dw:
        dw_start = [b["start"] for b in geo.dw_box]
        dw_stop = [b["stop"] for b in geo.dw_box]
        dw_said = [f"{t} += " for t in geo.dw_text]  # "dw[f] += "
    w_said = [f"·{t}" for t in geo.w_text]  # "·w[f]"
    db_said = [f": db[{f}] += " for f in range(F)]
    db_start = [[f] for f in range(F)]
    db_stop = [[f + 1] for f in range(F)]
    for f_, base_, zi_, fs, zis, loops, windows in geo.chunks(order):
        count = len(zi_)
        g = dz_flat[zi_]
        xcells = base_[:, None] + geo.offsets[None, :]
        if dw:
            d1 = g[:, None] * xp_flat[xcells]
            v1 = running_rows(st_dw, f_, d1)
            d1, v1 = geo.external_rows(d1), geo.external_rows(v1)
        # dz values that repeat bit for bit (small-integer data: dz in {−1, 0, 1}) give
        # identical delta rows dz·w[f] and [dz]: one shared list each, not one per event
        g_bits, g_kind = np.unique(g.view(np.int64), return_inverse=True)
        repeats = 2 * g_bits.size <= count
        if dx:
            d2 = g[:, None] * w_rows[f_]
            v2 = running_sums(st_dx, xcells.ravel(), d2.ravel())
            d2 = _shared_rows(geo.external_rows, d2, g_kind.ravel() * F + f_) if repeats else geo.external_rows(d2)
            v2 = geo.external_rows(v2.reshape(count, -1))
        g_said = fmt.number_list(g)
        columns = (fs, zis, loops, windows)
        if dw and dx:
            if db:
                vb = running_sums(st_db, f_, g)
                if repeats:
                    g_lists = [[v] for v in g_bits.view(np.float64).tolist()]
                    g_lists = [g_lists[k] for k in g_kind.ravel().tolist()]
                else:
                    g_lists = [[v] for v in g.tolist()]
                rows = zip(*columns, g_lists, vb.tolist(), fmt.number_list(vb), d1, v1, d2, v2,
                           g_said, fmt.factor_list(g_said))
                for f, zi, loop, (box, text), g_list, vb, vb_said, dd1, vv1, dd2, vv2, nd, fd in rows:
                    yield {
                        "type": "event",
                        "phase": phase,
                        "loop": loop,
                        "reads": [dz_box[zi], box, w_box[f]],
                        "writes": [
                            {"tensor": "db", "start": db_start[f], "stop": db_stop[f], "step": one1,
                             "delta": g_list, "value": [vb]},
                            {"tensor": "dw", "start": dw_start[f], "stop": dw_stop[f], "step": one4,
                             "delta": dd1, "value": vv1},
                            {"tensor": "dxp", "start": box["start"], "stop": box["stop"], "step": box["step"],
                             "delta": dd2, "value": vv2},
                        ],
                        "text": f"{dz_name[zi]} = {nd}{db_said[f]}{nd} → {vb_said}; "
                                f"{dw_said[f]}{fd}·{text}; d{text} += {fd}{w_said[f]}",
                    }
            else:
                rows = zip(*columns, d1, v1, d2, v2, g_said, fmt.factor_list(g_said))
                for f, zi, loop, (box, text), dd1, vv1, dd2, vv2, nd, fd in rows:
                    yield {
                        "type": "event",
                        "phase": phase,
                        "loop": loop,
                        "reads": [dz_box[zi], box, w_box[f]],
                        "writes": [
                            {"tensor": "dw", "start": dw_start[f], "stop": dw_stop[f], "step": one4,
                             "delta": dd1, "value": vv1},
                            {"tensor": "dxp", "start": box["start"], "stop": box["stop"], "step": box["step"],
                             "delta": dd2, "value": vv2},
                        ],
                        "text": f"{dz_name[zi]} = {nd}: {dw_said[f]}{fd}·{text}; d{text} += {fd}{w_said[f]}",
                    }
        elif dw:
            for f, zi, loop, (box, text), dd1, vv1, nd, fd in zip(*columns, d1, v1, g_said, fmt.factor_list(g_said)):
                yield {
                    "type": "event",
                    "phase": phase,
                    "loop": loop,
                    "reads": [dz_box[zi], box],
                    "writes": [{"tensor": "dw", "start": dw_start[f], "stop": dw_stop[f], "step": one4,
                                "delta": dd1, "value": vv1}],
                    "text": f"{dz_name[zi]} = {nd}: {dw_said[f]}{fd}·{text}",
                }
        else:
            for f, zi, loop, (box, text), dd2, vv2, nd, fd in zip(*columns, d2, v2, g_said, fmt.factor_list(g_said)):
                yield {
                    "type": "event",
                    "phase": phase,
                    "loop": loop,
                    "reads": [dz_box[zi], w_box[f]],
                    "writes": [{"tensor": "dxp", "start": box["start"], "stop": box["stop"], "step": box["step"],
                                "delta": dd2, "value": vv2}],
                    "text": f"{dz_name[zi]} = {nd}: d{text} += {fd}{w_said[f]}",
                }


def _shared_rows(to_lists, rows: np.ndarray, keys: np.ndarray) -> list[list]:
    """``to_lists(rows)``, one list per row, except that rows with equal ``keys`` (int
    array (K,); equal keys must mean bit-identical rows) share one list: fewer objects
    to make and free when values repeat. ``rows``: (K, cells)."""
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if 2 * unique.size > keys.size:
        return to_lists(rows)
    lists = to_lists(rows[first])
    return [lists[k] for k in inverse.ravel().tolist()]


def db_window(ctx: TraceContext) -> Iterator[dict]:
    """One event per filter: db[f] = Σ dz[:, f] over images and positions."""
    n_, f_, ho, wo = ctx.spec.out_shape
    db = ctx.ref["db"]
    for f in range(f_):
        start, stop = (0, f, 0, 0), (n_, f + 1, ho, wo)
        value = float(db[f])
        yield {
            "type": "event",
            "phase": "db",
            "loop": {"f": f},
            "reads": [ctx.box("dz", start, stop)],
            "writes": [ctx.write_cell("db", (f,), value)],
            "text": f"db[{f}] = Σ {ctx.text('dz', start, stop)} = {fmt.number(value)}",
        }
