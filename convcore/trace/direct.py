"""The direct view: the loops of the seeds, over output positions or single MACs.

Window granularity (loop letters n, f, i, j; default order "nfij"):

- ``forward``: one event per output position (n, f, i, j): reads the receptive field
  ``xp[n, group channels, i·sh : i·sh + extent : dh, j·sw : … : dw]`` and the filter
  ``w[f]`` (and ``b[f]``), writes ``z[n,f,i,j]``. N·F·Ho·Wo events.
- fused ``backward``: per output position, dz[n,f,i,j] goes back through the same
  window: writes ``db[f] += dz`` (with a bias), ``dw[f] += dz·window`` and
  ``dxp[window] += dz·w[f]``. N·F·Ho·Wo events.
- separate: ``db`` (one event per filter, the sum of dz over n, i, j: F events), then
  ``dw`` (per position, ``dw[f] += dz·window``), then ``dx`` (per position, in
  ``dx_loop_order``: ``dxp[window] += dz·w[f]``), as CS231n's naive code.

Mac granularity (letters n, f, i, j, c, k, l; default "nfijckl"): see ``direct_mac``.
"""

from __future__ import annotations

from typing import Iterator

from . import format as fmt
from .direct_mac import mac_backward_phases, mac_forward_phase
from .events import TraceContext
from .loops import ordered
from .views import Phase, View, register_view

__all__ = ["DirectView", "EXPAND_LIMIT"]

EXPAND_LIMIT = 9  # forward text lists every product when a window has at most this many


def output_sizes(spec) -> dict[str, int]:
    n, f, ho, wo = spec.out_shape
    return {"n": n, "f": f, "i": ho, "j": wo, "c": spec.channels_per_group, "k": spec.KH, "l": spec.KW}


class _Windows:
    """Receptive-field geometry and per-filter pieces shared by the window phases."""

    def __init__(self, ctx: TraceContext):
        spec = ctx.spec
        self.spec = spec
        self.cg, self.fg = spec.channels_per_group, spec.filters_per_group
        self.eh, self.ew = spec.kernel_extent
        self.sh, self.sw = spec.stride
        self.step = (1, 1, *spec.dilation)
        cg, kh, kw = self.cg, spec.KH, spec.KW
        self.w_box = [ctx.box("w", (f, 0, 0, 0), (f + 1, cg, kh, kw)) for f in range(spec.F)]
        self.w_text = [ctx.text("w", (f, 0, 0, 0), (f + 1, cg, kh, kw)) for f in range(spec.F)]
        self.dw_box = ((0, 0, 0), (cg, kh, kw))

    def window(self, n: int, f: int, i: int, j: int) -> tuple[tuple, tuple]:
        """Internal start and stop of the receptive field of output (n, f, i, j) on xp."""
        c0 = (f // self.fg) * self.cg
        r0, q0 = i * self.sh, j * self.sw
        return (n, c0, r0, q0), (n + 1, c0 + self.cg, r0 + self.eh, q0 + self.ew)

    def values(self, xp, start, stop):
        """The receptive field's cells, (C/G, KH, KW)."""
        n, c0, r0, q0 = start
        _, c1, r1, q1 = stop
        return xp[n, c0:c1, r0:r1:self.step[2], q0:q1:self.step[3]]


def _forward_window(ctx: TraceContext) -> Iterator[dict]:
    spec, rc = ctx.spec, ctx.rc
    geo = _Windows(ctx)
    xp, w, z = ctx.ref["xp"], ctx.ref["w"], ctx.ref["z"]
    bias = ctx.ref.get("b")
    expand = spec.macs_per_output <= EXPAND_LIMIT
    b_box = [ctx.box("b", (f,), (f + 1,)) for f in range(spec.F)] if bias is not None else None
    w_flat = [w[f].ravel().tolist() for f in range(spec.F)]
    step = geo.step
    for n, f, i, j in ordered(rc.loop_order, "nfij", output_sizes(spec)):
        start, stop = geo.window(n, f, i, j)
        value = float(z[n, f, i, j])
        reads = [ctx.box("xp", start, stop, step), geo.w_box[f]]
        if expand:
            terms = [
                f"{fmt.factor(a)}·{fmt.factor(b)}"
                for a, b in zip(geo.values(xp, start, stop).ravel().tolist(), w_flat[f])
            ]
            rhs = " + ".join(terms)
            if bias is not None:
                rhs += f" + {fmt.factor(float(bias[f]))}"
        else:
            rhs = f"Σ {ctx.text('xp', start, stop, step)}·{geo.w_text[f]}"
            if bias is not None:
                rhs += f" + b[{f}]"
        if bias is not None:
            reads.append(b_box[f])
        yield {
            "type": "event",
            "phase": "forward",
            "loop": {"n": n, "f": f, "i": i, "j": j},
            "reads": reads,
            "writes": [ctx.write_cell("z", (n, f, i, j), value)],
            "text": f"{ctx.cell_text('z', (n, f, i, j))} = {rhs} = {fmt.number(value)}",
        }


def _backward_window(ctx: TraceContext, phase: str, order: str, db: bool, dw: bool, dx: bool) -> Iterator[dict]:
    """Per output position: dz back through the window into db, dw and/or dxp."""
    spec = ctx.spec
    geo = _Windows(ctx)
    xp, w, dz = ctx.ref["xp"], ctx.ref["w"], ctx.ref["dz"]
    step = geo.step
    cg, kh, kw = geo.cg, spec.KH, spec.KW
    for n, f, i, j in ordered(order, "nfij", output_sizes(spec)):
        start, stop = geo.window(n, f, i, j)
        d = float(dz[n, f, i, j])
        dz_name = ctx.cell_text("dz", (n, f, i, j))
        x_text = ctx.text("xp", start, stop, step)
        reads = [ctx.box("dz", (n, f, i, j), (n + 1, f + 1, i + 1, j + 1))]
        writes = []
        parts = []
        if dw:
            reads.append(ctx.box("xp", start, stop, step))
        if dx:
            reads.append(geo.w_box[f])
        if db:
            wr = ctx.write_cell("db", (f,), d)
            writes.append(wr)
            parts.append(f"db[{f}] += {fmt.number(d)} → {fmt.number(wr['value'][0])}")
        if dw:
            writes.append(ctx.write("dw", (f, 0, 0, 0), (f + 1, cg, kh, kw), None, d * geo.values(xp, start, stop)))
            parts.append(f"{ctx.text('dw', (f, 0, 0, 0), (f + 1, cg, kh, kw))} += {fmt.factor(d)}·{x_text}")
        if dx:
            writes.append(ctx.write("dxp", start, stop, step, d * w[f]))
            parts.append(f"{ctx.text('dxp', start, stop, step)} += {fmt.factor(d)}·{geo.w_text[f]}")
        yield {
            "type": "event",
            "phase": phase,
            "loop": {"n": n, "f": f, "i": i, "j": j},
            "reads": reads,
            "writes": writes,
            "text": f"{dz_name} = {fmt.number(d)}: " + "; ".join(parts),
        }


def _db_window(ctx: TraceContext) -> Iterator[dict]:
    """One event per filter: db[f] = Σ dz[:, f] over images and positions."""
    spec = ctx.spec
    n_, f_, ho, wo = spec.out_shape
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


class DirectView(View):
    name = "direct"
    granularities = ("window", "mac")

    def loop_letters(self, granularity: str) -> str:
        return "nfij" if granularity == "window" else "nfijckl"

    def forward_phases(self, rc) -> list[Phase]:
        if rc.granularity == "mac":
            return [mac_forward_phase(rc)]
        n, f, ho, wo = rc.spec.out_shape
        return [Phase("forward", n * f * ho * wo, _forward_window)]

    def backward_phases(self, rc) -> list[Phase]:
        if rc.granularity == "mac":
            return mac_backward_phases(rc)
        n, f, ho, wo = rc.spec.out_shape
        positions = n * f * ho * wo
        bias = rc.has_bias
        if rc.backward == "fused":
            return [Phase(
                "backward", positions,
                lambda ctx: _backward_window(ctx, "backward", rc.loop_order, bias, True, True),
            )]
        phases = [Phase("db", f, _db_window)] if bias else []
        phases.append(Phase("dw", positions, lambda ctx: _backward_window(ctx, "dw", rc.loop_order, False, True, False)))
        phases.append(Phase("dx", positions, lambda ctx: _backward_window(ctx, "dx", rc.dx_loop_order, False, False, True)))
        return phases


register_view(DirectView())
