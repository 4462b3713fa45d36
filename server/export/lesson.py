"""A lesson as one offline HTML file: ``convscope export lesson.html --preset cs231n``.

The file holds the page (``bundle.inline_page``) and, in
``<script type="application/json" id="convscope-lesson">``, the lesson: its preset
(name, title, sentence, config) and the trace lines the service would stream for it
(header with its gradient check, events, end). The page's ``js/offline.js`` reads
them instead of calling a server.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import ApiError
from ..settings import Settings
from ..static_files import find_static_dir
from .bundle import BundleError, inline_page

__all__ = ["LESSON_ELEMENT", "LESSON_SCHEMA", "add_export_command", "export_command", "lesson_html", "write_lesson"]

LESSON_ELEMENT = "convscope-lesson"
LESSON_SCHEMA = "convscope.lesson/1"


def lesson_html(
    config: dict[str, Any],
    *,
    name: str = "lesson",
    title: str = "A convolution, step by step",
    sentence: str = "",
    settings: Settings | None = None,
    static_dir: Path | None = None,
) -> str:
    """The offline lesson file of ``config`` (a trace config) as HTML text.

    Raises ApiError (with the field and the numbers) for a config the service would
    refuse under ``settings`` (default: its limits), BundleError if the page is broken.
    """
    from ..encoding import encode_json
    from ..routes.meta import build_meta
    from ..tracing import prepare, stream_lines  # NumPy and convcore: only when exporting

    settings = settings if settings is not None else Settings()
    folder = static_dir if static_dir is not None else find_static_dir()
    if folder is None:
        raise BundleError("the page's folder (static/) is missing from this installation")
    lines = list(stream_lines(prepare(config, settings)))
    lesson = {
        "schema": LESSON_SCHEMA,
        "preset": {"name": name, "title": title, "teaches": sentence, "config": config},
        "lines": lines,
        # what the page builds its controls from (GET /api/meta), for a page with no server
        "meta": build_meta(settings.limits()).model_dump(mode="json"),
    }
    return inline_page(folder, {LESSON_ELEMENT: encode_json(lesson).decode("utf-8")}, title=f"{title} · ConvScope lesson")


def _lesson_source(preset: str | None, setup: str | None) -> dict[str, Any]:
    """Keyword arguments of lesson_html for a preset name or a setup (config) file."""
    if preset is not None:
        from ..presets import PRESETS, get_preset

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


def write_lesson(output: Path, *, preset: str | None = None, setup: str | None = None, settings: Settings | None = None) -> int:
    """Write the lesson file of a preset or a setup file to ``output``; its size in bytes."""
    html = lesson_html(settings=settings, **_lesson_source(preset, setup)).encode("utf-8")
    output.write_bytes(html)
    return len(html)


def add_export_command(commands: "argparse._SubParsersAction") -> None:
    export = commands.add_parser(
        "export",
        help="write a lesson as one offline HTML file",
        description="Write one self-contained HTML file (the page, its code and the trace) that opens from file:// with no server and no network.",
    )
    export.add_argument("output", help="the HTML file to write, e.g. lesson.html")
    source = export.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", help="a lesson preset (cs231n, d2l, ...)")
    source.add_argument("--setup", metavar="CONFIG.json", help="a trace config file ('-' for standard input); optional keys title and teaches")


def export_command(args: argparse.Namespace) -> int:
    try:
        size = write_lesson(Path(args.output), preset=args.preset, setup=args.setup, settings=Settings.from_env())
    except ApiError as exc:
        field = ".".join(str(p) for p in exc.loc if p != "body")
        print(f"convscope: {field + ': ' if field else ''}{exc.msg}", file=sys.stderr)
        return 2
    except (OSError, ValueError, BundleError) as exc:
        print(f"convscope: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.output} ({size / 1024:.0f} KB): open it in a browser, no server needed")
    return 0
