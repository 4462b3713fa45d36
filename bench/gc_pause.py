"""Pausing the cyclic garbage collector while a whole trace document is built.

The service itself no longer needs it: ``convscope.traces.prepare.document_bytes`` encodes a
document a chunk of events at a time, so no whole document's objects are alive at once.
bench/trace.py uses it for its whole-document route (build_trace, then encode); it
lives beside it, in bench/, since nothing else does.

A document holds ~100 containers per event and no reference cycles: the collector
would only rescan them again and again while they are made (a third of the build's
time, measured in bench/trace.py), and once more at the first allocation after it is
switched on again if the document is still alive then. convcore leaves the process
alone; a caller that owns the process and builds whole documents pauses the collector
around the build, encoding and freeing of a document.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic collector for the block, then restore it if it was on.

    Concurrent builds in threads are safe: the build that paused it restores it, so it
    never stays off; a build that found it already paused leaves it to that one."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
