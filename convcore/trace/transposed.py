"""The transposed view: dX as a full correlation of the stride-dilated dz with the
180°-rotated kernel (a gather, one padded-input cell at a time), dW as the correlation
of the padded input with dz (seed 001's rotated-kernel backward, done right).

Tensors it adds (``dilated_gradient``, ``rotated_kernel``):

- ``dz_dilated`` (N, F, Hp + eh − 1, Wp + ew − 1), axes as dz: dz with sh − 1 zero rows
  between its rows and sw − 1 zero columns between its columns (the stride: an output
  step moves the window sh rows, so the rows in between receive no dz), framed by
  eh − 1 zero rows above and ew − 1 zero columns left (a full correlation slides the
  kernel in from outside), and below/right as many as it takes for every row of dxp
  to have a full window — eh − 1 plus the rows of xp no window reaches (floor
  truncation). ``dz_dilated[n, f, eh − 1 + i·sh, ew − 1 + j·sw] = dz[n, f, i, j]``.
- ``w_rot`` (F, C/G, KH, KW), axes as w: ``w_rot[f, c, k, l] = w[f, c, KH−1−k, KW−1−l]``.

Then ``dxp[n, c, y, x] = Σ_{f of c's group} Σ_{k,l} dz_dilated[n, f, y + k·dh, x + l·dw]
· w_rot[f, c − c0, k, l]``: the rotated kernel's taps are ``dilation`` apart, and a cell
of channel c gathers from the filters of c's group only.

Phases: forward as the direct view (``forward``, one event per output position, loop
letters n, f, i, j, default "nfij"); after ``activation grad``: ``db`` (one event per
filter, with a bias), ``dw`` (one event per cell of dW: the box of xp that tap (k, l)
sees in every window — its rows ``stride`` apart — times the whole dz[:, f]),
``dilate dz`` (one event per dz row, N·F·Ho), ``rotate w`` (one event per filter),
``dx`` (one event per cell of dxp, N·C·Hp·Wp, rows and columns no window reaches
included: they gather only zeros and the text says so). ``backward`` and
``dx_loop_order`` do not apply (this view's backward is db, dW, dX in that order);
the backward phases run row-major.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from . import format as fmt
from .axes import register_tensor
from .events import TraceContext
from .forward_window import forward_window_phase
from .model import Event, make_event
from .phases import db_phase
from .views import Phase, View, register_view

__all__ = ["GATHER_PHASES", "TransposedView", "dilated_gradient", "dilation_margins", "gather_phases", "rotated_kernel"]

register_tensor("dz_dilated", "output")
register_tensor("w_rot", "filter")


def dilation_margins(spec) -> tuple[int, int, int, int]:
    """Zero rows/columns around the dilated dz: (top, bottom, left, right).
    top = eh − 1, bottom = eh − 1 + (Hp − reached rows); likewise left/right."""
    eh, ew = spec.kernel_extent
    hp, wp = spec.padded_hw
    rh, rw = spec.reached_hw
    return eh - 1, eh - 1 + hp - rh, ew - 1, ew - 1 + wp - rw


def dilated_shape(spec) -> tuple[int, int, int, int]:
    """The shape of dz_dilated: (N, F, Hp + eh − 1, Wp + ew − 1)."""
    (hp, wp), (eh, ew) = spec.padded_hw, spec.kernel_extent
    return (spec.N, spec.F, hp + eh - 1, wp + ew - 1)


def dilated_gradient(spec, dz: np.ndarray) -> np.ndarray:
    """``dz_dilated: (N, F, Hp + eh − 1, Wp + ew − 1)`` from ``dz: (N, F, Ho, Wo)``."""
    top, _, left, _ = dilation_margins(spec)
    ho, wo = spec.out_hw
    sh, sw = spec.stride
    out = np.zeros(dilated_shape(spec))
    out[:, :, top : top + (ho - 1) * sh + 1 : sh, left : left + (wo - 1) * sw + 1 : sw] = dz
    return out


def rotated_kernel(w: np.ndarray) -> np.ndarray:
    """``w_rot: (F, C/G, KH, KW)``, each kernel slice turned by 180°."""
    return np.ascontiguousarray(w[:, :, ::-1, ::-1])


def _dw_events(ctx: TraceContext) -> Iterator[Event]:
    """Phase "dw", dW row-major (f, c, k, l): each event reads the box of xp that tap
    (k, l) sees in every window (rows ``stride`` apart) and the whole dz[:, f], and
    writes dw[f,c,k,l]."""
    spec = ctx.spec
    n_, f_, ho, wo = spec.out_shape
    sh, sw = spec.stride
    dh, dw_ = spec.dilation
    cg, fg = spec.channels_per_group, spec.filters_per_group
    xp, dz, dw = ctx.ref["xp"], ctx.ref["dz"], ctx.ref["dw"]
    expand = n_ * ho * wo <= fmt.EXPAND_LIMIT
    stride_note = (
        f" (the box's rows are {sh} apart and its columns {sw} apart: the stride)" if (sh, sw) != (1, 1) else ""
    )
    for f in range(f_):
        c0 = (f // fg) * cg
        dz_box = (0, f, 0, 0), (n_, f + 1, ho, wo)
        dz_values = dz[:, f].ravel().tolist()
        for c in range(cg):
            for k in range(spec.KH):
                for l in range(spec.KW):
                    start = (0, c0 + c, k * dh, l * dw_)
                    stop = (n_, c0 + c + 1, k * dh + (ho - 1) * sh + 1, l * dw_ + (wo - 1) * sw + 1)
                    step = (1, 1, sh, sw)
                    value = float(dw[f, c, k, l])
                    seen = xp[:, c0 + c, k * dh : stop[2] : sh, l * dw_ : stop[3] : sw].ravel().tolist()
                    terms = f" = {fmt.products(seen, dz_values)}" if expand else ""
                    yield make_event(
                        "dw",
                        {"f": f, "c": c, "k": k, "l": l},
                        [ctx.box("xp", start, stop, step), ctx.box("dz", *dz_box)],
                        [ctx.write_cell("dw", (f, c, k, l), value)],
                        f"{ctx.cell_text('dw', (f, c, k, l))} = Σ {ctx.text('xp', start, stop, step)}"
                        f"·{ctx.text('dz', *dz_box)}{terms} = {fmt.number(value)}"
                        f"{stride_note if f == 0 and c == 0 and k == 0 and l == 0 else ''}",
                    )


def _dilate_note(spec, source: str = "dz") -> str:
    sh, sw = spec.stride
    top, bottom, left, right = dilation_margins(spec)
    eh, ew = spec.kernel_extent
    why = f"without them the rotated kernel would meet {source} cells a stride apart as if they were neighbours"
    if (sh, sw) == (1, 1):
        parts = ["stride 1: no zeros between cells"]
    elif sh == sw:
        parts = [f"{sh - 1} zero{'s' if sh > 2 else ''} between cells (stride {sh}): {why}"]
    else:
        gaps = [f"{s - 1} zero {what}{'s' if s > 2 else ''}" for s, what in ((sh, "row"), (sw, "column")) if s > 1]
        parts = [f"{' and '.join(gaps)} between cells (stride {sh}×{sw}): {why}"]
    parts.append(
        f"zeros around: {top} above, {bottom} below, {left} left, {right} right "
        f"(kernel extent − 1 = {eh - 1}×{ew - 1}: the kernel slides in from outside, a full correlation"
    )
    rh, rw = spec.reached_hw
    hp, wp = spec.padded_hw
    if (hp - rh, wp - rw) != (0, 0):
        parts[-1] += f", plus {hp - rh} row(s) and {wp - rw} column(s) no window reaches"
    parts[-1] += ")"
    return "; " + "; ".join(parts)


def _dilate_events(ctx: TraceContext, phase: str = "dilate dz", source: str = "dz") -> Iterator[Event]:
    """Phase "dilate dz", rows (n, f, i) row-major: each event reads the row dz[n,f,i]
    and writes it into dz_dilated, its cells ``stride`` apart."""
    spec = ctx.spec
    n_, f_, ho, wo = spec.out_shape
    sh, sw = spec.stride
    top, _, left, _ = dilation_margins(spec)
    dz = ctx.ref["dz"]
    note = _dilate_note(spec, source)
    for n in range(n_):
        for f in range(f_):
            for i in range(ho):
                src = (n, f, i, 0), (n + 1, f + 1, i + 1, wo)
                row = top + i * sh
                dst = (n, f, row, left), (n + 1, f + 1, row + 1, left + (wo - 1) * sw + 1)
                step = (1, 1, 1, sw)
                values = dz[n, f, i].tolist()
                listed = f" = {fmt.numbers(values)}" if wo <= fmt.LIST_LIMIT else ""
                yield make_event(
                    phase,
                    {"n": n, "f": f, "i": i},
                    [ctx.box("dz", *src)],
                    [ctx.write("dz_dilated", *dst, step, dz[n, f, i].reshape(1, 1, 1, wo))],
                    f"{ctx.text('dz_dilated', *dst, step)} = {ctx.text('dz', *src)}{listed}{note if i == 0 else ''}",
                )


def _rotate_events(ctx: TraceContext, phase: str = "rotate w") -> Iterator[Event]:
    """Phase "rotate w", filters f in order: each event reads w[f] and writes w_rot[f],
    its kernel turned by 180°."""
    spec = ctx.spec
    w = ctx.ref["w"]
    shape = (spec.channels_per_group, spec.KH, spec.KW)
    for f in range(spec.F):
        start, stop = (f, 0, 0, 0), (f + 1, *shape)
        yield make_event(
            phase,
            {"f": f},
            [ctx.box("w", start, stop)],
            [ctx.write("w_rot", start, stop, None, w[f : f + 1, :, ::-1, ::-1])],
            f"{ctx.text('w_rot', start, stop)} = {ctx.text('w', start, stop)} turned 180°: "
            f"w_rot[{f},c,k,l] = w[{f},c,{spec.KH - 1}−k,{spec.KW - 1}−l]",
        )


def _dx_events(ctx: TraceContext, phase: str = "dx") -> Iterator[Event]:
    """Phase "dx", cells (n, c, y, x) of dxp row-major: each event reads the window of
    dz_dilated the rotated kernel covers (the filters of c's group) and w_rot of them,
    and writes dxp[n,c,y,x] (0 where every tap meets an inserted zero)."""
    spec = ctx.spec
    _, c_, hp, wp = spec.padded_shape
    n_ = spec.N
    eh, ew = spec.kernel_extent
    dh, dw_ = spec.dilation
    sh, sw = spec.stride
    cg, fg = spec.channels_per_group, spec.filters_per_group
    rh, rw = spec.reached_hw
    top, _, left, _ = dilation_margins(spec)
    dzd, w_rot, dxp = ctx.ref["dz_dilated"], ctx.ref["w_rot"], ctx.ref["dxp"]
    # where a dz cell landed in dz_dilated (the rest are the inserted zeros)
    landed = np.zeros(dzd.shape[2:], dtype=bool)
    landed[top : top + (spec.out_hw[0] - 1) * sh + 1 : sh, left : left + (spec.out_hw[1] - 1) * sw + 1 : sw] = True
    taps = fg * spec.KH * spec.KW
    step = (1, 1, dh, dw_)
    for n in range(n_):
        for c in range(c_):
            g = c // cg
            f0, cc = g * fg, c - g * cg
            w_box = (f0, cc, 0, 0), (f0 + fg, cc + 1, spec.KH, spec.KW)
            w_read, w_said = ctx.box("w_rot", *w_box), ctx.text("w_rot", *w_box)
            kernel = w_rot[f0 : f0 + fg, cc]  # (F/G, KH, KW)
            for y in range(hp):
                for x in range(wp):
                    start, stop = (n, f0, y, x), (n + 1, f0 + fg, y + eh, x + ew)
                    hit = landed[y : y + eh : dh, x : x + ew : dw_]  # (KH, KW)
                    hits = int(hit.sum()) * fg
                    value = float(dxp[n, c, y, x])
                    said = (
                        f"{ctx.cell_text('dxp', (n, c, y, x))} = Σ {ctx.text('dz_dilated', start, stop, step)}·{w_said}"
                    )
                    if hits == 0:
                        why = (
                            "never reached by a window (floor truncation)"
                            if y >= rh or x >= rw
                            else "no window covers it"
                        )
                        said += f" = 0: every tap lands on an inserted zero, {why}"
                    else:
                        if hits <= fmt.EXPAND_LIMIT:
                            box = dzd[n, f0 : f0 + fg, y : y + eh : dh, x : x + ew : dw_]
                            mask = np.broadcast_to(hit, box.shape)
                            said += f" = {fmt.products(box[mask].tolist(), kernel[mask].tolist())}"
                        said += f" = {fmt.number(value)}"
                        if hits < taps:
                            said += f" ({taps - hits} of {taps} taps on zeros)"
                    yield make_event(
                        phase,
                        {"n": n, "c": c, "y": y, "x": x},
                        [ctx.box("dz_dilated", start, stop, step), w_read],
                        [ctx.write_cell("dxp", (n, c, y, x), value)],
                        said,
                    )


# the gather's three phases, by their part: their names in the Conv2d's dX
# (and what the dilated tensor is called in the words)
GATHER_PHASES = {"dilate": "dilate dz", "rotate": "rotate w", "gather": "dx", "source": "dz"}


def gather_phases(rc, names: dict[str, str] = GATHER_PHASES) -> list[Phase]:
    """dxp as a full correlation of the stride-dilated dz with the rotated kernel: the
    phases "dilate dz", "rotate w" and "dx", or ``names`` for them (a transposed layer's
    forward gathers its stamps so: "dilate x", "rotate w", "gather")."""
    spec = rc.spec
    n, f, ho, _ = spec.out_shape
    dilate, rotate, gather = names["dilate"], names["rotate"], names["gather"]
    return [
        Phase(dilate, n * f * ho, lambda ctx: _dilate_events(ctx, dilate, names["source"]), "nfi"),
        Phase(rotate, spec.F, lambda ctx: _rotate_events(ctx, rotate), "f"),
        Phase(gather, math.prod(spec.padded_shape), lambda ctx: _dx_events(ctx, gather), "ncyx"),
    ]


class TransposedView(View):
    name = "transposed"
    title = "transposed (dX)"
    letters = {"window": "nfij"}

    def extra_shapes(self, spec) -> dict[str, tuple[int, ...]]:
        return {"dz_dilated": dilated_shape(spec), "w_rot": spec.w_shape}

    def extra_tensors(self, rc, ref: dict) -> dict:
        if not rc.backward_included:
            return {}
        return {
            "dz_dilated": (dilated_gradient(rc.spec, ref["dz"]), "intermediate"),
            "w_rot": (rotated_kernel(ref["w"]), "intermediate"),
        }

    def forward_phases(self, rc) -> list[Phase]:
        return [forward_window_phase(rc)]

    def backward_phases(self, rc) -> list[Phase]:
        spec = rc.spec
        phases = [db_phase(rc)] if rc.has_bias else []
        phases += [Phase("dw", math.prod(spec.w_shape), _dw_events, "fckl"), *gather_phases(rc)]
        return phases


register_view(TransposedView())
