"""The forward pass one output position at a time (window granularity), shared by the
direct and transposed views. ``reference.forward_window_loops`` is the same phase as
the plain loops; tests hold the two to the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import repeat

import numpy as np

from . import format as fmt
from .events import TraceContext
from .model import Event, make_event, make_write
from .views import Phase
from .windows import ReceptiveFields

__all__ = ["forward_window", "forward_window_phase"]


def forward_window(ctx: TraceContext, phase: str = "forward", with_bias: bool = True) -> Iterator[Event]:
    """Phase "forward", positions (n, f, i, j) in ``loop_order``: each event reads the
    window of xp, the filter ``w[f]`` (and ``b[f]``) and writes ``z[n,f,i,j]``, its
    value from the vectorised core. The text lists every product when a window has at
    most ``EXPAND_LIMIT`` cells (``z[0,0,1,0] = 3·0 + 4·1 + 6·2 + 7·3 = 37``), else
    ``z[…] = Σ xp[…]·w[f] + b[f] = value``; a window over several channels (at most
    ``LIST_LIMIT``) shows each channel's partial sum instead: ``z[0,1,0,2] = (−3) + 1 +
    0 [c = 0, 1, 2] + b[1] 1 = −1``. ``phase`` names the events' phase; ``with_bias`` False
    leaves the bias out (the transposed layer's dx is a convolution of dy without one)."""
    fields = ReceptiveFields.of(ctx)
    filter_rows = ctx.ref["w"].reshape(fields.F, -1)
    z_flat = ctx.ref["z"].reshape(-1)
    xp_flat = ctx.ref["xp"].reshape(-1)
    z_state = ctx.state["z"].reshape(-1)
    z_cells = ctx.cells("z")
    z_name, z_names, z_starts, z_stops = z_cells.name, z_cells.names, z_cells.starts, z_cells.stops
    bias = ctx.ref.get("b") if with_bias else None
    filter_box = fields.filter_box
    if bias is not None:
        bias_box = [ctx.box("b", (f,), (f + 1,)) for f in range(fields.F)]
        bias_said = [f" + {fmt.factor(v)}" for v in bias.tolist()]
        sum_tail = [f"·{t} + b[{f}] = " for f, t in enumerate(fields.filter_text)]
    else:
        bias_said = [""] * fields.F
        sum_tail = [f"·{t} = " for t in fields.filter_text]
    expand = fields.cells <= fmt.EXPAND_LIMIT
    by_channel = not expand and 1 < fields.cg <= fmt.LIST_LIMIT
    if by_channel:  # the filters' taps per channel, and the channels each group reads
        channel_taps = filter_rows.reshape(fields.F, fields.cg, -1)
        channels = [f" [c = {', '.join(str(g * fields.cg + c) for c in range(fields.cg))}] " for g in range(fields.G)]
        bias_said = [f"+ b[{f}] {said[3:]} " if said else "" for f, said in enumerate(bias_said)]  # "+ b[1] 1 "
    if expand:
        xp_factors = ctx.cells("xp").factors
        w_factors = (
            fields.lists("w", np.vectorize(fmt.factor, otypes=[object])(filter_rows)) if filter_rows.size else []
        )
    one = ctx.unit("z")
    for chunk in fields.chunks(ctx.rc.loop_order):
        values = 0.0 + z_flat[chunk.z_cells]  # the state after the write: zero plus z
        z_state[chunk.z_cells] = values
        window_cells = fields.lists("xp", fields.window_cells(chunk)) if expand else repeat(None)
        if by_channel:
            taps = xp_flat[fields.window_cells(chunk)].reshape(len(values), fields.cg, -1)
            partial = fmt.factor_list(fmt.number_list((taps * channel_taps[chunk.filters]).sum(axis=-1)))
            window_cells = [" + ".join(partial[k : k + fields.cg]) for k in range(0, len(partial), fields.cg)]
        rows = zip(
            chunk.filter_list,
            chunk.z_list,
            chunk.loops,
            chunk.windows,
            values.tolist(),
            window_cells,
            fmt.number_list(values),
        )
        for f, z_cell, loop, (window, text), value, cells, said in rows:
            if expand:
                products = " + ".join([f"{xp_factors[c]}·{w}" for c, w in zip(cells, w_factors[f])])
                text = f"{z_names[z_cell]} = {products}{bias_said[f]} = {said}"
            elif by_channel:  # cells: the partial sums, channel by channel
                group = f // fields.fg
                text = f"{z_names[z_cell]} = {cells}{channels[group]}{bias_said[f]}= {said}"
            else:
                text = f"{z_names[z_cell]} = Σ {text}{sum_tail[f]}{said}"
            written = [value]  # delta = value (z starts at zero): one shared list
            yield make_event(
                phase,
                loop,
                [window, filter_box[f], bias_box[f]] if bias is not None else [window, filter_box[f]],
                [make_write(z_name, z_starts[z_cell], z_stops[z_cell], one, written, written)],
                text,
            )


def forward_window_phase(rc) -> Phase:
    """Phase "forward": N·F·Ho·Wo events."""
    return Phase("forward", math.prod(rc.spec.out_shape), forward_window)
