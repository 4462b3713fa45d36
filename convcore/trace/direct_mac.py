"""The direct view at mac granularity: one event per multiply-accumulate.

Loop letters n, f, i, j (output position), c (channel within the filter's group, the
index into w's second axis), k, l (kernel row and column); any permutation is a valid
``loop_order``. A MAC (n, f, i, j, c, k, l) pairs ``xp[n, g·C/G + c, i·sh + k·dh,
j·sw + l·dw]`` (g = the group of filter f) with ``w[f, c, k, l]`` and ``z`` / ``dz``
at ``[n, f, i, j]``.

- ``forward``: ``z[n,f,i,j] += xp·w``; the MAC with c = k = l = 0 also adds ``b[f]``
  (and reads it), so replaying from zero gives z with its bias.
- fused ``backward``: ``dw[f,c,k,l] += xp·dz`` and ``dxp[…] += w·dz`` in one event;
  the MAC with c = k = l = 0 also writes ``db[f] += dz`` (with a bias).
- separate: ``db`` (one event per output position, letters n, f, i, j in the order
  they appear in ``loop_order``), ``dw`` (``loop_order``), ``dx`` (``dx_loop_order``).
  Seed 004: loop_order "nfijklc", dx_loop_order "nijklfc".

Speed: indices are computed with NumPy per chunk of iterations and turned into Python
lists in bulk; per-cell Boxes and text pieces come from ``TraceContext.cells``; the
running sums live in Python lists (copied back to the context's state at the end);
events share the per-cell read Boxes.
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from . import format as fmt
from .events import TraceContext
from .loops import ordered_chunks, sub_order
from .views import Phase

__all__ = ["mac_backward_phases", "mac_forward_phase"]


def _sizes(spec) -> dict[str, int]:
    n, f, ho, wo = spec.out_shape
    return {"n": n, "f": f, "i": ho, "j": wo, "c": spec.channels_per_group, "k": spec.KH, "l": spec.KW}


def _mac_chunks(spec, order: str) -> Iterator[tuple[list, ...]]:
    """Per chunk: lists n, f, i, j, c, k, l, xp flat index, w flat index, z flat index,
    first (c = k = l = 0), all in loop order."""
    _, cc, hp, wp = spec.padded_shape
    ff, cg, kh, kw = spec.w_shape
    ho, wo = spec.out_hw
    sh, sw = spec.stride
    dh, dw = spec.dilation
    fg = spec.filters_per_group
    for n, f, i, j, c, k, l in ordered_chunks(order, "nfijckl", _sizes(spec)):
        ch = (f // fg) * cg + c
        xi = ((n * cc + ch) * hp + i * sh + k * dh) * wp + j * sw + l * dw
        wi = ((f * cg + c) * kh + k) * kw + l
        zi = ((n * ff + f) * ho + i) * wo + j
        first = (c == 0) & (k == 0) & (l == 0)
        yield tuple(a.tolist() for a in (n, f, i, j, c, k, l, xi, wi, zi, first))


def _running(ctx: TraceContext, name: str) -> list[float]:
    return ctx.state[name].ravel().tolist()


def _store(ctx: TraceContext, name: str, running: list[float]) -> None:
    arr = ctx.state[name]
    arr[...] = np.asarray(running, dtype=np.float64).reshape(arr.shape)


def _forward_mac(ctx: TraceContext) -> Iterator[dict]:
    X, Wc, Z = ctx.cells("xp"), ctx.cells("w"), ctx.cells("z")
    xv, wv, xs, ws = X.values, Wc.values, X.factors, Wc.factors
    xb, wb, xn, wn, zn, zs, ze = X.boxes, Wc.boxes, X.names, Wc.names, Z.names, Z.starts, Z.stops
    one = [1, 1, 1, 1]
    st = _running(ctx, "z")
    cache, number = fmt._numbers, fmt.number
    bias = ctx.ref.get("b")
    if bias is not None:
        bv = bias.tolist()
        bb = [ctx.box("b", (f,), (f + 1,)) for f in range(len(bv))]
        bt = [f" + b[{f}]" for f in range(len(bv))]
        bs = [f" + {fmt.factor(v)}" for v in bv]
    try:
        for n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, first_ in _mac_chunks(ctx.spec, ctx.rc.loop_order):
            for n, f, i, j, c, k, l, xi, wi, zi, first in zip(n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, first_):
                d = xv[xi] * wv[wi]
                if first and bias is not None:
                    d += bv[f]
                    reads = [xb[xi], wb[wi], bb[f]]
                    sb, vb = bt[f], bs[f]
                else:
                    reads = [xb[xi], wb[wi]]
                    sb = vb = ""
                v = st[zi] + d
                st[zi] = v
                s = cache.get(v)
                if s is None:
                    s = number(v)
                yield {
                    "type": "event",
                    "phase": "forward",
                    "loop": {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                    "reads": reads,
                    "writes": [{"tensor": "z", "start": zs[zi], "stop": ze[zi], "step": one, "delta": [d], "value": [v]}],
                    "text": f"{zn[zi]} += {xn[xi]}·{wn[wi]}{sb} = {xs[xi]}·{ws[wi]}{vb} → {s}",
                }
    finally:
        _store(ctx, "z", st)


def _fused_mac(ctx: TraceContext) -> Iterator[dict]:
    X, Wc, DZ = ctx.cells("xp"), ctx.cells("w"), ctx.cells("dz")
    DW, DXP = ctx.cells("dw"), ctx.cells("dxp")
    xv, wv, dzv = X.values, Wc.values, DZ.values
    xs, ws, dzs = X.factors, Wc.factors, DZ.factors
    xb, wb, dzb = X.boxes, Wc.boxes, DZ.boxes
    xn, wn, dzn = X.names, Wc.names, DZ.names
    dwn, dws, dwe = DW.names, DW.starts, DW.stops
    dxn, dxs, dxe = DXP.names, DXP.starts, DXP.stops
    one = [1, 1, 1, 1]
    st_w, st_x = _running(ctx, "dw"), _running(ctx, "dxp")
    bias = ctx.rc.has_bias
    st_b = _running(ctx, "db") if bias else None
    cache, number = fmt._numbers, fmt.number
    try:
        for n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, first_ in _mac_chunks(ctx.spec, ctx.rc.loop_order):
            for n, f, i, j, c, k, l, xi, wi, zi, first in zip(n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, first_):
                g = dzv[zi]
                d1 = xv[xi] * g
                v1 = st_w[wi] + d1
                st_w[wi] = v1
                d2 = wv[wi] * g
                v2 = st_x[xi] + d2
                st_x[xi] = v2
                s1 = cache.get(v1)
                if s1 is None:
                    s1 = number(v1)
                s2 = cache.get(v2)
                if s2 is None:
                    s2 = number(v2)
                writes = [
                    {"tensor": "dw", "start": dws[wi], "stop": dwe[wi], "step": one, "delta": [d1], "value": [v1]},
                    {"tensor": "dxp", "start": dxs[xi], "stop": dxe[xi], "step": one, "delta": [d2], "value": [v2]},
                ]
                text = (
                    f"{dwn[wi]} += {xn[xi]}·{dzn[zi]} = {xs[xi]}·{dzs[zi]} → {s1}; "
                    f"{dxn[xi]} += {wn[wi]}·{dzn[zi]} = {ws[wi]}·{dzs[zi]} → {s2}"
                )
                if first and bias:
                    vb = st_b[f] + g
                    st_b[f] = vb
                    writes.insert(0, {"tensor": "db", "start": [f], "stop": [f + 1], "step": [1], "delta": [g], "value": [vb]})
                    text = f"db[{f}] += {dzn[zi]} = {number(g)} → {number(vb)}; " + text
                yield {
                    "type": "event",
                    "phase": "backward",
                    "loop": {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                    "reads": [xb[xi], wb[wi], dzb[zi]],
                    "writes": writes,
                    "text": text,
                }
    finally:
        _store(ctx, "dw", st_w)
        _store(ctx, "dxp", st_x)
        if bias:
            _store(ctx, "db", st_b)


def _dw_mac(ctx: TraceContext) -> Iterator[dict]:
    X, DZ, DW = ctx.cells("xp"), ctx.cells("dz"), ctx.cells("dw")
    xv, dzv, xs, dzs = X.values, DZ.values, X.factors, DZ.factors
    xb, dzb, xn, dzn = X.boxes, DZ.boxes, X.names, DZ.names
    dwn, dws, dwe = DW.names, DW.starts, DW.stops
    one = [1, 1, 1, 1]
    st = _running(ctx, "dw")
    cache, number = fmt._numbers, fmt.number
    try:
        for n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, _ in _mac_chunks(ctx.spec, ctx.rc.loop_order):
            for n, f, i, j, c, k, l, xi, wi, zi in zip(n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_):
                d = xv[xi] * dzv[zi]
                v = st[wi] + d
                st[wi] = v
                s = cache.get(v)
                if s is None:
                    s = number(v)
                yield {
                    "type": "event",
                    "phase": "dw",
                    "loop": {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                    "reads": [xb[xi], dzb[zi]],
                    "writes": [{"tensor": "dw", "start": dws[wi], "stop": dwe[wi], "step": one, "delta": [d], "value": [v]}],
                    "text": f"{dwn[wi]} += {xn[xi]}·{dzn[zi]} = {xs[xi]}·{dzs[zi]} → {s}",
                }
    finally:
        _store(ctx, "dw", st)


def _dx_mac(ctx: TraceContext) -> Iterator[dict]:
    Wc, DZ, DXP = ctx.cells("w"), ctx.cells("dz"), ctx.cells("dxp")
    wv, dzv, ws, dzs = Wc.values, DZ.values, Wc.factors, DZ.factors
    wb, dzb, wn, dzn = Wc.boxes, DZ.boxes, Wc.names, DZ.names
    dxn, dxs, dxe = DXP.names, DXP.starts, DXP.stops
    one = [1, 1, 1, 1]
    st = _running(ctx, "dxp")
    cache, number = fmt._numbers, fmt.number
    try:
        for n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, _ in _mac_chunks(ctx.spec, ctx.rc.dx_loop_order):
            for n, f, i, j, c, k, l, xi, wi, zi in zip(n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_):
                d = wv[wi] * dzv[zi]
                v = st[xi] + d
                st[xi] = v
                s = cache.get(v)
                if s is None:
                    s = number(v)
                yield {
                    "type": "event",
                    "phase": "dx",
                    "loop": {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                    "reads": [wb[wi], dzb[zi]],
                    "writes": [{"tensor": "dxp", "start": dxs[xi], "stop": dxe[xi], "step": one, "delta": [d], "value": [v]}],
                    "text": f"{dxn[xi]} += {wn[wi]}·{dzn[zi]} = {ws[wi]}·{dzs[zi]} → {s}",
                }
    finally:
        _store(ctx, "dxp", st)


def _db_mac(ctx: TraceContext) -> Iterator[dict]:
    """One event per output position: db[f] += dz[n,f,i,j]."""
    spec = ctx.spec
    DZ = ctx.cells("dz")
    dzv, dzb, dzn = DZ.values, DZ.boxes, DZ.names
    _, ff, ho, wo = spec.out_shape
    st = _running(ctx, "db")
    number = fmt.number
    order = sub_order(ctx.rc.loop_order, "nfij")
    try:
        for n_, f_, i_, j_ in ordered_chunks(order, "nfij", _sizes(spec)):
            for n, f, i, j in zip(n_.tolist(), f_.tolist(), i_.tolist(), j_.tolist()):
                zi = ((n * ff + f) * ho + i) * wo + j
                g = dzv[zi]
                v = st[f] + g
                st[f] = v
                yield {
                    "type": "event",
                    "phase": "db",
                    "loop": {"n": n, "f": f, "i": i, "j": j},
                    "reads": [dzb[zi]],
                    "writes": [{"tensor": "db", "start": [f], "stop": [f + 1], "step": [1], "delta": [g], "value": [v]}],
                    "text": f"db[{f}] += {dzn[zi]} = {number(g)} → {number(v)}",
                }
    finally:
        _store(ctx, "db", st)


def mac_forward_phase(rc) -> Phase:
    """Phase "forward": N·F·Ho·Wo·(C/G)·KH·KW events."""
    return Phase("forward", math.prod(rc.spec.out_shape) * rc.spec.macs_per_output, _forward_mac)


def mac_backward_phases(rc) -> list[Phase]:
    """Fused: "backward" (one event per MAC); separate: "db" (per output position,
    with a bias), "dw" and "dx" (per MAC)."""
    positions = math.prod(rc.spec.out_shape)
    macs = positions * rc.spec.macs_per_output
    if rc.backward == "fused":
        return [Phase("backward", macs, _fused_mac)]
    phases = [Phase("db", positions, _db_mac)] if rc.has_bias else []
    phases += [Phase("dw", macs, _dw_mac), Phase("dx", macs, _dx_mac)]
    return phases
