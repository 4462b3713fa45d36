"""GET /api/debug/stats: stream counters, mounted only with CONVSCOPE_DEBUG=1.

The tests read ``events_generated`` before and after dropping a stream to check that
generation stopped; nothing else depends on it.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

router = APIRouter(prefix="/api/debug", tags=["debug"])


@router.get("/stats", summary="Stream counters of this worker process")
def stats(request: Request) -> dict[str, int]:
    return request.app.state.stream_stats.snapshot()
