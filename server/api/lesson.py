"""POST /api/lesson: the page's "Download lesson", the offline lesson file of a setup
(``server/export/lesson.py``, the same file as ``convscope export``), as an attachment.
It costs what the setup's trace costs (the same checks and limits, one build slot)
plus the page's bundle; the same request made twice at once is built once."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Body, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from ..export.lesson import QUESTION_BYTES, lesson_html, prepare_lesson
from ..http.disconnect import run_until_disconnect
from ..http.replies import DocumentResponse
from ..http.static_files import find_static_dir
from .schemas import TraceConfig
from .trace import EXAMPLES, REFUSALS

router = APIRouter(prefix="/api", tags=["lesson"])


@lru_cache(maxsize=4)
def bundle_bytes(static_dir: Path | None) -> int:
    """An upper bound on what the page's files add to a lesson file: every file of the
    page, as a base64 data URI at the worst (4/3 of its size)."""
    folder = static_dir if static_dir is not None else find_static_dir()
    if folder is None:
        return 0
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) * 4 // 3 + 4096


class LessonRequest(BaseModel):
    setup: TraceConfig = Field(description="the trace config of the lesson")
    name: str = Field("lesson", pattern=r"^[A-Za-z0-9_-]{1,64}$", description="the lesson's name (the file's)")
    title: str = Field("A convolution, step by step", min_length=1, max_length=120)
    sentence: str = Field("", max_length=600, description="what the lesson teaches, in one sentence")
    step: int = Field(
        0,
        ge=0,
        le=10**9,
        description="the step the file opens at (the one shown when it was downloaded; past the last, the last)",
    )
    code: bool = Field(False, description="the file opens with the code panel open (the line each step runs)")


LESSON_EXAMPLES = {
    "d2l": {
        "summary": "Dive into Deep Learning's 3x3 example, as a lesson file",
        "value": {
            "setup": EXAMPLES["d2l"]["value"],
            "name": "d2l",
            "title": "Cross-correlation by hand",
            "sentence": EXAMPLES["d2l"]["description"],
        },
    },
}


@router.post(
    "/lesson",
    response_class=Response,
    summary="The offline lesson file of a setup (one self-contained HTML file)",
    responses={200: {"content": {"text/html": {}}, "description": "the lesson file"}, **REFUSALS},
)
async def lesson(body: Annotated[LessonRequest, Body(openapi_examples=LESSON_EXAMPLES)], request: Request) -> Response:
    state = request.app.state
    # the page's config: a mistake lesson's "mistake" and your numbers' "compare" travel too
    config = body.setup.config()
    for extra in ("mistake", "compare"):
        if getattr(body.setup, extra) is not None:
            config[extra] = getattr(body.setup, extra)
    prepared = prepare_lesson(config, state.settings)  # refuses what the service refuses (422, 413) before any work

    async def produce() -> AsyncIterator[bytes]:
        html = await run_in_threadpool(
            lesson_html,
            config,
            name=body.name,
            title=body.title,
            sentence=body.sentence,
            step=body.step,
            code=body.code,
            settings=state.settings,
        )
        yield html.encode("utf-8")

    # the file holds the trace document, its questions and the page's code and style
    nbytes = prepared.cost.bytes + QUESTION_BYTES + bundle_bytes(state.static_dir)
    build = state.builds.join(("lesson", await request.body()), nbytes, produce)
    try:
        content = await run_until_disconnect(request.receive, build.whole())
    except BaseException:
        state.builds.leave(build)
        raise
    filename = re.sub(r"[^A-Za-z0-9_-]", "", body.name) or "lesson"
    return DocumentResponse(
        content,
        pace=state.pace,
        after=lambda: state.builds.leave(build),
        media_type="text/html; charset=utf-8",
        headers={
            "content-disposition": f'attachment; filename="convscope-{filename}.html"',
            "cache-control": "no-store",
        },
    )
