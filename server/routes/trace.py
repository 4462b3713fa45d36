"""POST /api/trace (the whole document), POST /api/trace/stream (NDJSON) and
POST /api/conv (the numbers without the steps)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from .. import guard
from ..encoding import encode_json
from ..gate import build_until_disconnect, run_until_disconnect
from ..replies import DocumentResponse, SlotStreamingResponse
from ..schemas import (
    NDJSON_DESCRIPTION,
    NDJSON_LINE_SCHEMA,
    ConvRequest,
    ConvResult,
    ErrorBody,
    TraceConfig,
    TraceDocument,
)
from ..settings import Settings
from ..streaming import NDJSON_MEDIA_TYPE, ndjson_lines
from ..tracing import INPUT_ERRORS, conv_result, document_bytes, prepare, stream_lines

router = APIRouter(prefix="/api", tags=["trace"])

REFUSALS: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorBody, "description": "Too large: names the measure, its value and the limit."},
    415: {"model": ErrorBody, "description": "Not a JSON body: names the content type or charset sent."},
    422: {"model": ErrorBody, "description": "Bad input: names the field and the numbers."},
    503: {"model": ErrorBody, "description": "Busy: every build slot of the worker stayed taken; see Retry-After.",
          "headers": {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}}},
}


@router.post(
    "/trace",
    response_model=TraceDocument,
    summary="A whole trace document",
    responses=REFUSALS,
)
async def trace(body: TraceConfig, request: Request) -> Response:
    state = request.app.state
    key = await request.body()
    content = state.cache.get(key)
    if content is not None:
        return DocumentResponse(content)
    prepared = prepare(body.config(), state.settings, compare=body.compare, mistake=body.mistake)  # cheap (bounded inputs, no events): no thread to wait for
    slot = await state.gate.acquire(request)
    try:
        content = await build_until_disconnect(request, lambda cancel: document_bytes(prepared, cancel))
    except BaseException:
        slot.release()
        raise
    state.cache.put(key, content)
    return DocumentResponse(content, slot)


@router.post(
    "/trace/stream",
    response_class=StreamingResponse,
    summary="A trace as NDJSON lines",
    description=NDJSON_DESCRIPTION,
    responses={
        200: {
            "description": NDJSON_DESCRIPTION,
            "content": {NDJSON_MEDIA_TYPE: {"schema": NDJSON_LINE_SCHEMA}},
        },
        **REFUSALS,
    },
)
async def trace_stream(body: TraceConfig, request: Request) -> StreamingResponse:
    state = request.app.state
    prepared = prepare(body.config(), state.settings, compare=body.compare, mistake=body.mistake)  # cheap (bounded inputs, no events): no thread to wait for
    slot = await state.gate.acquire(request)
    try:
        lines = await run_until_disconnect(request, run_in_threadpool(stream_lines, prepared))
    except BaseException:
        slot.release()
        raise
    return SlotStreamingResponse(
        ndjson_lines(lines, state.stream_stats, state.settings.stream_chunk_events),
        slot,
        media_type=NDJSON_MEDIA_TYPE,
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


def _conv(config: dict[str, Any], settings: Settings) -> bytes:
    prepared = prepare(config, settings, count=False)
    try:
        result = conv_result(prepared)
    except INPUT_ERRORS as exc:  # mapped as on the trace routes
        raise guard.raise_for(exc) from exc
    return encode_json(result)


@router.post(
    "/conv",
    response_model=ConvResult,
    summary="Forward and backward results only",
    responses=REFUSALS,
)
async def conv(body: ConvRequest, request: Request) -> Response:
    content = await run_in_threadpool(_conv, body.config(), request.app.state.settings)
    return DocumentResponse(content)
