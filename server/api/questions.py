"""POST /api/questions: what a step of a trace can be asked before it is shown (predict,
then reveal), each question with its answer and explanation (convcore.trace.questions)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Body, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from convcore.trace.questions import step_questions

from ..http.encoding import encode_json
from ..http.errors import ApiError
from ..http.replies import DocumentResponse
from .schemas import Question, QuestionsRequest, TraceConfig
from .trace import EXAMPLES, REFUSALS, document_build

router = APIRouter(prefix="/api", tags=["questions"])


def _examples() -> dict[str, dict[str, Any]]:
    """Request bodies /docs offers (its "Try it out" sends the first)."""
    return {
        name: {"summary": f"{example['summary']}, step {step}", "value": {"config": example["value"], "step": step}}
        for (name, example), step in zip(EXAMPLES.items(), (1, 20, 3))
    }


QuestionsBody = Annotated[QuestionsRequest, Body(openapi_examples=_examples())]


def questions_at(doc: dict[str, Any], step: int) -> list[dict[str, Any]]:
    """``step_questions`` of a trace document, a step it lacks refused as the request's
    ``step`` (422 naming the steps it has)."""
    try:
        return step_questions(doc, step)
    except IndexError as exc:
        raise ApiError(422, ["body", "step"], str(exc), "value_error") from exc


def _questions(document: bytes, step: int) -> bytes:
    return encode_json(questions_at(orjson.loads(document), step))


@asynccontextmanager
async def config_document(config: TraceConfig, request: Request) -> AsyncIterator[bytes]:
    """The bytes of ``config``'s trace document, built under the trace routes' limits or
    taken from the document cache (one for every request of the same config, whatever
    step it asks about); ApiError for a config the service refuses, its fields under
    ["body", "config", ...]."""
    state = request.app.state
    # (json, not orjson: a number past 64 bits is the trace's refusal to make, not this key's)
    key = (
        b"questions:"
        + json.dumps(config.model_dump(mode="json", exclude_unset=True), sort_keys=True, separators=(",", ":")).encode()
    )
    content, build = state.cache.get(key), None
    if content is None:
        try:
            content, build = await document_build(config, request, key)
        except ApiError as exc:  # (the trace's fields are under config here)
            if exc.loc[:1] == ["body"]:
                exc.loc = ["body", "config", *exc.loc[1:]]
            raise
    try:
        yield content
    finally:
        if build is not None:
            state.builds.leave(build)


async def questions_of(config: TraceConfig, step: int, request: Request) -> bytes:
    """The questions of step ``step`` of ``config``'s trace, as JSON; ApiError as
    ``config_document``'s, or for a step the trace does not have."""
    async with config_document(config, request) as content:
        return await run_in_threadpool(_questions, content, step)


@router.post(
    "/questions",
    response_model=list[Question],
    summary="Questions a step answers, asked before it is shown",
    description="The step's trace is built (or taken from the document cache) under the trace routes' "
    "limits; the questions come from its event: a written cell's value, the cells it reads and writes, "
    "out's shape at the forward's first step, and at an activation step whether anything changes.",
    responses=REFUSALS,
)
async def questions(body: QuestionsBody, request: Request) -> Response:
    return DocumentResponse(await questions_of(body.config, body.step, request), pace=request.app.state.pace)
