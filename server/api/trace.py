"""POST /api/trace (the whole document), POST /api/trace/stream (NDJSON) and
POST /api/conv (the numbers without the steps)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from ..http.disconnect import run_until_disconnect
from ..http.encoding import encode_json
from ..http.replies import BuildStreamResponse, DocumentResponse
from ..settings import Settings
from ..traces import input_sizes
from ..traces.prepare import INPUT_ERRORS, conv_result, document_bytes, prepare, stream_lines
from ..traces.presets import get_preset
from ..traces.shared_builds import SharedBuild
from ..traces.streaming import NDJSON_MEDIA_TYPE, ndjson_lines
from .schemas import (
    NDJSON_DESCRIPTION,
    NDJSON_LINE_SCHEMA,
    ConvRequest,
    ConvResult,
    ErrorBody,
    TraceConfig,
    TraceDocument,
)

router = APIRouter(prefix="/api", tags=["trace"])

STREAM_HEADERS = {"cache-control": "no-store", "x-accel-buffering": "no"}


def _examples() -> dict[str, dict[str, Any]]:
    """Request bodies /docs offers (its "Try it out" sends the first): lessons' configs."""
    out = {}
    for name in ("d2l", "cs231n"):
        preset = get_preset(name)
        out[name] = {"summary": preset.title, "description": preset.teaches, "value": preset.to_dict()["config"]}
    out["fills"] = {
        "summary": "Generated tensors, stride 2, same padding, ReLU",
        "value": {
            "x": {"fill": "randint", "shape": [1, 2, 5, 5], "low": -3, "high": 3, "seed": 1},
            "w": {"fill": "randint", "shape": [2, 2, 3, 3], "low": -1, "high": 1, "seed": 2},
            "b": [0, 1],
            "stride": 2,
            "padding": "same",
            "activation": "relu",
        },
    }
    return out


EXAMPLES = _examples()
TraceBody = Annotated[TraceConfig, Body(openapi_examples=EXAMPLES)]
ConvBody = Annotated[ConvRequest, Body(openapi_examples=EXAMPLES)]

REFUSALS: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorBody, "description": "Too large: names the measure, its value and the limit."},
    415: {"model": ErrorBody, "description": "Not a JSON body: names the content type or charset sent."},
    422: {"model": ErrorBody, "description": "Bad input: names the field and the numbers."},
    503: {
        "model": ErrorBody,
        "description": "Busy: every build slot of the worker stayed taken; see Retry-After.",
        "headers": {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}},
    },
}


@router.post(
    "/trace",
    response_model=TraceDocument,
    summary="A whole trace document",
    responses=REFUSALS,
)
async def trace(body: TraceBody, request: Request) -> Response:
    state = request.app.state
    key = await request.body()
    content = state.cache.get(key)
    if content is not None:
        return DocumentResponse(content, pace=state.pace)
    content, build = await document_build(body, request, key)
    return DocumentResponse(content, pace=state.pace, after=lambda: state.builds.leave(build))


async def document_build(body: TraceConfig, request: Request, key: bytes) -> tuple[bytes, SharedBuild]:
    """The bytes of ``body``'s trace document and the shared build that made them (one
    for every request with the same ``key``, kept in the document cache under it). The
    caller leaves the build (``state.builds.leave``) once the bytes are out."""
    state = request.app.state
    prepared = prepare(
        body.config(), state.settings, compare=body.compare, mistake=body.mistake
    )  # cheap (bounded inputs, no events): no thread to wait for

    async def produce() -> AsyncIterator[bytes]:
        cancel = threading.Event()
        try:
            yield await run_in_threadpool(document_bytes, prepared, cancel)
        finally:
            cancel.set()  # a build still running stops at its next chunk

    build = state.builds.join(
        ("document", key),
        prepared.cost.bytes,
        produce,
        on_done=lambda done: state.cache.put(key, b"".join(done.blocks)),
    )
    try:
        content = await run_until_disconnect(request.receive, build.whole())
    except BaseException:
        state.builds.leave(build)
        raise
    return content, build


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
async def trace_stream(body: TraceBody, request: Request) -> Response:
    state = request.app.state
    key = b"stream:" + await request.body()
    cached = state.cache.get(key)
    if cached is not None:
        return DocumentResponse(cached, pace=state.pace, media_type=NDJSON_MEDIA_TYPE, headers=STREAM_HEADERS)
    prepared = prepare(
        body.config(), state.settings, compare=body.compare, mistake=body.mistake
    )  # cheap (bounded inputs, no events): no thread to wait for
    outcome: list[str] = []

    async def produce() -> AsyncIterator[bytes]:
        lines = await run_in_threadpool(stream_lines, prepared)  # the header (a 422 before any line)
        async for block in ndjson_lines(lines, state.stream_stats, state.settings.stream_chunk_events, outcome.append):
            yield block

    def keep(done: SharedBuild) -> None:
        if outcome == ["completed"]:
            state.cache.put(key, b"".join(done.blocks))

    build = state.builds.join(("stream", key), prepared.cost.bytes, produce, on_done=keep)
    try:
        await run_until_disconnect(request.receive, build.started())
    except BaseException:
        state.builds.leave(build)
        raise
    return BuildStreamResponse(
        state.builds, build, pace=state.pace, media_type=NDJSON_MEDIA_TYPE, headers=STREAM_HEADERS
    )


def _conv(config: dict[str, Any], settings: Settings) -> bytes:
    prepared = prepare(config, settings, count=False)
    try:
        result = conv_result(prepared)
    except INPUT_ERRORS as exc:  # mapped as on the trace routes
        raise input_sizes.raise_for(exc) from exc
    return encode_json(result)


@router.post(
    "/conv",
    response_model=ConvResult,
    summary="Forward and backward results only",
    responses=REFUSALS,
)
async def conv(body: ConvBody, request: Request) -> Response:
    content = await run_in_threadpool(_conv, body.config(), request.app.state.settings)
    return DocumentResponse(content, pace=request.app.state.pace)
