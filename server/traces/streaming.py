"""NDJSON streaming of a trace: header line first, event lines, end line.

The trace generator (``convcore.trace.iter_trace``) is synchronous and CPU-bound. An
async generator pulls it in chunks (at most ``chunk_events`` lines, about
``BLOCK_BYTES``) through the threadpool, so the event loop stays free and the header
leaves before any event is generated. The blocks go to a shared build
(``convscope.traces.shared_builds``), which makes them as fast as the threadpool allows, whatever its
readers' speed; when its last reader goes away the build is cancelled at its next
await: the generator's ``finally`` closes the trace generator and no further event is
generated. (A sync generator would only be closed at garbage collection.)

``StreamStats`` counts what was generated; ``GET /api/debug/stats`` shows it when the
service runs with ``CONVSCOPE_DEBUG=1``, which is how the tests check that a dropped
stream stops.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from starlette.concurrency import run_in_threadpool

from ..http.encoding import encode_json

__all__ = ["NDJSON_MEDIA_TYPE", "StreamStats", "ndjson_lines"]

NDJSON_MEDIA_TYPE = "application/x-ndjson"


@dataclass
class StreamStats:
    """Counters of this process's streams (shown by /api/debug/stats in debug mode)."""

    streams_started: int = 0
    streams_completed: int = 0
    streams_cancelled: int = 0
    streams_failed: int = 0
    events_generated: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}


def _error_line(exc: Exception) -> dict[str, Any]:
    field_name = getattr(exc, "field", None)
    loc = ["body", field_name] if field_name else ["body"]
    return {"type": "error", "detail": [{"loc": loc, "msg": str(exc) or type(exc).__name__, "type": "trace_error"}]}


BLOCK_BYTES = 256 * 1024  # a block ends after the line that passes this many bytes


def _next_block(lines: Iterator[dict[str, Any]], limit: int, stats: StreamStats) -> tuple[bytes, str | None]:
    """Pull up to ``limit`` lines (and about ``BLOCK_BYTES``) and encode them as NDJSON;
    runs in a worker thread.

    Returns the bytes and how the stream ended: None (not yet), "completed" (end line
    or exhaustion) or "failed" (an error line was written).
    """
    parts: list[bytes] = []
    done: str | None = None
    events = 0
    size = 0
    try:
        for _ in range(limit):
            if size > BLOCK_BYTES:
                break
            line = next(lines, None)
            if line is None:
                done = "completed"
                break
            kind = line.get("type")
            if kind == "event":
                events += 1
            elif kind == "events":
                events += len(line.get("events", ()))
            part = encode_json(line)
            size += len(part)
            parts.append(part)
            if kind in ("end", "error"):
                done = "completed" if kind == "end" else "failed"
                break
    except Exception as exc:  # an error after the header becomes an error line
        parts.append(encode_json(_error_line(exc)))
        done = "failed"
    stats.add("events_generated", events)
    parts.append(b"")
    return b"\n".join(parts), done


async def ndjson_lines(
    lines: Iterator[dict[str, Any]],
    stats: StreamStats,
    chunk_events: int,
    on_end: Callable[[str], None] | None = None,
) -> AsyncIterator[bytes]:
    """Encode ``lines`` (header, events, end) as NDJSON blocks, pulled in chunks.

    The first block holds the header line alone so that it leaves at once; later blocks
    hold up to ``chunk_events`` lines. ``on_end`` is told how the stream ended:
    "completed", "failed" (an error line) or "cancelled".
    """
    stats.add("streams_started")
    finished = False
    outcome = "cancelled"
    try:
        limit = 1
        while True:
            block, done = await run_in_threadpool(_next_block, lines, limit, stats)
            if block:
                yield block
            if done:
                finished = True
                outcome = done
                stats.add("streams_completed" if done == "completed" else "streams_failed")
                return
            limit = chunk_events
    except (asyncio.CancelledError, GeneratorExit):
        stats.add("streams_cancelled")
        raise
    finally:
        if not finished and not getattr(lines, "gi_running", False):
            close = getattr(lines, "close", None)
            if close is not None:
                close()
        if on_end is not None:
            on_end(outcome)
