"""The direct view's backward pass at window granularity: one event per output
position (n, f, i, j), dz[n,f,i,j] sent back through its window.

- fused ``backward`` (``FUSED``): writes ``db[f] += dz`` (with a bias),
  ``dw[f] += dz·window`` and ``dxp[window] += dz·w[f]`` in one event;
- separate ``dw`` (``DW_ONLY``): ``dw[f] += dz·window``; separate ``dx``
  (``DX_ONLY``, in ``dx_loop_order``): ``dxp[window] += dz·w[f]``; separate ``db`` is
  the shared ``phases.db_phase`` (one event per filter), as CS231n's naive code.

``reference.backward_window_loops`` is the same phase as the plain loops; tests hold
the two to the same bytes.

Speed: per chunk of positions, NumPy computes every delta and running value
(``events.running_sums`` / ``running_rows``, bit-identical to adding one event at a
time) and the number texts; the events are then assembled column by column.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import repeat

import numpy as np

from . import format as fmt
from .events import TraceContext, running_rows, running_sums
from .model import Event, make_event, make_write
from .phases import db_phase
from .views import Phase
from .windows import ReceptiveFields

__all__ = ["DW_ONLY", "DX_ONLY", "FUSED", "backward_window", "window_backward_phases"]

FUSED = ("db", "dw", "dxp")  # what the fused backward writes (db only with a bias)
DW_ONLY = ("dw",)
DX_ONLY = ("dxp",)


def backward_window(
    ctx: TraceContext, phase: str, order: str, *, writes: tuple[str, ...], dead: str = fmt.DEAD_WINDOW
) -> Iterator[Event]:
    """Per output position in loop ``order``: dz back through the window into the
    tensors ``writes`` names: ``FUSED`` (db, when the trace has a bias, dw and dxp),
    ``DW_ONLY`` or ``DX_ONLY``.

    Each event reads ``dz[n,f,i,j]``, plus the window of xp (for dw) and the filter
    ``w[f]`` (for dx), and says ``dz[…] = g: db[f] += g → v; dw[f] += g·xp[…];
    dxp[…] += g·w[f]`` (the parts it writes). Per chunk NumPy makes every delta, running
    value and number text; the loop of the phase's kind only assembles the events.
    A window whose dz is exactly 0 still writes (every delta 0) and says
    ``dz[…] = 0: nothing flows back through this window`` (``dead``, by default
    ``format.DEAD_WINDOW``).
    """
    fields = ReceptiveFields.of(ctx)
    into_db = "db" in writes and "db" in ctx.state
    into_dw, into_dx = "dw" in writes, "dxp" in writes
    xp_flat = ctx.ref["xp"].reshape(-1) if into_dw else None
    filter_rows = ctx.ref["w"].reshape(fields.F, -1)
    dz_flat = ctx.ref["dz"].reshape(-1)
    dz_cells = ctx.cells("dz")
    dz_boxes, dz_names = dz_cells.boxes, dz_cells.names
    dxp_name = ctx.name("dxp")  # dx itself when there is no padding
    dw_name = ctx.name("dw")  # dwf, the rotated filters' gradient, with flip
    filter_box = fields.filter_box
    filter_said = [f"·{t}" for t in fields.filter_text]  # "·w[f]"
    if into_dw:
        dw_start = [box["start"] for box in fields.dw_box]
        dw_stop = [box["stop"] for box in fields.dw_box]
        dw_said = [f"{t} += " for t in fields.dw_text]  # "dw[f] += "
    db_start, db_stop = [[f] for f in range(fields.F)], [[f + 1] for f in range(fields.F)]
    one1, one4 = ctx.ones(1), ctx.unit("w")  # (w and dw: one kind)
    cut = len(fields.name)  # a window's text past its tensor's name: the slices, for dxp's
    for chunk in fields.chunks(order):
        count = len(chunk.z_cells)
        dz = dz_flat[chunk.z_cells]
        window_cells = fields.window_cells(chunk)
        # dz values that repeat bit for bit (small-integer data: dz in {−1, 0, 1}) give
        # identical delta rows dz·w[f] and [dz]: one shared list each, not one per event
        dz_bits, dz_kind = np.unique(dz.view(np.int64), return_inverse=True)
        repeats = 2 * dz_bits.size <= count
        dz_said = fmt.number_list(dz)
        columns = [chunk.filter_list, chunk.z_list, chunk.loops, chunk.windows, dz_said, fmt.factor_list(dz_said)]
        if into_db:
            db_value = running_sums(ctx.state["db"].reshape(-1), chunk.filters, dz)
            if repeats:
                dz_lists = [[v] for v in dz_bits.view(np.float64).tolist()]
                dz_lists = [dz_lists[k] for k in dz_kind.ravel().tolist()]
            else:
                dz_lists = [[v] for v in dz.tolist()]
            columns += [dz_lists, db_value.tolist(), fmt.number_list(db_value)]
        elif into_dw and into_dx:
            columns += [repeat(None)] * 3
        if into_dw:
            deltas = dz[:, None] * xp_flat[window_cells]
            values = running_rows(ctx.state["dw"].reshape(fields.F, -1), chunk.filters, deltas)
            columns += [fields.rows("dw", deltas), fields.rows("dw", values)]
        if into_dx:
            deltas = dz[:, None] * filter_rows[chunk.filters]
            values = running_sums(ctx.state["dxp"].reshape(-1), window_cells.ravel(), deltas.ravel())
            keys = dz_kind.ravel() * fields.F + chunk.filters
            columns += [
                _shared_rows(fields, deltas, keys) if repeats else fields.rows("dxp", deltas),
                fields.rows("dxp", values.reshape(count, -1)),
            ]
        rows = zip(*columns)
        if into_dw and into_dx:
            for f, z_cell, loop, (
                window,
                text,
            ), g, factor, db_delta, db_value, db_said, dw_delta, dw_value, dx_delta, dx_value in rows:
                dw_write = make_write(dw_name, dw_start[f], dw_stop[f], one4, dw_delta, dw_value)
                dx_write = make_write(dxp_name, window["start"], window["stop"], window["step"], dx_delta, dx_value)
                said = f"{dw_said[f]}{factor}·{text}; {dxp_name}{text[cut:]} += {factor}{filter_said[f]}"
                if into_db:
                    sent = [make_write("db", db_start[f], db_stop[f], one1, db_delta, [db_value]), dw_write, dx_write]
                    said = f"db[{f}] += {g} → {db_said}; {said}"
                else:
                    sent = [dw_write, dx_write]
                said = f"{dz_names[z_cell]} = {g}: {said if g != '0' else dead}"
                yield make_event(phase, loop, [dz_boxes[z_cell], window, filter_box[f]], sent, said)
        elif into_dw:
            for f, z_cell, loop, (window, text), g, factor, dw_delta, dw_value in rows:
                yield make_event(
                    phase,
                    loop,
                    [dz_boxes[z_cell], window],
                    [make_write(dw_name, dw_start[f], dw_stop[f], one4, dw_delta, dw_value)],
                    f"{dz_names[z_cell]} = {g}: {dw_said[f]}{factor}·{text}"
                    if g != "0"
                    else f"{dz_names[z_cell]} = 0: {dead}",
                )
        else:
            for f, z_cell, loop, (window, text), g, factor, dx_delta, dx_value in rows:
                yield make_event(
                    phase,
                    loop,
                    [dz_boxes[z_cell], filter_box[f]],
                    [make_write(dxp_name, window["start"], window["stop"], window["step"], dx_delta, dx_value)],
                    f"{dz_names[z_cell]} = {g}: {dxp_name}{text[cut:]} += {factor}{filter_said[f]}"
                    if g != "0"
                    else f"{dz_names[z_cell]} = 0: {dead}",
                )


def _shared_rows(fields: ReceptiveFields, rows: np.ndarray, keys: np.ndarray) -> list:
    """``fields.rows("dxp", rows)``, one per row, except that rows with equal ``keys``
    (int array (K,); equal keys must mean bit-identical rows) share one: fewer objects
    to make and free when values repeat. ``rows``: (K, cells)."""
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if 2 * unique.size > keys.size:
        return fields.rows("dxp", rows)
    made = fields.rows("dxp", rows[first])
    return [made[k] for k in inverse.ravel().tolist()]


def window_backward_phases(rc) -> list[Phase]:
    """Fused: "backward" (one event per position); separate: "db" (per filter, with a
    bias), "dw" (per position, ``loop_order``), "dx" (per position, ``dx_loop_order``)."""
    positions = math.prod(rc.spec.out_shape)
    if rc.backward == "fused":
        return [Phase("backward", positions, lambda ctx: backward_window(ctx, "backward", rc.loop_order, writes=FUSED))]
    return [
        *([db_phase(rc)] if rc.has_bias else []),
        Phase("dw", positions, lambda ctx: backward_window(ctx, "dw", rc.loop_order, writes=DW_ONLY)),
        Phase("dx", positions, lambda ctx: backward_window(ctx, "dx", rc.dx_loop_order, writes=DX_ONLY)),
    ]
