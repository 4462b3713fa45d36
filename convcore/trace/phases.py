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


def _pad_events(ctx: TraceContext) -> Iterator[dict]:
    spec = ctx.spec
    n_, c_, h_, w_ = spec.x_shape
    top, bottom, left, right = spec.padding
    x = ctx.ref["x"]
    padded = any(spec.padding)
    for n in range(n_):
        for c in range(c_):
            for h in range(h_):
                row = x[n, c, h]
                src = (n, c, h, 0), (n + 1, c + 1, h + 1, w_)
                dst = (n, c, top + h, left), (n + 1, c + 1, top + h + 1, left + w_)
                text = f"{ctx.text('xp', *dst)} = {ctx.text('x', *src)}{_listed(row.tolist())}"
                if padded and h == 0:
                    text += f"; padding (top {top}, bottom {bottom}, left {left}, right {right}) stays 0"
                yield {
                    "type": "event",
                    "phase": "pad",
                    "loop": {"n": n, "c": c, "h": h},
                    "reads": [ctx.box("x", *src)],
                    "writes": [ctx.write("xp", *dst, None, row)],
                    "text": text,
                }


def pad_phase(rc) -> Phase:
    """Phase "pad": N·C·H events writing xp from x."""
    n, c, h, _ = rc.spec.x_shape
    return Phase("pad", n * c * h, _pad_events)


def _crop_events(ctx: TraceContext) -> Iterator[dict]:
    spec = ctx.spec
    n_, c_, h_, w_ = spec.x_shape
    top, _, left, _ = spec.padding
    dxp = ctx.ref["dxp"]
    for n in range(n_):
        for c in range(c_):
            for h in range(h_):
                row = dxp[n, c, top + h, left : left + w_]
                src = (n, c, top + h, left), (n + 1, c + 1, top + h + 1, left + w_)
                dst = (n, c, h, 0), (n + 1, c + 1, h + 1, w_)
                yield {
                    "type": "event",
                    "phase": "crop",
                    "loop": {"n": n, "c": c, "h": h},
                    "reads": [ctx.box("dxp", *src)],
                    "writes": [ctx.write("dx", *dst, None, row)],
                    "text": f"{ctx.text('dx', *dst)} = {ctx.text('dxp', *src)}{_listed(row.tolist())}",
                }


def crop_phase(rc) -> Phase:
    """Phase "crop": N·C·H events writing dx from the interior of dxp."""
    n, c, h, _ = rc.spec.x_shape
    return Phase("crop", n * c * h, _crop_events)


def _rows(spec):
    n_, f_, ho, wo = spec.out_shape
    for n in range(n_):
        for f in range(f_):
            for i in range(ho):
                yield n, f, i, ((n, f, i, 0), (n + 1, f + 1, i + 1, wo))


def _activation_events(ctx: TraceContext) -> Iterator[dict]:
    name = ctx.rc.activation.name
    out = ctx.ref["out"]
    for n, f, i, box in _rows(ctx.spec):
        row = out[n, f, i]
        yield {
            "type": "event",
            "phase": "activation",
            "loop": {"n": n, "f": f, "i": i},
            "reads": [ctx.box("z", *box)],
            "writes": [ctx.write("out", *box, None, row)],
            "text": f"{ctx.text('out', *box)} = {name}({ctx.text('z', *box)}){_listed(row.tolist())}",
        }


def activation_phase(rc) -> Phase:
    """Phase "activation": N·F·Ho events writing out = f(z)."""
    n, f, ho, _ = rc.spec.out_shape
    return Phase("activation", n * f * ho, _activation_events)


def _activation_grad_events(ctx: TraceContext) -> Iterator[dict]:
    name = ctx.rc.activation.name
    dz = ctx.ref["dz"]
    for n, f, i, box in _rows(ctx.spec):
        row = dz[n, f, i]
        yield {
            "type": "event",
            "phase": "activation grad",
            "loop": {"n": n, "f": f, "i": i},
            "reads": [ctx.box("dout", *box), ctx.box("z", *box)],
            "writes": [ctx.write("dz", *box, None, row)],
            "text": (
                f"{ctx.text('dz', *box)} = {ctx.text('dout', *box)}·{name}′({ctx.text('z', *box)})"
                f"{_listed(row.tolist())}"
            ),
        }


def activation_grad_phase(rc) -> Phase:
    """Phase "activation grad": N·F·Ho events writing dz = dout·f′(z)."""
    n, f, ho, _ = rc.spec.out_shape
    return Phase("activation grad", n * f * ho, _activation_grad_events)
