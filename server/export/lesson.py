"""A lesson as one offline HTML file (``convscope export lesson.html --preset cs231n``: server/export/command.py).

The file holds the page (``bundle.inline_page``) and, in
``<script type="application/json" id="convscope-lesson">``, the lesson: its preset
(name, title, sentence, config) and the trace lines the service would stream for it
(header with its gradient check, events, end), and each step's questions (Predict,
``convcore.trace.questions``) while they fit in ``QUESTION_BYTES``. The page's
``js/io/lesson-file.js`` reads them instead of calling a server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..http.static_files import find_static_dir
from ..settings import Settings
from .bundle import BundleError, inline_page

__all__ = [
    "LESSON_ELEMENT",
    "LESSON_SCHEMA",
    "QUESTION_BYTES",
    "document_lesson",
    "lesson_document",
    "lesson_file",
    "lesson_html",
    "lesson_source",
    "prepare_lesson",
    "write_lesson",
]

LESSON_ELEMENT = "convscope-lesson"
LESSON_SCHEMA = "convscope.lesson/1"
# what a lesson file's questions may add (more steps than fit: the file has none, and its
# page's Predict says it needs the server); the lesson route reserves it before work
QUESTION_BYTES = 4_000_000


def prepare_lesson(config: dict[str, Any], settings: Settings):
    """``convscope.traces.prepare.prepare`` for a lesson's config, which, like the page's, may carry
    ``mistake`` (a mistake lesson: the mistaken code's trace) and ``compare`` (your
    numbers, compared at the stream's end) beside the trace config. Raises ApiError for
    what the service would refuse."""
    from ..traces.prepare import prepare

    trace_config = {k: v for k, v in config.items() if k not in ("mistake", "compare")}
    return prepare(trace_config, settings, compare=config.get("compare"), mistake=config.get("mistake"))


def lesson_document(
    config: dict[str, Any],
    *,
    name: str = "lesson",
    title: str = "A convolution, step by step",
    sentence: str = "",
    step: int = 0,
    code: bool = False,
    settings: Settings | None = None,
) -> dict[str, Any]:
    """The lesson a lesson file embeds: {schema, preset, lines (header, events, end), meta,
    step (where the file opens: the page's step when it was downloaded), code (it opens
    with the code panel open)}.

    Raises ApiError (with the field and the numbers) for a config the service would
    refuse under ``settings`` (default: its limits).
    """
    from ..traces.prepare import stream_lines  # NumPy and convcore: only when exporting

    settings = settings if settings is not None else Settings()
    lines = list(stream_lines(prepare_lesson(config, settings)))
    return _lesson(lines, config, name=name, title=title, sentence=sentence, step=step, code=code, settings=settings)


def _lesson(
    lines: list[dict[str, Any]],
    config: dict[str, Any],
    *,
    name: str,
    title: str,
    sentence: str,
    step: int,
    code: bool,
    settings: Settings,
) -> dict[str, Any]:
    """The lesson of stream ``lines`` (header, events, end) and the setup ``config``."""
    from ..api.meta import build_meta

    header = {k: v for k, v in lines[0].items() if k not in ("type", "check")}
    document = {**header, "events": [line for line in lines if line["type"] == "event"]}
    return {
        "schema": LESSON_SCHEMA,
        "preset": {"name": name, "title": title, "teaches": sentence, "config": config},
        "lines": lines,
        # what the page builds its controls from (GET /api/meta), for a page with no server
        "meta": build_meta(settings.limits()).model_dump(mode="json"),
        "step": step,
        "code": code,
        "questions": _questions_within(document, QUESTION_BYTES),
    }


def _questions_within(document: dict[str, Any], budget: int) -> list[list[dict[str, Any]]] | None:
    """Each step's questions, or None once they pass ``budget`` bytes of JSON (the work
    stops there: a trace too long for its questions costs at most ``budget`` of them)."""
    from convcore.trace.questions import step_questions

    from ..http.encoding import encode_json

    questions, size = [], 0
    for step in range(len(document["events"])):
        asked = step_questions(document, step)
        size += len(encode_json(asked))
        if size > budget:
            return None
        questions.append(asked)
    return questions


def document_lesson(
    document: dict[str, Any],
    config: dict[str, Any],
    *,
    name: str = "lesson",
    title: str,
    sentence: str = "",
    step: int = 0,
    code: bool = True,
    settings: Settings | None = None,
) -> dict[str, Any]:
    """The lesson of a trace document made elsewhere (a student's own code's:
    ``convcore.grader.code_trace``), as ``lesson_document`` makes one of a config:
    ``config`` is the setup the page's panel shows (the case's), the lines are the
    document's header, its events and the end."""
    settings = settings if settings is not None else Settings()
    header = {k: v for k, v in document.items() if k != "events"}
    lines = [
        {"type": "header", **header, "check": None},
        *({"type": "event", **event} for event in document["events"]),
        {"type": "end", "total_events": document["total_events"]},
    ]
    return _lesson(lines, config, name=name, title=title, sentence=sentence, step=step, code=code, settings=settings)


def lesson_file(lesson: dict[str, Any], *, static_dir: Path | None = None) -> str:
    """The offline lesson file (HTML text) of a ``lesson_document``; BundleError if the
    page is broken or missing."""
    from ..http.encoding import encode_json

    folder = static_dir if static_dir is not None else find_static_dir()
    if folder is None:
        raise BundleError("the page's folder (static/) is missing from this installation")
    title = lesson["preset"]["title"]
    return inline_page(
        folder, {LESSON_ELEMENT: encode_json(lesson).decode("utf-8")}, title=f"{title} · ConvScope lesson"
    )


def lesson_html(config: dict[str, Any], *, static_dir: Path | None = None, **about: Any) -> str:
    """The offline lesson file of ``config`` (a trace config) as HTML text; ``about``:
    name, title, sentence and settings, as for ``lesson_document``.

    Raises ApiError (with the field and the numbers) for a config the service would
    refuse under ``settings`` (default: its limits), BundleError if the page is broken.
    """
    return lesson_file(lesson_document(config, **about), static_dir=static_dir)


def lesson_source(preset: str | None, setup: str | None) -> dict[str, Any]:
    """Keyword arguments of lesson_html for a preset name or a setup (config) file."""
    if preset is not None:
        from ..traces.presets import PRESETS, get_preset

        found = get_preset(preset)
        if found is None:
            raise ValueError(f"no preset named {preset!r}; the presets are {', '.join(PRESETS)}")
        return {"config": found.config, "name": found.name, "title": found.title, "sentence": found.teaches}
    assert setup is not None
    text = sys.stdin.read() if setup == "-" else Path(setup).read_text(encoding="utf-8")
    config = json.loads(text)
    if not isinstance(config, dict):
        raise ValueError(f"{setup}: the setup must be a JSON object (a trace config), got {type(config).__name__}")
    title = str(config.pop("title", Path(setup).stem if setup != "-" else "A convolution, step by step"))
    return {"config": config, "name": "lesson", "title": title, "sentence": str(config.pop("teaches", ""))}


def write_lesson(
    output: Path, *, preset: str | None = None, setup: str | None = None, settings: Settings | None = None
) -> int:
    """Write the lesson file of a preset or a setup file to ``output``; its size in bytes."""
    html = lesson_html(settings=settings, **lesson_source(preset, setup)).encode("utf-8")
    output.write_bytes(html)
    return len(html)
