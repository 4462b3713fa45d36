"""The pad and fold phases of a padding mode that copies cells (reflect, replicate,
circular): where each padded value comes from, and where its gradient goes back.

With ``padding_mode="zeros"`` the shared ``phases.pad_phase`` / ``crop_phase`` apply:
the padding is zeros, never written, and its gradient is cropped away. With a mode
that copies, every padded cell holds the value of an input cell
(``convcore.padding_modes.source_index`` per axis: row ``r`` of xp copies row
``rows[r]`` of x, column ``q`` copies column ``cols[q]``), so:

- ``pad``: with ``copies="one"`` one event that reads all of x and writes all of xp,
  padding included; with ``"each"`` one event per row of xp, N·C·Hp events, event
  (n, c, r) reading row ``rows[r]`` of ``x[n, c]`` and writing xp's row r whole, its
  text naming the columns each cell copies;
- ``fold`` (in place of ``crop``): the gradient of a copy is a sum. With ``"one"`` one
  event that reads all of dxp and writes all of dx; with ``"each"`` one event per row
  of dx, N·C·H events, event (n, c, h) reading every row of ``dxp[n, c]`` that copied
  row h (the row itself and its mirror, edge or wrap images) and writing
  ``dx[n, c, h]``: each column's gradient added onto the column it copied.

The values come from the vectorised core (``convcore.padding_modes``), so replaying the
writes gives its xp and dx exactly. Loop letters: n, c, y (xp row) for pad row by row,
n, c, h for fold row by row; none in one step.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..padding_modes import source_index
from . import format as fmt
from .events import TraceContext
from .model import Event, make_event
from .phases import bulk_write
from .views import Phase

__all__ = ["MODE_WORDS", "fold_phase", "fold_reads", "mode_pad_phase", "source_rows_and_columns"]

# what a padded cell copies, in each mode that copies
MODE_WORDS = {
    "reflect": "the cell mirrored about the edge",
    "replicate": "the edge cell",
    "circular": "the cell from the far side (wrapped around)",
}


def source_rows_and_columns(spec, mode: str) -> tuple[list[int], list[int]]:
    """(rows, cols): for each row of xp the row of x it copies, for each column the
    column (``padding_modes.source_index`` along H and W)."""
    top, bottom, left, right = spec.padding
    _, _, h, w = spec.x_shape
    return source_index(h, top, bottom, mode).tolist(), source_index(w, left, right, mode).tolist()


def _column(ctx: TraceContext) -> str:
    """What a column is called: a sequence's are positions."""
    return "position" if ctx.rc.layer == "conv1d" else "column"


def _copied_from(ctx: TraceContext, rows: list[int], cols: list[int]) -> str:
    """Where xp's lines come from: ``rows [0, 0, 1] and columns [1, 0, 1]``; a
    sequence's ``positions [1, 0, 1]``."""
    if ctx.rc.layer == "conv1d":
        return f"positions {cols}"
    return f"rows {rows} and columns {cols}"


def _folded_onto(ctx: TraceContext, rows: list[int], cols: list[int]) -> str:
    """Where dxp's lines go: ``rows go onto x's rows …, its columns onto columns …``."""
    if ctx.rc.layer == "conv1d":
        return f"positions go onto x's positions {cols}"
    return f"rows go onto x's rows {rows}, its columns onto columns {cols}"


def _listed(values) -> str:
    return f" = {fmt.numbers(values)}" if len(values) <= fmt.LIST_LIMIT else ""


def _whole(ctx: TraceContext, src: str, dst: str, text: str) -> Iterator[Event]:
    """One event: reads all of ``src``, writes all of ``dst`` (its reference values)."""
    full = ctx.ref[dst]
    zero = (0,) * full.ndim
    yield make_event(
        "pad" if dst == "xp" else "fold",
        {},
        [ctx.box(src, zero, ctx.ref[src].shape)],
        [bulk_write(ctx, dst, zero, full.shape, full)],
        f"{text}{_listed(ctx.cell_list(dst, full))}",
    )


def _pad_events(ctx: TraceContext) -> Iterator[Event]:
    mode = ctx.rc.padding_mode
    rows, cols = source_rows_and_columns(ctx.spec, mode)
    if ctx.rc.copies == "one":
        return _whole(
            ctx,
            "x",
            "xp",
            f"xp = x with its {_copied_from(ctx, rows, cols)}: each padding cell copies {MODE_WORDS[mode]} "
            f"({mode} padding)",
        )
    return _pad_rows(ctx, mode, rows, cols)


def _pad_rows(ctx: TraceContext, mode: str, rows: list[int], cols: list[int]) -> Iterator[Event]:
    n_, c_, h_, w_ = ctx.spec.x_shape
    top = ctx.spec.padding[0]
    hp, wp = ctx.spec.padded_hw
    xp = ctx.ref["xp"]
    for n in range(n_):
        for c in range(c_):
            for r in range(hp):
                src = (n, c, rows[r], 0), (n + 1, c + 1, rows[r] + 1, w_)
                dst = (n, c, r, 0), (n + 1, c + 1, r + 1, wp)
                row = xp[n : n + 1, c : c + 1, r : r + 1]
                where = "" if top <= r < top + h_ else f"; a padding row: {mode} copies x's row {rows[r]}"
                yield make_event(
                    "pad",
                    {"n": n, "c": c, "y": r},
                    [ctx.box("x", *src)],
                    [bulk_write(ctx, "xp", *dst, row)],
                    f"{ctx.text('xp', *dst)} = {ctx.text('x', *src)} at {_column(ctx)}s {cols}{where}"
                    f"{_listed(row.ravel().tolist())}",
                )


def mode_pad_phase(rc) -> Phase:
    """Phase "pad" of a mode that copies: one event, or one per row of xp (``copies``)."""
    if rc.copies == "one":
        return Phase("pad", 1, _pad_events, "")
    n, c, _, _ = rc.spec.x_shape
    return Phase("pad", n * c * rc.spec.padded_hw[0], _pad_events, "ncy")


def _fold_events(ctx: TraceContext) -> Iterator[Event]:
    mode = ctx.rc.padding_mode
    rows, cols = source_rows_and_columns(ctx.spec, mode)
    if ctx.rc.copies == "one":
        return _whole(
            ctx,
            "dxp",
            "dx",
            f"dx = dxp folded back ({mode} padding): each cell's gradient is added onto the cell of x it copied "
            f"(dxp's {_folded_onto(ctx, rows, cols)})",
        )
    return _fold_rows(ctx, rows, cols)


def _fold_rows(ctx: TraceContext, rows: list[int], cols: list[int]) -> Iterator[Event]:
    n_, c_, h_, w_ = ctx.spec.x_shape
    wp = ctx.spec.padded_hw[1]
    dx = ctx.ref["dx"]
    copied_by = [[r for r, source in enumerate(rows) if source == h] for h in range(h_)]
    for n in range(n_):
        for c in range(c_):
            for h in range(h_):
                reads = [ctx.box("dxp", (n, c, r, 0), (n + 1, c + 1, r + 1, wp)) for r in copied_by[h]]
                said = " + ".join(ctx.text("dxp", (n, c, r, 0), (n + 1, c + 1, r + 1, wp)) for r in copied_by[h])
                dst = (n, c, h, 0), (n + 1, c + 1, h + 1, w_)
                row = dx[n : n + 1, c : c + 1, h : h + 1]
                yield make_event(
                    "fold",
                    {"n": n, "c": c, "h": h},
                    reads,
                    [bulk_write(ctx, "dx", *dst, row)],
                    f"{ctx.text('dx', *dst)} = {said}, {_column(ctx)} q of dxp added onto {_column(ctx)} c[q] of dx, "
                    f"c = {cols}"
                    f"{_listed(row.ravel().tolist())}",
                )


def fold_phase(rc) -> Phase:
    """Phase "fold" (a mode that copies, in place of "crop"): dx from dxp, the padding's
    gradient added onto the cells it copied; one event, or one per row of dx."""
    if rc.copies == "one":
        return Phase("fold", 1, _fold_events, "")
    n, c, h, _ = rc.spec.x_shape
    return Phase("fold", n * c * h, _fold_events, "nch")


def fold_reads(rc) -> int:
    """The most dxp rows one row-by-row fold event reads (for the cost model)."""
    rows, _ = source_rows_and_columns(rc.spec, rc.padding_mode)
    return max(np.bincount(rows).tolist())
