"""GET /api/debug/stats: stream counters, build slots and shared builds, mounted only
with CONVSCOPE_DEBUG=1.

The tests read ``events_generated`` before and after dropping a stream to check that
generation stopped, ``running`` and ``held_bytes`` to check that every slot and byte
came back, and ``builds_started`` to count coalesced builds; nothing else depends on it.
(``async``: it reads the gate on the event loop that owns it.)
"""

from __future__ import annotations

import os

from fastapi import APIRouter, Request

router = APIRouter(prefix="/api/debug", tags=["debug"])


@router.get("/stats", summary="Stream counters, build slots and shared builds of this worker process")
async def stats(request: Request) -> dict[str, int]:
    state = request.app.state
    return {
        "pid": os.getpid(),
        **state.stream_stats.snapshot(),
        **state.gate.stats(),
        **state.builds.stats(),
        **state.shares.stats(),
    }
