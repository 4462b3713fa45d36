"""The phases every view shares: pad, activation, activation grad and crop.

Granularity (the same for every view and both granularities, so the interesting
phases keep the attention):

- ``pad``: one event per row of each input slice, N·C·H events. Event (n, c, h) reads
  the row ``x[n,c,h]`` and writes it into ``xp`` at row ``top + h``, columns
  ``left .. left + W``. The padding cells are never written: they stay the zeros every
  written tensor starts from, and the text says so.
- ``activation``: one event per output row, N·F·Ho events: reads ``z[n,f,i]``, writes
  ``out[n,f,i] = f(z[n,f,i])``.
- ``activation grad``: one event per output row, N·F·Ho events: reads ``dout[n,f,i]``
  and ``z[n,f,i]``, writes ``dz[n,f,i] = dout·f′(z)``.
- ``crop``: one event per row of dx, N·C·H events: reads ``dxp[n,c,top+h,left:left+W]``
  and writes ``dx[n,c,h]``. Rows and columns of dxp outside the crop (the padding and
  the floor-truncated edge) are left behind.

Loop letters: pad and crop use n, c, h (input row); activation phases n, f, i.
Values are listed in the text when a row has at most ``LIST_LIMIT`` cells.
"""

from __future__ import annotations

from typing import Iterator

from . import format as fmt
from .events import TraceContext
from .views import Phase

__all__ = ["LIST_LIMIT", "activation_grad_phase", "activation_phase", "crop_phase", "pad_phase"]

LIST_LIMIT = 8


def _listed(values: list[float]) -> str:
    return f" = {fmt.numbers(values)}" if len(values) <= LIST_LIMIT else ""


def _row_write(box: dict, delta: list[float], value: list[float]) -> dict:
    box["delta"] = delta
    box["value"] = value
    return box


def _pad_events(ctx: TraceContext) -> Iterator[dict]:
    spec = ctx.spec
    n_, c_, h_, w_ = spec.x_shape
    top, bottom, left, right = spec.padding
    x, state = ctx.ref["x"], ctx.state["xp"]
    note = f"; padding (top {top}, bottom {bottom}, left {left}, right {right}) stays 0" if any(spec.padding) else ""
    for n in range(n_):
        for c in range(c_):
            written = 0.0 + x[n, c]  # the state after the write: zero plus the row
            state[n, c, top : top + h_, left : left + w_] = written
            for h, (row, value) in enumerate(zip(x[n, c].tolist(), written.tolist())):
                src = (n, c, h, 0), (n + 1, c + 1, h + 1, w_)
                dst = (n, c, top + h, left), (n + 1, c + 1, top + h + 1, left + w_)
                yield {
                    "type": "event",
                    "phase": "pad",
                    "loop": {"n": n, "c": c, "h": h},
                    "reads": [ctx.box("x", *src)],
                    "writes": [_row_write(ctx.box("xp", *dst), row, value)],
                    "text": f"{ctx.text('xp', *dst)} = {ctx.text('x', *src)}{_listed(row)}{note if h == 0 else ''}",
                }


def pad_phase(rc) -> Phase:
    """Phase "pad": N·C·H events writing xp from x."""
    n, c, h, _ = rc.spec.x_shape
    return Phase("pad", n * c * h, _pad_events)


def _crop_events(ctx: TraceContext) -> Iterator[dict]:
    spec = ctx.spec
    n_, c_, h_, w_ = spec.x_shape
    top, _, left, _ = spec.padding
    dxp, state = ctx.ref["dxp"], ctx.state["dx"]
    for n in range(n_):
        for c in range(c_):
            rows = dxp[n, c, top : top + h_, left : left + w_]
            written = 0.0 + rows
            state[n, c] = written
            for h, (row, value) in enumerate(zip(rows.tolist(), written.tolist())):
                src = (n, c, top + h, left), (n + 1, c + 1, top + h + 1, left + w_)
                dst = (n, c, h, 0), (n + 1, c + 1, h + 1, w_)
                yield {
                    "type": "event",
                    "phase": "crop",
                    "loop": {"n": n, "c": c, "h": h},
                    "reads": [ctx.box("dxp", *src)],
                    "writes": [_row_write(ctx.box("dx", *dst), row, value)],
                    "text": f"{ctx.text('dx', *dst)} = {ctx.text('dxp', *src)}{_listed(row)}",
                }


def crop_phase(rc) -> Phase:
    """Phase "crop": N·C·H events writing dx from the interior of dxp."""
    n, c, h, _ = rc.spec.x_shape
    return Phase("crop", n * c * h, _crop_events)


def _output_rows(ctx: TraceContext, phase: str, target: str, reads: tuple[str, ...], say) -> Iterator[dict]:
    """One event per output row (n, f, i): ``target[n,f,i] = ref[target][n,f,i]``."""
    n_, f_, ho, wo = ctx.spec.out_shape
    ref, state = ctx.ref[target], ctx.state[target]
    for n in range(n_):
        for f in range(f_):
            written = 0.0 + ref[n, f]
            state[n, f] = written
            for i, (row, value) in enumerate(zip(ref[n, f].tolist(), written.tolist())):
                box = (n, f, i, 0), (n + 1, f + 1, i + 1, wo)
                yield {
                    "type": "event",
                    "phase": phase,
                    "loop": {"n": n, "f": f, "i": i},
                    "reads": [ctx.box(name, *box) for name in reads],
                    "writes": [_row_write(ctx.box(target, *box), row, value)],
                    "text": f"{ctx.text(target, *box)} = {say(*(ctx.text(name, *box) for name in reads))}{_listed(row)}",
                }


def _activation_events(ctx: TraceContext) -> Iterator[dict]:
    name = ctx.rc.activation.name
    return _output_rows(ctx, "activation", "out", ("z",), lambda z: f"{name}({z})")


def activation_phase(rc) -> Phase:
    """Phase "activation": N·F·Ho events writing out = f(z)."""
    n, f, ho, _ = rc.spec.out_shape
    return Phase("activation", n * f * ho, _activation_events)


def _activation_grad_events(ctx: TraceContext) -> Iterator[dict]:
    name = ctx.rc.activation.name
    return _output_rows(ctx, "activation grad", "dz", ("dout", "z"), lambda dout, z: f"{dout}·{name}′({z})")


def activation_grad_phase(rc) -> Phase:
    """Phase "activation grad": N·F·Ho events writing dz = dout·f′(z)."""
    n, f, ho, _ = rc.spec.out_shape
    return Phase("activation grad", n * f * ho, _activation_grad_events)
