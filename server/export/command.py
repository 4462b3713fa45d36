"""``convscope export``: a lesson file, an animation or a handout, by the output's name.

    convscope export LESSON.html (--preset NAME | --setup CONFIG.json) [--view V] [--step N]
    convscope export ANIM.gif|ANIM.webm (--preset NAME | --setup CONFIG.json) [--view V]
        [--phase NAME | --steps FROM-TO] [--size 1920x1080] [--fps 4] [--projector]
        [--timeout SECONDS]
    convscope export HANDOUT.pdf (--preset NAME | --setup CONFIG.json) [--view V]
        [--phase NAME | --steps FROM-TO] [--paper a4|letter] [--timeout SECONDS]

Bad input gets one line naming the option and the numbers and exit status 2, before
any browser starts; so does a machine with no browser to draw an animation or a handout. Ctrl-C (or
SIGTERM) ends the browser and writes nothing: exit status 130.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..http.errors import ApiError
from ..settings import Settings
from .browser import BrowserError, BrowserMissing, find_browser
from .bundle import BundleError
from .lesson import lesson_document, lesson_file, lesson_source

__all__ = ["add_export_command", "export_command"]

ANIMATION_OPTIONS = ("phase", "steps", "size", "fps", "projector", "timeout")
# (a handout is printed black on white: projector mode's white on black is not for paper)
ANIMATION_ONLY = {"--size", "--fps", "--projector"}


def add_export_command(commands: argparse._SubParsersAction) -> None:
    export = commands.add_parser(
        "export",
        help="write a lesson as one offline HTML file, an animation (GIF, WebM) for slides, or a handout (PDF)",
        description=(
            "Write LESSON.html: one self-contained file (the page, its code and the trace) that opens from file:// "
            "with no server and no network. Or write ANIM.gif / ANIM.webm: a phase or a step range as the page draws "
            "it, each frame the stage with the step's equation (drawn by the page in a headless Chromium or Chrome: "
            "/usr/bin/chromium, $CONVSCOPE_CHROMIUM, or one on the PATH). Or write HANDOUT.pdf: one landscape page per "
            "phase (its first step) or per step of --phase or --steps, each the phase's rule, the step's text and the "
            "stage, printed by the page in that browser."
        ),
    )
    export.add_argument("output", help="the file to write: lesson.html, anim.gif, anim.webm or handout.pdf")
    source = export.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", help="a lesson preset (cs231n, d2l, ...)")
    source.add_argument(
        "--setup",
        metavar="CONFIG.json",
        help="a trace config file ('-' for standard input); optional keys title and teaches",
    )
    export.add_argument(
        "--view", help="the algorithm the steps follow (direct, im2col, transposed), instead of the setup's"
    )
    export.add_argument(
        "--step",
        type=int,
        default=None,
        metavar="N",
        help="lesson file: the step it opens at, numbered from 1 as on the page (default 1)",
    )
    steps = export.add_mutually_exclusive_group()
    steps.add_argument(
        "--phase",
        help="animation, handout: one phase of the trace by name (forward, backward, ...), every step of it; "
        "default the whole trace (animation), each phase's first step (handout)",
    )
    steps.add_argument(
        "--steps",
        metavar="FROM-TO",
        help="animation, handout: steps FROM to TO, numbered from 1 as on the page, e.g. 34-51",
    )
    export.add_argument(
        "--size",
        default=None,
        metavar="WxH",
        help="animation: frame size in pixels (default 1920x1080; 1280x720 for smaller files)",
    )
    export.add_argument("--fps", type=float, default=None, help="animation: steps per second (default 4)")
    export.add_argument(
        "--projector", action="store_true", default=None, help="animation: draw the page in projector mode"
    )
    export.add_argument(
        "--code",
        action="store_true",
        default=None,
        help=(
            "lesson file: it opens with the code panel open; animation: the line of code each step runs under its"
            " equation (where the setting has a listing)"
        ),
    )
    export.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="animation, handout: give up after this long (default 60 s plus 3 s a frame or page)",
    )
    export.add_argument(
        "--paper", choices=("a4", "letter"), default=None, help="handout: the paper, landscape (default a4)"
    )


def _fail(message: str) -> int:
    print(f"convscope: {message}", file=sys.stderr)
    return 2


def _api_error(exc: ApiError) -> str:
    field = ".".join(str(p) for p in exc.loc if p != "body")
    return f"{field + ': ' if field else ''}{exc.msg}"


@contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """SIGTERM (and SIGHUP) end the export as Ctrl-C does, so the browser is ended too."""

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _write(output: Path, data: bytes) -> None:
    """Write the whole file or nothing (a file half written is worse than none)."""
    part = output.with_name(f".{output.name}.part")
    try:
        part.write_bytes(data)
        os.replace(part, output)
    finally:
        part.unlink(missing_ok=True)


def export_command(args: argparse.Namespace) -> int:
    output = Path(args.output)
    kind = output.suffix.lower().lstrip(".")
    if kind not in ("html", "htm", "gif", "webm", "pdf"):
        return _fail(
            f"{args.output}: the output must end in .html (a lesson file), .gif or .webm (an animation) "
            "or .pdf (a handout)"
        )
    if kind in ("html", "htm"):
        given = [f"--{name}" for name in (*ANIMATION_OPTIONS, "paper") if getattr(args, name) is not None]
        if given:
            only = (
                "animations (.gif, .webm)"
                if set(given) <= ANIMATION_ONLY
                else "animations (.gif, .webm) or handouts (.pdf)"
            )
            only = "handouts (.pdf)" if given == ["--paper"] else only
            return _fail(f"{', '.join(given)}: only for {only}, not a lesson file")
    elif kind == "pdf":
        given = [
            f"--{name}"
            for name in ANIMATION_OPTIONS
            if f"--{name}" in ANIMATION_ONLY and getattr(args, name) is not None
        ]
        if given:
            return _fail(
                f"{', '.join(given)}: only for animations (.gif, .webm), not a handout (printed black on white)"
            )
        if args.code is not None:
            return _fail("--code: only for a lesson file (.html) or an animation (.gif, .webm), not a handout")
    elif args.paper is not None:
        return _fail("--paper: only for handouts (.pdf), not an animation")
    if args.step is not None and kind not in ("html", "htm"):
        return _fail(
            "--step: only for a lesson file (.html); an animation or a handout takes --steps FROM-TO or --phase"
        )
    try:
        return _export(args, output, kind)
    except KeyboardInterrupt:
        print(f"convscope: stopped; {args.output} not written", file=sys.stderr)
        return 130


def _export(args: argparse.Namespace, output: Path, kind: str) -> int:
    try:
        settings = Settings.from_env()
        source = lesson_source(args.preset, args.setup)
        if args.view is not None:
            source["config"] = {**source["config"], "view": args.view}
        if kind in ("gif", "webm"):
            return _export_animation(args, output, kind, source, settings)
        if kind == "pdf":
            return _export_handout(args, output, source, settings)
        started = time.perf_counter()
        lesson = lesson_document(settings=settings, code=bool(args.code), **source)
        if args.step is not None:
            total = int(lesson["lines"][0]["total_events"])
            if not 1 <= args.step <= total:
                return _fail(f"--step {args.step}: this trace has steps 1 to {total}")
            lesson["step"] = args.step - 1
        html = lesson_file(lesson).encode("utf-8")
        _write(output, html)
    except ApiError as exc:
        return _fail(_api_error(exc))
    except (OSError, ValueError, BundleError) as exc:
        return _fail(str(exc))
    print(
        f"wrote {args.output} ({len(html) / 1024:.0f} KB, {time.perf_counter() - started:.1f} s): open it in a browser, no server needed"
    )
    return 0


def _browser_export_refusal(args: argparse.Namespace, output: Path) -> str | None:
    """What an animation or a handout refuses before any browser starts, beyond its own
    options: a --timeout out of bounds, an output in no folder (None: nothing)."""
    if args.timeout is not None and not (math.isfinite(args.timeout) and 1 <= args.timeout <= 86400):
        return f"--timeout {args.timeout:g} is out of bounds: from 1 to 86400 seconds"
    if not output.parent.is_dir():
        return f"{args.output}: no folder {output.parent}"
    return None


def _in_browser(
    args: argparse.Namespace, output: Path, record: Any, lesson: dict[str, Any], request: Any, units: int
) -> tuple[Any, int]:
    """Run ``record(lesson, request, executable=, timeout=)`` (bytes, or a tuple of bytes
    first) in the headless browser and write its bytes to ``output``: (what it returned,
    0), or (None, the exit status) with the reason said. The timeout is --timeout, else a
    minute and 3 s per frame or page (``units``)."""
    try:
        executable = find_browser()
    except BrowserMissing as exc:
        return None, _fail(str(exc))
    timeout = args.timeout if args.timeout is not None else 60.0 + 3.0 * units
    try:
        with _stop_on_sigterm():
            made = record(lesson, request, executable=executable, timeout=timeout)
            _write(output, made[0] if isinstance(made, tuple) else made)
    except (BrowserError, OSError, ValueError) as exc:  # (while the browser ran: not bad input)
        print(f"convscope: {args.output} not made: {exc}", file=sys.stderr)
        return None, 1
    return made, 0


def _export_animation(
    args: argparse.Namespace, output: Path, kind: str, source: dict[str, Any], settings: Settings
) -> int:
    from .animation import (
        AnimationRequest,
        frame_range,
        page_limits,
        parse_fps,
        parse_size,
        parse_steps,
        record_animation,
    )

    # every check first: nothing starts a browser for a request it cannot make
    limits = page_limits()
    width, height = parse_size(args.size if args.size is not None else "1920x1080")
    fps = parse_fps(args.fps if args.fps is not None else 4.0, limits)
    steps = parse_steps(args.steps) if args.steps is not None else None
    refused = _browser_export_refusal(args, output)
    if refused:
        return _fail(refused)
    lesson = lesson_document(settings=settings, **source)
    first, last = frame_range(lesson["lines"][0], phase=args.phase, steps=steps, max_frames=int(limits["MAX_FRAMES"]))
    request = AnimationRequest(
        first, last, width, height, fps, kind, projector=bool(args.projector), code=bool(args.code)
    )
    started = time.perf_counter()
    data, status = _in_browser(args, output, record_animation, lesson, request, request.frames)
    if data is None:
        return status
    seconds = time.perf_counter() - started
    print(
        f"wrote {args.output} ({len(data) / 1024:.0f} KB): steps {first + 1}-{last + 1}, {request.frames} frames "
        f"at {width}x{height}, {fps:g} per second ({request.frames / fps:.1f} s), made in {seconds:.1f} s"
    )
    return 0


def _export_handout(args: argparse.Namespace, output: Path, source: dict[str, Any], settings: Settings) -> int:
    from .animation import parse_steps
    from .handout import STAGE_ROOM, HandoutRequest, handout_steps, record_handout

    # every check first: nothing starts a browser for a request it cannot make
    steps = parse_steps(args.steps) if args.steps is not None else None
    refused = _browser_export_refusal(args, output)
    if refused:
        return _fail(refused)
    lesson = lesson_document(settings=settings, **source)
    request = HandoutRequest(handout_steps(lesson["lines"][0], phase=args.phase, steps=steps), args.paper or "a4")
    started = time.perf_counter()
    made, status = _in_browser(args, output, record_handout, lesson, request, request.pages)
    if made is None:
        return status
    data, rooms, cut = made
    if cut:
        print(
            f"convscope: the stage of {', '.join(cut)} does not fit a page whole even at "
            f"{100 * STAGE_ROOM[0] / max(rooms):.0f}%: its picture leaves out what its columns scroll away",
            file=sys.stderr,
        )
    shown = ", ".join(str(k + 1) for k in request.steps[:8]) + (", ..." if request.pages > 8 else "")
    sizes = "-".join(f"{100 * STAGE_ROOM[0] / w:.0f}" for w in sorted(set(rooms), reverse=True))
    print(
        f"wrote {args.output} ({len(data) / 1024:.0f} KB): {request.pages} page{'s' if request.pages > 1 else ''} "
        f"({request.paper.upper()} landscape), steps {shown}, the stage at {sizes}%"
        f"{' (a phase not whole at the paper width is drawn in more room, smaller)' if len(set(rooms)) > 1 else ''}, "
        f"made in {time.perf_counter() - started:.1f} s"
    )
    return 0
