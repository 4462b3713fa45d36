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
and the running values (``events.running_sums``, bit-identical to adding one event at
a time) and turns them into lists in bulk; window Boxes and texts are cached (bounded).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from . import format as fmt
from .events import TraceContext, running_sums
from .loops import ordered_chunks

__all__ = ["EXPAND_LIMIT", "backward_window", "db_window", "forward_window"]

EXPAND_LIMIT = 9
_CACHE_LIMIT = 1 << 14


class _Windows:
    """Receptive-field geometry, per-filter pieces and a bounded cache of window Boxes."""

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
        self.step = (1, 1, *spec.dilation)
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
        self._windows: dict[int, tuple[dict, str]] = {}

    @classmethod
    def of(cls, ctx: TraceContext) -> "_Windows":
        """The trace's _Windows, shared by its window phases (and their Box cache)."""
        geo = ctx.memo.get("direct.windows")
        if geo is None:
            geo = ctx.memo["direct.windows"] = cls(ctx)
        return geo

    def chunks(self, order: str):
        """Per chunk of positions in loop order: n, f, i, j, window key, base cell of
        the window on xp (flat), flat index into z (all int arrays)."""
        for n, f, i, j in ordered_chunks(order, "nfij", self.sizes):
            g = f // self.fg
            key = ((n * self.G + g) * self.Ho + i) * self.Wo + j
            base = ((n * self.C + g * self.cg) * self.Hp + i * self.sh) * self.Wp + j * self.sw
            zi = ((n * self.F + f) * self.Ho + i) * self.Wo + j
            yield n, f, i, j, key, base, zi

    def window(self, key: int, n: int, f: int, i: int, j: int) -> tuple[dict, str]:
        """The xp Box of a receptive field and its text (cached)."""
        hit = self._windows.get(key)
        if hit is None:
            if len(self._windows) >= _CACHE_LIMIT:
                self._windows.clear()
            c0 = (f // self.fg) * self.cg
            r0, q0 = i * self.sh, j * self.sw
            start, stop = (n, c0, r0, q0), (n + 1, c0 + self.cg, r0 + self.eh, q0 + self.ew)
            box = self.ctx.box("xp", start, stop, self.step)
            text = fmt.box_text("xp", box["start"], box["stop"], box["step"], self.ctx.shape["xp"])
            hit = self._windows[key] = (box, text)
        return hit

    def external(self, block: np.ndarray) -> list:
        """(E, cells) in internal (c, k, l) order -> lists in the trace's order."""
        if self.cell_order is not None:
            block = block[:, self.cell_order]
        return block.tolist()


def forward_window(ctx: TraceContext) -> Iterator[dict]:
    geo = _Windows.of(ctx)
    xp_flat = ctx.ref["xp"].reshape(-1)
    w_rows = ctx.ref["w"].reshape(geo.F, -1)
    z_flat = ctx.ref["z"].reshape(-1)
    state = ctx.state["z"].reshape(-1)
    Z = ctx.cells("z")
    zn, zs, ze = Z.names, Z.starts, Z.stops
    bias = ctx.ref.get("b")
    has_bias = bias is not None
    if has_bias:
        b_box = [ctx.box("b", (f,), (f + 1,)) for f in range(geo.F)]
        b_sym = [f" + b[{f}]" for f in range(geo.F)]
        b_num = [f" + {fmt.factor(v)}" for v in bias.tolist()]
    expand = geo.cells <= EXPAND_LIMIT
    if expand:
        x_fac = ctx.cells("xp").factors
        w_fac = geo.external(np.vectorize(fmt.factor, otypes=[object])(w_rows)) if w_rows.size else []
    one = [1, 1, 1, 1]
    for n_, f_, i_, j_, key_, base_, zi_ in geo.chunks(ctx.rc.loop_order):
        values = z_flat[zi_]
        state[zi_] = 0.0 + values
        xcells = geo.external(base_[:, None] + geo.offsets[None, :]) if expand else None
        rows = zip(n_.tolist(), f_.tolist(), i_.tolist(), j_.tolist(), key_.tolist(), zi_.tolist(),
                   (0.0 + values).tolist(), xcells or [None] * len(values), fmt.number_list(values))
        for n, f, i, j, key, zi, v, cells, said in rows:
            box, text = geo.window(key, n, f, i, j)
            if expand:
                rhs = " + ".join([f"{x_fac[c]}·{wf}" for c, wf in zip(cells, w_fac[f])])
                if has_bias:
                    rhs += b_num[f]
            else:
                rhs = f"Σ {text}·{geo.w_text[f]}" + (b_sym[f] if has_bias else "")
            yield {
                "type": "event",
                "phase": "forward",
                "loop": {"n": n, "f": f, "i": i, "j": j},
                "reads": [box, geo.w_box[f], b_box[f]] if has_bias else [box, geo.w_box[f]],
                "writes": [{"tensor": "z", "start": zs[zi], "stop": ze[zi], "step": one, "delta": [v], "value": [v]}],
                "text": f"{zn[zi]} = {rhs} = {said}",
            }


def backward_window(ctx: TraceContext, phase: str, order: str, db: bool, dw: bool, dx: bool) -> Iterator[dict]:
    """Per output position: dz back through the window into db, dw and/or dxp."""
    geo = _Windows.of(ctx)
    xp_flat = ctx.ref["xp"].reshape(-1)
    w_rows = ctx.ref["w"].reshape(geo.F, -1)
    dz_flat = ctx.ref["dz"].reshape(-1)
    DZ = ctx.cells("dz")
    dz_box, dz_name = DZ.boxes, DZ.names
    st_db = ctx.state["db"].reshape(-1) if db else None
    st_dw = ctx.state["dw"].reshape(-1) if dw else None
    st_dx = ctx.state["dxp"].reshape(-1) if dx else None
    cell_range = np.arange(geo.cells)
    number, num_get = fmt.number, fmt._numbers.get
    window, cache_get = geo.window, geo._windows.get
    w_box, w_text = geo.w_box, geo.w_text
    if dw:
        dw_start = [b["start"] for b in geo.dw_box]
        dw_stop = [b["stop"] for b in geo.dw_box]
        dw_text = geo.dw_text
    one1, one4 = [1], [1, 1, 1, 1]
    db_start = [[f] for f in range(geo.F)]
    db_stop = [[f + 1] for f in range(geo.F)]
    for n_, f_, i_, j_, key_, base_, zi_ in geo.chunks(order):
        count = len(zi_)
        g = dz_flat[zi_]
        none = [None] * count
        db_values = running_sums(st_db, f_, g).tolist() if db else none
        xcells = base_[:, None] + geo.offsets[None, :]
        d1 = v1 = d2 = v2 = none
        if dw:
            d1 = g[:, None] * xp_flat[xcells]
            v1 = running_sums(st_dw, (f_[:, None] * geo.cells + cell_range).ravel(), d1.ravel())
            d1, v1 = geo.external(d1), geo.external(v1.reshape(count, -1))
        if dx:
            d2 = g[:, None] * w_rows[f_]
            v2 = running_sums(st_dx, xcells.ravel(), d2.ravel())
            d2, v2 = geo.external(d2), geo.external(v2.reshape(count, -1))
        g_text = fmt.number_list(g)
        rows = zip(n_.tolist(), f_.tolist(), i_.tolist(), j_.tolist(), key_.tolist(), zi_.tolist(), g.tolist(),
                   db_values, d1, v1, d2, v2, g_text, fmt.factor_list(g_text))
        for n, f, i, j, key, zi, d, vb, dd1, vv1, dd2, vv2, nd, fd in rows:
            hit = cache_get(key)
            box, text = hit if hit is not None else window(key, n, f, i, j)
            if dx and dw:  # fused
                reads = [dz_box[zi], box, w_box[f]]
                writes = [
                    {"tensor": "dw", "start": dw_start[f], "stop": dw_stop[f], "step": one4, "delta": dd1, "value": vv1},
                    {"tensor": "dxp", "start": box["start"], "stop": box["stop"], "step": box["step"],
                     "delta": dd2, "value": vv2},
                ]
                said = f"{dw_text[f]} += {fd}·{text}; d{text} += {fd}·{w_text[f]}"
                if db:
                    writes.insert(0, {"tensor": "db", "start": db_start[f], "stop": db_stop[f], "step": one1,
                                      "delta": [d], "value": [vb]})
                    said = f"{dz_name[zi]} = {nd}: db[{f}] += {nd} → {num_get(vb) or number(vb)}; {said}"
                else:
                    said = f"{dz_name[zi]} = {nd}: {said}"
            elif dw:
                reads = [dz_box[zi], box]
                writes = [{"tensor": "dw", "start": dw_start[f], "stop": dw_stop[f], "step": one4,
                           "delta": dd1, "value": vv1}]
                said = f"{dz_name[zi]} = {nd}: {dw_text[f]} += {fd}·{text}"
            else:
                reads = [dz_box[zi], w_box[f]]
                writes = [{"tensor": "dxp", "start": box["start"], "stop": box["stop"], "step": box["step"],
                           "delta": dd2, "value": vv2}]
                said = f"{dz_name[zi]} = {nd}: d{text} += {fd}·{w_text[f]}"
            yield {
                "type": "event",
                "phase": phase,
                "loop": {"n": n, "f": f, "i": i, "j": j},
                "reads": reads,
                "writes": writes,
                "text": said,
            }


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
