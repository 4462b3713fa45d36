"""POST /api/lesson: the page's "Download lesson", the offline lesson file of a setup
(``server/export/lesson.py``, the same file as ``convscope export``), as an attachment.
It costs what the setup's trace costs (the same checks and limits, one build slot)
plus the page's bundle."""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from ..export.lesson import lesson_html, prepare_lesson
from ..gate import run_until_disconnect
from ..schemas import TraceConfig
from .trace import REFUSALS

router = APIRouter(prefix="/api", tags=["lesson"])


class LessonRequest(BaseModel):
    setup: TraceConfig = Field(description="the trace config of the lesson")
    name: str = Field("lesson", pattern=r"^[A-Za-z0-9_-]{1,64}$", description="the lesson's name (the file's)")
    title: str = Field("A convolution, step by step", min_length=1, max_length=120)
    sentence: str = Field("", max_length=600, description="what the lesson teaches, in one sentence")


@router.post(
    "/lesson",
    response_class=Response,
    summary="The offline lesson file of a setup (one self-contained HTML file)",
    responses={200: {"content": {"text/html": {}}, "description": "the lesson file"}, **REFUSALS},
)
async def lesson(body: LessonRequest, request: Request) -> Response:
    state = request.app.state
    # the page's config: a mistake lesson's "mistake" and your numbers' "compare" travel too
    config = body.setup.config()
    for extra in ("mistake", "compare"):
        if getattr(body.setup, extra) is not None:
            config[extra] = getattr(body.setup, extra)
    prepare_lesson(config, state.settings)  # refuses what the service refuses (422, 413) before any work
    slot = await state.gate.acquire(request)
    try:
        html = await run_until_disconnect(
            request,
            run_in_threadpool(lesson_html, config, name=body.name, title=body.title, sentence=body.sentence, settings=state.settings),
        )
    finally:
        slot.release()
    filename = re.sub(r"[^A-Za-z0-9_-]", "", body.name) or "lesson"
    return Response(
        html.encode("utf-8"),
        media_type="text/html; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="convscope-{filename}.html"', "cache-control": "no-store"},
    )
