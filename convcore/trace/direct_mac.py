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

Speed: per chunk of iterations NumPy computes the indices, the products, the running
values (``events.running_sums``, bit-identical to adding one MAC at a time) and their
text (``format.number_list``), all turned into lists in bulk; per-cell Boxes and text
pieces come from ``TraceContext.cells``; events share the per-cell read Boxes.
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from . import format as fmt
from .events import TraceContext, running_sums
from .loops import ordered_chunks, sub_order
from .views import Phase

__all__ = ["mac_backward_phases", "mac_forward_phase"]


def _sizes(spec) -> dict[str, int]:
    n, f, ho, wo = spec.out_shape
    return {"n": n, "f": f, "i": ho, "j": wo, "c": spec.channels_per_group, "k": spec.KH, "l": spec.KW}


def _mac_chunks(spec, order: str) -> Iterator[tuple[np.ndarray, ...]]:
    """Per chunk of MACs in loop order: int arrays n, f, i, j, c, k, l, the flat indices
    into xp, w and z, and the bool array first (c = k = l = 0)."""
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
        yield n, f, i, j, c, k, l, xi, wi, zi, (c == 0) & (k == 0) & (l == 0)


def _lists(*arrays: np.ndarray) -> list[list]:
    return [a.tolist() for a in arrays]


def _forward_mac(ctx: TraceContext) -> Iterator[dict]:
    X, Wc, Z = ctx.cells("xp"), ctx.cells("w"), ctx.cells("z")
    xs, ws = X.factors, Wc.factors
    xb, wb, xn, wn, zn, zs, ze = X.boxes, Wc.boxes, X.names, Wc.names, Z.names, Z.starts, Z.stops
    x_flat, w_flat = ctx.ref["xp"].reshape(-1), ctx.ref["w"].reshape(-1)
    state = ctx.state["z"].reshape(-1)
    one = [1, 1, 1, 1]
    bias = ctx.ref.get("b")
    if bias is not None:
        bb = [ctx.box("b", (f,), (f + 1,)) for f in range(len(bias))]
        bt = [f" + b[{f}]" for f in range(len(bias))]
        bs = [f" + {fmt.factor(v)}" for v in bias.tolist()]
    for n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, first_ in _mac_chunks(ctx.spec, ctx.rc.loop_order):
        delta = x_flat[xi_] * w_flat[wi_]
        if bias is not None:
            delta[first_] += bias[f_[first_]]
        value = running_sums(state, zi_, delta)
        said = fmt.number_list(value)
        cols = _lists(n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, delta, value)
        if bias is None:
            for n, f, i, j, c, k, l, xi, wi, zi, d, v, s in zip(*cols, said):
                yield {
                    "type": "event",
                    "phase": "forward",
                    "loop": {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                    "reads": [xb[xi], wb[wi]],
                    "writes": [{"tensor": "z", "start": zs[zi], "stop": ze[zi], "step": one, "delta": [d], "value": [v]}],
                    "text": f"{zn[zi]} += {xn[xi]}·{wn[wi]} = {xs[xi]}·{ws[wi]} → {s}",
                }
        else:
            for n, f, i, j, c, k, l, xi, wi, zi, d, v, s, first in zip(*cols, said, first_.tolist()):
                if first:
                    reads = [xb[xi], wb[wi], bb[f]]
                    text = f"{zn[zi]} += {xn[xi]}·{wn[wi]}{bt[f]} = {xs[xi]}·{ws[wi]}{bs[f]} → {s}"
                else:
                    reads = [xb[xi], wb[wi]]
                    text = f"{zn[zi]} += {xn[xi]}·{wn[wi]} = {xs[xi]}·{ws[wi]} → {s}"
                yield {
                    "type": "event",
                    "phase": "forward",
                    "loop": {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                    "reads": reads,
                    "writes": [{"tensor": "z", "start": zs[zi], "stop": ze[zi], "step": one, "delta": [d], "value": [v]}],
                    "text": text,
                }


def _fused_mac(ctx: TraceContext) -> Iterator[dict]:
    X, Wc, DZ = ctx.cells("xp"), ctx.cells("w"), ctx.cells("dz")
    DW, DXP = ctx.cells("dw"), ctx.cells("dxp")
    xs, ws, dzs = X.factors, Wc.factors, DZ.factors
    xb, wb, dzb = X.boxes, Wc.boxes, DZ.boxes
    xn, wn, dzn = X.names, Wc.names, DZ.names
    dwn, dws, dwe = DW.names, DW.starts, DW.stops
    dxn, dxs, dxe = DXP.names, DXP.starts, DXP.stops
    x_flat, w_flat, dz_flat = ctx.ref["xp"].reshape(-1), ctx.ref["w"].reshape(-1), ctx.ref["dz"].reshape(-1)
    st_w, st_x = ctx.state["dw"].reshape(-1), ctx.state["dxp"].reshape(-1)
    bias = ctx.rc.has_bias
    st_b = ctx.state["db"].reshape(-1) if bias else None
    one = [1, 1, 1, 1]
    number = fmt.number
    for n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, first_ in _mac_chunks(ctx.spec, ctx.rc.loop_order):
        g = dz_flat[zi_]
        d1 = x_flat[xi_] * g
        v1 = running_sums(st_w, wi_, d1)
        d2 = w_flat[wi_] * g
        v2 = running_sums(st_x, xi_, d2)
        vb = np.zeros_like(g)
        if bias:
            vb[first_] = running_sums(st_b, f_[first_], g[first_])
        s1, s2 = fmt.number_list(v1), fmt.number_list(v2)
        cols = _lists(n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, d1, v1, d2, v2, g, vb, first_)
        for n, f, i, j, c, k, l, xi, wi, zi, dd1, vv1, dd2, vv2, gg, vvb, first, t1, t2 in zip(*cols, s1, s2):
            writes = [
                {"tensor": "dw", "start": dws[wi], "stop": dwe[wi], "step": one, "delta": [dd1], "value": [vv1]},
                {"tensor": "dxp", "start": dxs[xi], "stop": dxe[xi], "step": one, "delta": [dd2], "value": [vv2]},
            ]
            text = (
                f"{dwn[wi]} += {xn[xi]}·{dzn[zi]} = {xs[xi]}·{dzs[zi]} → {t1}; "
                f"{dxn[xi]} += {wn[wi]}·{dzn[zi]} = {ws[wi]}·{dzs[zi]} → {t2}"
            )
            if first and bias:
                writes.insert(0, {"tensor": "db", "start": [f], "stop": [f + 1], "step": [1], "delta": [gg], "value": [vvb]})
                text = f"db[{f}] += {dzn[zi]} = {number(gg)} → {number(vvb)}; " + text
            yield {
                "type": "event",
                "phase": "backward",
                "loop": {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                "reads": [xb[xi], wb[wi], dzb[zi]],
                "writes": writes,
                "text": text,
            }


def _one_product_mac(ctx: TraceContext, phase: str, order: str, source: str, target: str) -> Iterator[dict]:
    """Separate dw (source xp, target dw) or dx (source w, target dxp): per MAC,
    ``target[cell] += source[cell]·dz[n,f,i,j]``."""
    S, DZ, T = ctx.cells(source), ctx.cells("dz"), ctx.cells(target)
    ss, dzs, sb, dzb, sn, dzn = S.factors, DZ.factors, S.boxes, DZ.boxes, S.names, DZ.names
    tn, ts, te = T.names, T.starts, T.stops
    s_flat, dz_flat = ctx.ref[source].reshape(-1), ctx.ref["dz"].reshape(-1)
    state = ctx.state[target].reshape(-1)
    to_xp = source == "xp"
    one = [1, 1, 1, 1]
    for n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, _ in _mac_chunks(ctx.spec, order):
        si_, ti_ = (xi_, wi_) if to_xp else (wi_, xi_)
        delta = s_flat[si_] * dz_flat[zi_]
        value = running_sums(state, ti_, delta)
        said = fmt.number_list(value)
        cols = _lists(n_, f_, i_, j_, c_, k_, l_, si_, ti_, zi_, delta, value)
        for n, f, i, j, c, k, l, si, ti, zi, d, v, s in zip(*cols, said):
            yield {
                "type": "event",
                "phase": phase,
                "loop": {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                "reads": [sb[si], dzb[zi]],
                "writes": [{"tensor": target, "start": ts[ti], "stop": te[ti], "step": one, "delta": [d], "value": [v]}],
                "text": f"{tn[ti]} += {sn[si]}·{dzn[zi]} = {ss[si]}·{dzs[zi]} → {s}",
            }


def _dw_mac(ctx: TraceContext) -> Iterator[dict]:
    return _one_product_mac(ctx, "dw", ctx.rc.loop_order, "xp", "dw")


def _dx_mac(ctx: TraceContext) -> Iterator[dict]:
    return _one_product_mac(ctx, "dx", ctx.rc.dx_loop_order, "w", "dxp")


def _db_mac(ctx: TraceContext) -> Iterator[dict]:
    """One event per output position: db[f] += dz[n,f,i,j]."""
    spec = ctx.spec
    DZ = ctx.cells("dz")
    dzb, dzn = DZ.boxes, DZ.names
    _, ff, ho, wo = spec.out_shape
    dz_flat = ctx.ref["dz"].reshape(-1)
    state = ctx.state["db"].reshape(-1)
    order = sub_order(ctx.rc.loop_order, "nfij")
    for n_, f_, i_, j_ in ordered_chunks(order, "nfij", _sizes(spec)):
        zi_ = ((n_ * ff + f_) * ho + i_) * wo + j_
        g = dz_flat[zi_]
        value = running_sums(state, f_, g)
        said, gs = fmt.number_list(value), fmt.number_list(g)
        for n, f, i, j, zi, d, v, s, t in zip(*_lists(n_, f_, i_, j_, zi_, g, value), said, gs):
            yield {
                "type": "event",
                "phase": "db",
                "loop": {"n": n, "f": f, "i": i, "j": j},
                "reads": [dzb[zi]],
                "writes": [{"tensor": "db", "start": [f], "stop": [f + 1], "step": [1], "delta": [d], "value": [v]}],
                "text": f"db[{f}] += {dzn[zi]} = {t} → {s}",
            }


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
