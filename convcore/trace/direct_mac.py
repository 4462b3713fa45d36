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
from collections.abc import Iterator

import numpy as np

from . import format as fmt
from .events import TraceContext, running_sums
from .loops import ordered_chunks, sub_order
from .model import Event, make_event, make_write
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


def _forward_mac(ctx: TraceContext) -> Iterator[Event]:
    """Phase "forward", MACs in ``loop_order``: each event reads one cell of xp and one
    of w (and ``b[f]`` at the first MAC of a position) and adds their product to
    ``z[n,f,i,j]``: ``z[…] += xp[…]·w[…] = 3·(−1) → −3``."""
    xp, w, z = ctx.cells("xp"), ctx.cells("w"), ctx.cells("z")
    xp_boxes, xp_names, xp_factors = xp.boxes, xp.names, xp.factors
    w_boxes, w_names, w_factors = w.boxes, w.names, w.factors
    z_name, z_names, z_starts, z_stops = z.name, z.names, z.starts, z.stops
    xp_flat, w_flat = ctx.ref["xp"].reshape(-1), ctx.ref["w"].reshape(-1)
    z_state = ctx.state["z"].reshape(-1)
    one = ctx.unit("z")
    bias = ctx.ref.get("b")
    if bias is not None:
        bias_box = [ctx.box("b", (f,), (f + 1,)) for f in range(len(bias))]
        bias_name = [f" + b[{f}]" for f in range(len(bias))]
        bias_said = [f" + {fmt.factor(value)}" for value in bias.tolist()]
    for chunk in _mac_chunks(ctx.spec, ctx.rc.loop_order):
        n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, first_ = chunk
        delta = xp_flat[xi_] * w_flat[wi_]
        if bias is not None:
            delta[first_] += bias[f_[first_]]
        else:
            first_ = np.zeros_like(first_)
        value = running_sums(z_state, zi_, delta)
        columns = _lists(n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, delta, value, first_)
        rows = zip(*columns, fmt.number_list(value))
        for n, f, i, j, c, k, l, xp_cell, w_cell, z_cell, add, now, first, said in rows:
            if first:
                reads = [xp_boxes[xp_cell], w_boxes[w_cell], bias_box[f]]
                text = (
                    f"{z_names[z_cell]} += {xp_names[xp_cell]}·{w_names[w_cell]}{bias_name[f]} = "
                    f"{xp_factors[xp_cell]}·{w_factors[w_cell]}{bias_said[f]} → {said}"
                )
            else:
                reads = [xp_boxes[xp_cell], w_boxes[w_cell]]
                text = (
                    f"{z_names[z_cell]} += {xp_names[xp_cell]}·{w_names[w_cell]} = "
                    f"{xp_factors[xp_cell]}·{w_factors[w_cell]} → {said}"
                )
            yield make_event(
                "forward",
                {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                reads,
                [make_write(z_name, z_starts[z_cell], z_stops[z_cell], one, [add], [now])],
                text,
            )


def _fused_mac(ctx: TraceContext) -> Iterator[Event]:
    """Phase "backward" (fused), MACs in ``loop_order``: each event reads one cell of xp,
    one of w and ``dz[n,f,i,j]`` and writes ``dw[f,c,k,l] += xp·dz`` and
    ``dxp[…] += w·dz``; the first MAC of a position also ``db[f] += dz`` (with a bias)."""
    xp, w, dz = ctx.cells("xp"), ctx.cells("w"), ctx.cells("dz")
    dw, dxp = ctx.cells("dw"), ctx.cells("dxp")
    xp_boxes, xp_names, xp_factors = xp.boxes, xp.names, xp.factors
    w_boxes, w_names, w_factors = w.boxes, w.names, w.factors
    dz_boxes, dz_names, dz_factors = dz.boxes, dz.names, dz.factors
    dw_names, dw_starts, dw_stops = dw.names, dw.starts, dw.stops
    dxp_name, dxp_names, dxp_starts, dxp_stops = dxp.name, dxp.names, dxp.starts, dxp.stops
    xp_flat, w_flat, dz_flat = ctx.ref["xp"].reshape(-1), ctx.ref["w"].reshape(-1), ctx.ref["dz"].reshape(-1)
    dw_state, dxp_state = ctx.state["dw"].reshape(-1), ctx.state["dxp"].reshape(-1)
    bias = ctx.rc.has_bias
    db_state = ctx.state["db"].reshape(-1) if bias else None
    one, one1 = ctx.unit("dxp"), ctx.ones(1)
    number = fmt.number
    for n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, first_ in _mac_chunks(ctx.spec, ctx.rc.loop_order):
        g = dz_flat[zi_]
        dw_delta = xp_flat[xi_] * g
        dw_value = running_sums(dw_state, wi_, dw_delta)
        dxp_delta = w_flat[wi_] * g
        dxp_value = running_sums(dxp_state, xi_, dxp_delta)
        db_value = np.zeros_like(g)
        if bias:
            db_value[first_] = running_sums(db_state, f_[first_], g[first_])
        else:
            first_ = np.zeros_like(first_)
        columns = _lists(
            n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, dw_delta, dw_value, dxp_delta, dxp_value, g, db_value, first_
        )
        said = zip(fmt.number_list(dw_value), fmt.number_list(dxp_value))
        rows = zip(*columns, said)
        for n, f, i, j, c, k, l, xp_cell, w_cell, z_cell, dw_add, dw_now, dxp_add, dxp_now, g_cell, db_now, first, (
            dw_said,
            dxp_said,
        ) in rows:
            writes = [
                make_write(dw.name, dw_starts[w_cell], dw_stops[w_cell], one, [dw_add], [dw_now]),
                make_write(dxp_name, dxp_starts[xp_cell], dxp_stops[xp_cell], one, [dxp_add], [dxp_now]),
            ]
            g_factor = dz_factors[z_cell]
            text = (
                f"{dw_names[w_cell]} += {xp_names[xp_cell]}·{dz_names[z_cell]} = {xp_factors[xp_cell]}·{g_factor} → {dw_said}; "
                f"{dxp_names[xp_cell]} += {w_names[w_cell]}·{dz_names[z_cell]} = {w_factors[w_cell]}·{g_factor} → {dxp_said}"
            )
            if first:
                writes.insert(0, make_write("db", [f], [f + 1], one1, [g_cell], [db_now]))
                text = f"db[{f}] += {dz_names[z_cell]} = {number(g_cell)} → {number(db_now)}; " + text
            yield make_event(
                "backward",
                {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                [xp_boxes[xp_cell], w_boxes[w_cell], dz_boxes[z_cell]],
                writes,
                text,
            )


def _one_product_mac(ctx: TraceContext, phase: str, order: str, source: str, target: str) -> Iterator[Event]:
    """Separate dw (source xp, target dw) or dx (source w, target dxp), MACs in
    ``order``: each event reads one cell of ``source`` and ``dz[n,f,i,j]`` and writes
    ``target[cell] += source[cell]·dz[n,f,i,j]``."""
    src, dz, tgt = ctx.cells(source), ctx.cells("dz"), ctx.cells(target)
    src_boxes, src_names, src_factors = src.boxes, src.names, src.factors
    dz_boxes, dz_names, dz_factors = dz.boxes, dz.names, dz.factors
    tgt_name, tgt_names, tgt_starts, tgt_stops = tgt.name, tgt.names, tgt.starts, tgt.stops
    src_flat, dz_flat = ctx.ref[source].reshape(-1), ctx.ref["dz"].reshape(-1)
    state = ctx.state[target].reshape(-1)
    from_xp = source == "xp"
    one = ctx.unit("z")
    for n_, f_, i_, j_, c_, k_, l_, xi_, wi_, zi_, _ in _mac_chunks(ctx.spec, order):
        src_cells, tgt_cells = (xi_, wi_) if from_xp else (wi_, xi_)
        delta = src_flat[src_cells] * dz_flat[zi_]
        value = running_sums(state, tgt_cells, delta)
        columns = _lists(n_, f_, i_, j_, c_, k_, l_, src_cells, tgt_cells, zi_, delta, value)
        for n, f, i, j, c, k, l, src_cell, tgt_cell, z_cell, add, now, said in zip(*columns, fmt.number_list(value)):
            yield make_event(
                phase,
                {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l},
                [src_boxes[src_cell], dz_boxes[z_cell]],
                [make_write(tgt_name, tgt_starts[tgt_cell], tgt_stops[tgt_cell], one, [add], [now])],
                f"{tgt_names[tgt_cell]} += {src_names[src_cell]}·{dz_names[z_cell]} = "
                f"{src_factors[src_cell]}·{dz_factors[z_cell]} → {said}",
            )


def _dw_mac(ctx: TraceContext) -> Iterator[Event]:
    return _one_product_mac(ctx, "dw", ctx.rc.loop_order, "xp", "dw")


def _dx_mac(ctx: TraceContext) -> Iterator[Event]:
    return _one_product_mac(ctx, "dx", ctx.rc.dx_loop_order, "w", "dxp")


def _db_mac(ctx: TraceContext) -> Iterator[Event]:
    """Separate "db", positions in the order of ``loop_order``'s n, f, i, j letters:
    each event reads ``dz[n,f,i,j]`` and writes ``db[f] += dz[n,f,i,j]``."""
    spec = ctx.spec
    dz = ctx.cells("dz")
    dz_boxes, dz_names = dz.boxes, dz.names
    _, ff, ho, wo = spec.out_shape
    dz_flat = ctx.ref["dz"].reshape(-1)
    state = ctx.state["db"].reshape(-1)
    one1 = ctx.ones(1)
    order = sub_order(ctx.rc.loop_order, "nfij")
    for n_, f_, i_, j_ in ordered_chunks(order, "nfij", _sizes(spec)):
        zi_ = ((n_ * ff + f_) * ho + i_) * wo + j_
        g = dz_flat[zi_]
        value = running_sums(state, f_, g)
        said = zip(fmt.number_list(value), fmt.number_list(g))
        for n, f, i, j, z_cell, add, now, (db_said, dz_said) in zip(*_lists(n_, f_, i_, j_, zi_, g, value), said):
            yield make_event(
                "db",
                {"n": n, "f": f, "i": i, "j": j},
                [dz_boxes[z_cell]],
                [make_write("db", [f], [f + 1], one1, [add], [now])],
                f"db[{f}] += {dz_names[z_cell]} = {dz_said} → {db_said}",
            )


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
