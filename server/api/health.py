"""GET /api/health: version, trace schema, encoder and limits.

An ``async def`` on the event loop: it never waits for a thread, so builds (which run
in threads, at most ``max_builds`` at once) cannot queue it.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from convcore import __version__
from convcore.trace import SCHEMA

from ..http.encoding import ENCODER
from .schemas import Health, Limits

router = APIRouter(prefix="/api", tags=["service"])

TRACE_SCHEMA = SCHEMA  # the engine says which schema its documents follow


@router.get("/health", response_model=Health, summary="Version and limits")
async def health(request: Request) -> Health:
    settings = request.app.state.settings
    return Health(version=__version__, trace_schema=TRACE_SCHEMA, encoder=ENCODER, limits=Limits(**settings.limits()))
