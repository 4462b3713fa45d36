"""The event model of schema ``convscope.trace/3`` in code: Box, Write, Event and the
stream's lines, each built by one function here and nowhere else.

```
Box   = {tensor, start, stop, step}          # a strided rectangle of one tensor,
                                             # one entry per axis, the header's order
Write = Box + {delta, value}                 # delta added to the Box's cells (row-major);
                                             # value = those cells after the add
Event = {phase, loop, reads: [Box], writes: [Write], text}
        + {line, lines, scalars}             # where the header has a listing (code.py)
```

A document (``build_trace``) lists the events as they are; the stream (``iter_trace``)
sends each as a line whose ``type`` is ``event`` (``event_lines``), beside the
``header`` and ``end`` lines (``stream_line``): the tag is added here, on the way out,
and never removed. ``delta`` and ``value`` are
lists of floats, or 1-D float64 arrays in a trace made ``arrays=True`` (an encoder
that writes arrays gives the same JSON). Events share immutable pieces (Boxes,
start/stop/step lists, loop dicts): treat them as read-only.

The JS side has the same shapes as JSDoc typedefs (``static/js/model/trace-types.js``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypedDict

__all__ = ["Box", "Event", "Write", "make_box", "make_boxes", "make_event", "make_write", "event_lines", "stream_line"]

Numbers = list | Any  # list of floats, or a 1-D float64 array (arrays=True)


class Box(TypedDict):
    """A strided rectangle ``start:stop:step`` of one tensor, in the header's axis order."""

    tensor: str
    start: Sequence[int]
    stop: Sequence[int]
    step: Sequence[int]


class Write(Box):
    """A Box plus ``delta`` (added to its cells, row-major) and ``value`` (the cells after)."""

    delta: Numbers
    value: Numbers


class _EventCore(TypedDict):
    phase: str
    loop: dict[str, int]
    reads: list[Box]
    writes: list[Write]
    text: str


class Event(_EventCore, total=False):
    """One step: where it is in the loops, what it reads and writes, and the step in
    words; with a listing in the header also the ``line`` it runs (the last of its
    ``lines``, one per write) and the ``scalars`` those lines read (``code.py``)."""

    line: int | None
    lines: list[int]
    scalars: dict[str, float]


def make_box(tensor: str, start: Sequence[int], stop: Sequence[int], step: Sequence[int]) -> Box:
    """The Box of ``tensor`` (start, stop, step: the trace's axis order, one per axis)."""
    return {"tensor": tensor, "start": start, "stop": stop, "step": step}


def make_boxes(tensor: str, starts: Sequence, stops: Sequence, step: Sequence[int]) -> list[Box]:
    """``make_box`` for many Boxes of one tensor at once, one shared ``step`` (the cell
    and window tables that hot loops index)."""
    return [{"tensor": tensor, "start": a, "stop": b, "step": step} for a, b in zip(starts, stops)]


def make_write(
    tensor: str, start: Sequence[int], stop: Sequence[int], step: Sequence[int], delta: Numbers, value: Numbers
) -> Write:
    """The Write of ``delta`` into the Box, ``value`` the cells after the add."""
    return {"tensor": tensor, "start": start, "stop": stop, "step": step, "delta": delta, "value": value}


def make_event(phase: str, loop: dict[str, int], reads: list[Box], writes: list[Write], text: str) -> Event:
    """The Event, its keys in the order the wire shows them."""
    return {"phase": phase, "loop": loop, "reads": reads, "writes": writes, "text": text}


def event_lines(events: Iterable[Event]) -> Iterator[dict]:
    """The stream lines of events: each its ``type`` tag, then the event's keys."""
    for event in events:
        yield {"type": "event", **event}


def stream_line(kind: str, body: dict) -> dict:
    """Another line of the stream: ``{"type": kind, **body}`` (kind "header" or "end")."""
    return {"type": kind, **body}
