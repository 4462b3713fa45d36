"""The two phases of a true convolution (``flip``): the kernel turned by 180° before the
steps, and its gradient turned back after them.

Deep learning's "convolution" is a cross-correlation; signal processing's flips the
kernel first. A trace with ``flip`` shows the flip as steps of its own, so that the rest
is the familiar sweep:

- ``flip`` (first, before the pad): one event that reads all of w and writes all of
  ``wf``, ``wf[f,c,k,l] = w[f,c,KH−1−k,KW−1−l]``; the steps then slide ``wf``;
- ``flip back`` (last, after the crop or fold): one event that reads all of ``dwf``,
  the gradient the steps gathered for ``wf``, and writes ``dw``, the gradient of the
  filters as given: ``dw[f,c,k,l] = dwf[f,c,KH−1−k,KW−1−l]``.

Engine names: the views' ``w`` and ``dw`` are the trace's ``wf`` and ``dwf``; the
filters as given are the engine's ``w_given`` and ``dw_given`` (``aliases.FLIP_RENAMES``).
"""

from __future__ import annotations

from collections.abc import Iterator

from . import format as fmt
from .events import TraceContext
from .model import Event, make_event
from .phases import bulk_write
from .views import Phase

__all__ = ["flip_back_phase", "flip_phase"]


def _turn(ctx: TraceContext, phase: str, src: str, dst: str) -> Iterator[Event]:
    """One event: ``dst`` (engine name) written whole as ``src`` turned by 180°."""
    full = ctx.ref[dst]
    zero = (0,) * full.ndim
    write = bulk_write(ctx, dst, zero, full.shape, full)
    kh, kw = full.shape[2], full.shape[3]
    shown, source = ctx.name(dst), ctx.name(src)
    values = ctx.cell_list(dst, full)
    listed = f" = {fmt.numbers(values)}" if len(values) <= fmt.LIST_LIMIT else ""
    cell, turned = (
        ("k,l,c,f", f"{kh - 1}−k,{kw - 1}−l,c,f") if ctx.layout == "NHWC" else ("f,c,k,l", f"f,c,{kh - 1}−k,{kw - 1}−l")
    )
    why = (
        "each filter turned by 180°, so that sliding it convolves"
        if phase == "flip"
        else "the gradient turned back onto the filters as given"
    )
    yield make_event(
        phase,
        {},
        [ctx.box(src, zero, ctx.ref[src].shape)],
        [write],
        f"{shown}[{cell}] = {source}[{turned}]: {why}{listed}",
    )


def flip_phase(rc) -> Phase:
    """Phase "flip": wf written from w in one event."""
    return Phase("flip", 1, lambda ctx: _turn(ctx, "flip", "w_given", "w"), "")


def flip_back_phase(rc) -> Phase:
    """Phase "flip back": dw written from dwf in one event."""
    return Phase("flip back", 1, lambda ctx: _turn(ctx, "flip back", "dw", "dw_given"), "")
