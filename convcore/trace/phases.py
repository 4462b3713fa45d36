"""The phases every view shares: pad, activation, activation grad and crop.

Granularity (the same for every view and both granularities, so the interesting
phases keep the attention):

- ``pad``: with ``copies="one"`` (the default) one event: it reads the whole of ``x``
  and writes it into ``xp``'s interior (rows ``top .. top + H``, columns
  ``left .. left + W``); with ``copies="each"`` one event per row of each input slice,
  N·C·H events, event (n, c, h) writing the row ``x[n,c,h]`` into ``xp`` at row
  ``top + h``. The padding cells are never written: they stay the zeros every written
  tensor starts from, and the text says so.
- ``activation``: one event per output row, N·F·Ho events: reads ``z[n,f,i]``, writes
  ``out[n,f,i] = f(z[n,f,i])``.
- ``activation grad``: one event per output row, N·F·Ho events: reads ``dout[n,f,i]``
  and ``z[n,f,i]``, writes ``dz[n,f,i] = dout·f′(z)``.
- ``crop``: one event (``copies="one"``) reading dxp's interior and writing the whole
  of dx, or one per row of dx (``"each"``), N·C·H events: reads
  ``dxp[n,c,top+h,left:left+W]`` and writes ``dx[n,c,h]``. Rows and columns of dxp outside the crop (the padding) are
  left behind, and the text says so: the gradient landing on the padding is discarded.

Only phases that compute are planned (``document.plan_phases``, ``aliases.py``): pad and
crop only with padding, the activation phases only for an activation other than the
identity.

Loop letters: pad and crop row by row use n, c, h (input row), in one step none;
activation phases n, f, i.
Values are listed in the text when a row has at most ``format.LIST_LIMIT`` cells.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from . import format as fmt
from .axes import in_layout
from .events import TraceContext
from .model import Event, Write, make_box, make_event, make_write
from .views import Phase

__all__ = ["activation_grad_phase", "activation_phase", "bulk_write", "crop_phase", "db_phase", "pad_phase"]


def _listed(values: list[float]) -> str:
    return f" = {fmt.numbers(values)}" if len(values) <= fmt.LIST_LIMIT else ""


def _rows(ctx: TraceContext, name: str, n: int, c: int, first_row: int, rows: int, first_col: int, cols: int):
    """Per row r of the slice ``name[n, c]`` (internal order): the one-row Box's start,
    stop and step lists in the trace's order, and its slice text, for rows
    first_row … first_row + rows − 1 and columns first_col … first_col + cols − 1.

    Every Box of an event over the same cells shares these lists (read-only)."""
    shape = ctx.shape[name]
    step = ctx.unit(name)
    axes = ctx.order(name, (0, 1, 2, 3))
    row_axis = axes.index(2) if 2 in axes else None  # (a sequence shows no row axis)
    starts = [ctx.order(name, (n, c, r, first_col)) for r in range(first_row, first_row + rows)]
    stops = [ctx.order(name, (n + 1, c + 1, r + 1, first_col + cols)) for r in range(first_row, first_row + rows)]
    texts = fmt.row_slices(starts, stops, step, shape, row_axis)
    return zip(starts, stops, [step] * rows, texts)


def _delta_value_rows(ctx: TraceContext, rows: np.ndarray) -> tuple[list, list]:
    """The delta and value rows of writing ``rows`` (float64 (R, M)) into cells that
    are still zero: the deltas are the rows, the values zero plus the rows. Those are
    bit-identical unless a row holds −0 (0 + −0 is +0): then two sets of rows, else
    one set shared by both (fewer objects to make, encode the same)."""
    deltas = ctx.rows(rows)
    if np.any((rows == 0) & np.signbit(rows)):
        return deltas, ctx.rows(0.0 + rows)
    return deltas, deltas


def bulk_write(ctx: TraceContext, name: str, start: tuple, stop: tuple, block: np.ndarray) -> Write:
    """The Write of ``block`` (internal order, the Box ``start:stop``'s shape) into cells
    of ``name`` that are still zero, its delta and value rows made in bulk
    (``ctx.rows``: lists, or arrays); the running state takes the block."""
    ctx.state[name][tuple(slice(a, b) for a, b in zip(start, stop))] = 0.0 + block  # as replay makes it
    flat = in_layout(block, ctx.perm[name]).reshape(1, -1)  # the trace's row-major order
    (delta,), (value,) = _delta_value_rows(ctx, flat)
    box = ctx.box(name, start, stop)
    return make_write(box["tensor"], box["start"], box["stop"], box["step"], delta, value)


def _copy_rows(
    ctx: TraceContext,
    phase: str,
    src: str,
    dst: str,
    src_top: int,
    src_left: int,
    dst_top: int,
    dst_left: int,
    first_note: str,
    note: str = "",
) -> Iterator[Event]:
    """One event per input row (n, c, h): ``dst[n, c, dst_top + h, dst_left …] =
    src[n, c, src_top + h, src_left …]``, W cells (pad: x -> xp; crop: dxp -> dx). The
    text ends with ``first_note`` on each slice's first row, ``note`` on the others."""
    n_, c_, h_, w_ = ctx.spec.x_shape
    source, state = ctx.ref[src], ctx.state[dst]
    src_name, dst_name = ctx.name(src), ctx.name(dst)  # (the trace's: a transposed layer's dy, dyp)
    for n in range(n_):
        for c in range(c_):
            rows = source[n, c, src_top : src_top + h_, src_left : src_left + w_]
            deltas, values = _delta_value_rows(ctx, rows)
            state[n, c, dst_top : dst_top + h_, dst_left : dst_left + w_] = 0.0 + rows  # as replay makes it
            src_boxes = _rows(ctx, src, n, c, src_top, h_, src_left, w_)
            dst_boxes = _rows(ctx, dst, n, c, dst_top, h_, dst_left, w_)
            for h, (row, value, (a0, b0, s0, t0), (a1, b1, s1, t1)) in enumerate(
                zip(deltas, values, src_boxes, dst_boxes)
            ):
                yield make_event(
                    phase,
                    {"n": n, "c": c, "h": h},
                    [make_box(src_name, a0, b0, s0)],
                    [make_write(dst_name, a1, b1, s1, row, value)],
                    f"{dst_name}{t1} = {src_name}{t0}{_listed(row)}{first_note if h == 0 else note}",
                )


def _copy_whole(
    ctx: TraceContext, phase: str, src: str, dst: str, src_at: tuple[int, int], dst_at: tuple[int, int], note: str
) -> Iterator[Event]:
    """The one event of a copy phase in one step: ``dst[:, :, dst rows, dst columns] =
    src[:, :, src rows, src columns]``, the H×W interiors at ``src_at`` and ``dst_at``
    (top, left) of every slice (pad: x -> xp; crop: dxp -> dx)."""
    n_, c_, h_, w_ = ctx.spec.x_shape
    (st, sl), (dt, dl) = src_at, dst_at
    src_start, src_stop = (0, 0, st, sl), (n_, c_, st + h_, sl + w_)
    dst_start, dst_stop = (0, 0, dt, dl), (n_, c_, dt + h_, dl + w_)
    cells = ctx.ref[src][:, :, st : st + h_, sl : sl + w_]
    write = bulk_write(ctx, dst, dst_start, dst_stop, cells)
    yield make_event(
        phase,
        {},
        [ctx.box(src, src_start, src_stop)],
        [write],
        f"{ctx.text(dst, dst_start, dst_stop)} = {ctx.text(src, src_start, src_stop)}{_listed(ctx.cell_list(dst, cells))}{note}",
    )


def padding_words(rc) -> str:
    """The padding on each side, in words: ``top 1, bottom 1, left 1, right 1``; a
    sequence's ``left 2, right 0`` (``left 2 only: causal``)."""
    top, bottom, left, right = rc.spec.padding
    if rc.layer != "conv1d":
        return f"top {top}, bottom {bottom}, left {left}, right {right}"
    return f"left {left} only: causal" if rc.causal else f"left {left}, right {right}"


def _pad_events(ctx: TraceContext, said: str = "") -> Iterator[Event]:
    """Phase "pad", rows (n, c, h) row-major: each event reads x[n,c,h] and writes it
    into xp at row top + h; ``said`` ends the text of its first row."""
    top, _, left, _ = ctx.spec.padding
    note = f"; padding ({padding_words(ctx.rc)}) stays 0{said}"
    if ctx.rc.copies == "one":
        return _copy_whole(ctx, "pad", "x", "xp", (0, 0), (top, left), note)
    return _copy_rows(ctx, "pad", "x", "xp", 0, 0, top, left, note)


def pad_phase(rc, note: str = "") -> Phase:
    """Phase "pad": xp written from x in one event, or N·C·H (``copies``); only with
    padding: without, xp is x. ``note`` ends the text (of every row)."""
    events = (lambda ctx: _pad_events(ctx, note)) if note else _pad_events
    if rc.copies == "one":
        return Phase("pad", 1, events, "")
    n, c, h, _ = rc.spec.x_shape
    return Phase("pad", n * c * h, events, "nch")


def _crop_events(ctx: TraceContext, said: str = "") -> Iterator[Event]:
    """Phase "crop", rows (n, c, h) row-major: each event reads the interior row of dxp
    and writes dx[n,c,h]; the text says that the gradient on the padding is discarded,
    or ``said`` (the transposed layer's crop trims stamps, not a gradient)."""
    top, _, left, _ = ctx.spec.padding
    first = said or f"; the gradient landing on the padding ({padding_words(ctx.rc)}) is discarded"
    others = said or "; the padding's gradient is discarded"
    if ctx.rc.copies == "one":
        return _copy_whole(ctx, "crop", "dxp", "dx", (top, left), (0, 0), first)
    return _copy_rows(ctx, "crop", "dxp", "dx", top, left, 0, 0, first, others)


def crop_phase(rc, note: str = "") -> Phase:
    """Phase "crop": dx written from the interior of dxp in one event, or N·C·H
    (``copies``); only with padding: without, the backward writes dx itself. ``note``,
    when given, ends the text instead of the words on the discarded gradient."""
    events = (lambda ctx: _crop_events(ctx, note)) if note else _crop_events
    if rc.copies == "one":
        return Phase("crop", 1, events, "")
    n, c, h, _ = rc.spec.x_shape
    return Phase("crop", n * c * h, events, "nch")


def _output_rows(ctx: TraceContext, phase: str, target: str, reads: tuple[str, ...], say) -> Iterator[Event]:
    """One event per output row (n, f, i): ``target[n,f,i] = ref[target][n,f,i]``.
    ``target`` and ``reads`` are output-shaped: their Boxes share one geometry."""
    n_, f_, ho, wo = ctx.spec.out_shape
    ref, state = ctx.ref[target], ctx.state[target]
    for n in range(n_):
        for f in range(f_):
            deltas, values = _delta_value_rows(ctx, ref[n, f])
            state[n, f] = 0.0 + ref[n, f]  # as replay makes it
            boxes = _rows(ctx, target, n, f, 0, ho, 0, wo)
            for i, (row, value, (start, stop, step, sl)) in enumerate(zip(deltas, values, boxes)):
                yield make_event(
                    phase,
                    {"n": n, "f": f, "i": i},
                    [make_box(name, start, stop, step) for name in reads],
                    [make_write(target, start, stop, step, row, value)],
                    f"{target}{sl} = {say(*(name + sl for name in reads))}{_listed(row)}",
                )


def _activation_events(ctx: TraceContext) -> Iterator[Event]:
    """Phase "activation", rows (n, f, i) row-major: reads z[n,f,i], writes out[n,f,i]."""
    name = ctx.rc.activation.name
    return _output_rows(ctx, "activation", "out", ("z",), lambda z: f"{name}({z})")


def activation_phase(rc) -> Phase:
    """Phase "activation": N·F·Ho events writing out = f(z)."""
    n, f, ho, _ = rc.spec.out_shape
    return Phase("activation", n * f * ho, _activation_events, "nfi")


def _activation_grad_events(ctx: TraceContext) -> Iterator[Event]:
    """Phase "activation grad", rows (n, f, i) row-major: reads dout[n,f,i] and
    z[n,f,i], writes dz[n,f,i] = dout·f′(z)."""
    name = ctx.rc.activation.name
    return _output_rows(ctx, "activation grad", "dz", ("dout", "z"), lambda dout, z: f"{dout}·{name}′({z})")


def activation_grad_phase(rc) -> Phase:
    """Phase "activation grad": N·F·Ho events writing dz = dout·f′(z)."""
    n, f, ho, _ = rc.spec.out_shape
    return Phase("activation grad", n * f * ho, _activation_grad_events, "nfi")


def _db_events(ctx: TraceContext, source: str = "dz", letter: str = "f") -> Iterator[Event]:
    """One event per channel of ``source`` (engine name): db[f] = Σ dz[:, f] over images
    and positions (a transposed layer's db[c] = Σ dy[:, c]); loop letter ``letter``."""
    n_, f_, ho, wo = ctx.ref[source].shape
    db = ctx.ref["db"]
    for f in range(f_):
        start, stop = (0, f, 0, 0), (n_, f + 1, ho, wo)
        value = float(db[f])
        yield make_event(
            "db",
            {letter: f},
            [ctx.box(source, start, stop)],
            [ctx.write_cell("db", (f,), value)],
            f"db[{f}] = Σ {ctx.text(source, start, stop)} = {fmt.number(value)}",
        )


def db_phase(rc, source: str = "dz", letter: str = "f") -> Phase:
    """Phase "db" as every view's window granularity shows it: F events, one per
    filter, each the sum of that filter's dz; ``source`` "x" sums the Conv2d's input
    instead, C events (a transposed layer's dy, whose channels are its output's: ``c``)."""
    count = rc.spec.F if source == "dz" else rc.spec.C
    if source == "dz" and letter == "f":
        return Phase("db", count, _db_events, "f")
    return Phase("db", count, lambda ctx: _db_events(ctx, source, letter), letter)
