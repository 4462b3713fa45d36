"""POST /api/trace (the whole document), POST /api/trace/stream (NDJSON) and
POST /api/conv (the numbers without the steps)."""

from __future__ import annotations

from typing import Any, Iterator

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response, StreamingResponse

from .. import guard
from ..encoding import JSONBytesResponse, encode_json
from ..errors import error_body
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
    413: {"model": ErrorBody, "description": "Too large: names the count and the limit."},
    422: {"model": ErrorBody, "description": "Bad input: names the field and the numbers."},
}


def _document(config: dict[str, Any], settings: Settings, compare: Any = None) -> bytes:
    return document_bytes(prepare(config, settings, compare=compare))


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
    if content is None:
        content = await run_in_threadpool(_document, body.config(), state.settings, body.compare)
        state.cache.put(key, content)
    return JSONBytesResponse(content)


def _lines(config: dict[str, Any], settings: Settings, compare: Any = None) -> Iterator[dict[str, Any]]:
    return stream_lines(prepare(config, settings, compare=compare))


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
    lines = await run_in_threadpool(_lines, body.config(), state.settings, body.compare)
    return StreamingResponse(
        ndjson_lines(lines, state.stream_stats, state.settings.stream_chunk_events),
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
    return JSONBytesResponse(content)


_OTHER_METHODS = ["GET", "HEAD", "PUT", "PATCH", "DELETE"]


async def _post_only(request: Request) -> Response:
    """405 for another method on a POST route. Without it the page's static mount at
    ``/`` would answer ``GET /api/trace`` with a 404."""
    msg = f"{request.method} is not allowed on {request.url.path}: send POST with a JSON body"
    return JSONResponse(error_body(["method"], msg, "method_not_allowed"), status_code=405, headers={"Allow": "POST"})


for _path in ("/trace", "/trace/stream", "/conv"):
    router.add_api_route(_path, _post_only, methods=_OTHER_METHODS, include_in_schema=False)
