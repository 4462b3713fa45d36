"""An animation for slides from the command line: ``convscope export anim.gif --preset cs231n``.

The frames are the page's own drawing: the lesson file (``lesson.lesson_file``) is opened
from ``file://`` in a headless Chromium (``browser.Headless``) whose window is the
frame's size (the page's style sheet as on a screen of that size; the recorder lays the
stage out for the frame less its equation band), and
the page's ``recordAnimation`` (js/encode/animation.js, the Animation dialog's recorder,
reached through js/io/debug.js's ``window.convscope.recordAnimation``) draws each step as the page draws it, with the step's phase and equation, and encodes
the GIF or the WebM; its bytes come back through the DevTools pipe in base64.

Everything the user typed is checked before any browser starts, with an error that
names the option and the numbers: the step range against the trace's phases and the
page's frame limit (``MAX_FRAMES`` in js/panels/animation-dialog.js, read from there), the
steps per second against the page's bounds, the size against ``MIN_SIZE``..``MAX_SIZE``.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..http.static_files import find_static_dir
from .browser import BrowserError, Headless
from .bundle import BundleError
from .lesson import lesson_file

__all__ = [
    "ANIMATION_FORMATS",
    "AnimationError",
    "AnimationRequest",
    "MAX_SIZE",
    "MIN_SIZE",
    "frame_range",
    "page_limits",
    "parse_size",
    "parse_steps",
    "record_animation",
]

ANIMATION_FORMATS = ("gif", "webm")
MIN_SIZE = (320, 180)
MAX_SIZE = (3840, 2160)  # (4K: the largest classroom screen the page is drawn for)
DIALOG_MODULE = "js/panels/animation-dialog.js"
_CONSTANT = r"export\s+const\s+{name}\s*=\s*(?P<value>[0-9.]+)\s*;"


class AnimationError(ValueError):
    """An option the animation cannot be made with; the message names it and the numbers."""


@dataclass(frozen=True)
class AnimationRequest:
    """What to record: steps ``first``..``last`` (0-based, inclusive) at width×height,
    ``fps`` steps per second, as ``format`` ("gif" or "webm"), in projector mode or not,
    with the line of code each step runs under its equation (``code``) or not."""

    first: int
    last: int
    width: int
    height: int
    fps: float
    format: str
    projector: bool = False
    code: bool = False

    @property
    def frames(self) -> int:
        return self.last - self.first + 1


def page_limits(static_dir: Path | None = None) -> dict[str, float]:
    """The page's animation limits, read from its own module (one source of truth):
    {"MAX_FRAMES", "MIN_FPS", "MAX_FPS"}."""
    folder = static_dir if static_dir is not None else find_static_dir()
    if folder is None:
        raise BundleError("the page's folder (static/) is missing from this installation")
    source = (folder / DIALOG_MODULE).read_text(encoding="utf-8")
    limits = {}
    for name in ("MAX_FRAMES", "MIN_FPS", "MAX_FPS"):
        found = re.search(_CONSTANT.format(name=name), source)
        if not found:
            raise BundleError(f"{DIALOG_MODULE} no longer exports {name} as a number: the animation limits are unknown")
        limits[name] = float(found["value"])
    return limits


def parse_size(text: str) -> tuple[int, int]:
    """``"1920x1080"`` -> (1920, 1080), within MIN_SIZE..MAX_SIZE, both even (VP8's
    colour planes are half size)."""
    found = re.fullmatch(r"\s*(\d{1,6})\s*[x×X]\s*(\d{1,6})\s*", text)
    if not found:
        raise AnimationError(f"--size must be WIDTHxHEIGHT in pixels, such as 1920x1080 or 1280x720, not {text!r}")
    width, height = int(found[1]), int(found[2])
    (min_w, min_h), (max_w, max_h) = MIN_SIZE, MAX_SIZE
    if not (min_w <= width <= max_w and min_h <= height <= max_h):
        raise AnimationError(
            f"--size {width}x{height} is out of bounds: width from {min_w} to {max_w}, height from {min_h} to {max_h} pixels"
        )
    if width % 2 or height % 2:
        raise AnimationError(f"--size {width}x{height}: width and height must be even numbers of pixels")
    return width, height


def parse_fps(value: float, limits: dict[str, float]) -> float:
    low, high = limits["MIN_FPS"], limits["MAX_FPS"]
    if not (low <= value <= high):  # (NaN too)
        raise AnimationError(f"--fps {value:g} is out of bounds: steps per second from {low:g} to {high:g}")
    return value


def parse_steps(text: str) -> tuple[int, int]:
    """``"34-51"`` -> (34, 51), step numbers as the page shows them (from 1); ``"7"`` -> (7, 7)."""
    found = re.fullmatch(r"\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?", text)
    if not found:
        raise AnimationError(
            f"--steps must be FROM-TO (step numbers from 1, as the page shows them), such as 34-51, not {text!r}"
        )
    first = int(found[1])
    return first, int(found[2]) if found[2] else first


def _phase_list(phases: list[dict[str, Any]]) -> str:
    return ", ".join(
        f"{p['name']} (step {p['stop']})"
        if p["stop"] - p["start"] == 1
        else f"{p['name']} (steps {p['start'] + 1}-{p['stop']})"
        for p in phases
    )


def frame_range(
    header: dict[str, Any], *, phase: str | None, steps: tuple[int, int] | None, max_frames: int
) -> tuple[int, int]:
    """The steps to record (0-based, inclusive) from the trace header's phases and
    total: a phase by name, a step range (from 1, inclusive), or the whole trace."""
    total = int(header["total_events"])
    phases = header["phases"]
    if phase is not None:
        found = next((p for p in phases if p["name"] == phase), None)
        if found is None:
            raise AnimationError(
                f"--phase {phase!r}: this trace has no such phase; its phases are {_phase_list(phases)}"
            )
        first, last, what = found["start"], found["stop"] - 1, f"--phase {phase}"
        if last < first:
            raise AnimationError(f"--phase {phase!r} has no steps in this trace")
    elif steps is not None:
        a, b = steps
        what = f"--steps {a}-{b}"
        if a < 1 or b > total:
            raise AnimationError(f"{what}: this trace has steps 1 to {total} ({_phase_list(phases)})")
        if b < a:
            raise AnimationError(f"{what} is empty: step {b} comes before step {a}")
        first, last = a - 1, b - 1
    else:
        first, last, what = 0, total - 1, f"the whole trace (steps 1-{total})"
    frames = last - first + 1
    if frames > max_frames:
        raise AnimationError(
            f"{what} is {frames} frames, more than the page's {max_frames}: choose a --phase or a shorter --steps range"
            f" ({_phase_list(phases)})"
        )
    return first, last


# The page has its trace: it is drawn and complete (or has said why not).
_READY = """new Promise((resolve, reject) => {
  const until = Date.now() + %d;
  const tick = () => {
    const c = window.convscope;
    if (c && c.complete && c.total > 0 && c.shownStep >= 0) return resolve(c.total);
    if (Date.now() > until) {
      const said = document.getElementById('eq-text');
      return reject(new Error('the lesson page did not show its trace: ' + (said ? said.textContent : 'no page')));
    }
    setTimeout(tick, 25);
  };
  tick();
})"""
# After a change of mode: the frame after next, when the resize observers have measured
# the stage's new room.
_SETTLED = "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def _evaluate(browser: Headless, session: str, expression: str) -> Any:
    reply = browser.send(
        "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session
    )
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        said = (details.get("exception") or {}).get("description") or details.get("text", "")
        raise BrowserError(f"the page failed: {said.splitlines()[0] if said else details}")
    return reply["result"].get("value")


def record_animation(lesson: dict[str, Any], request: AnimationRequest, *, executable: str, timeout: float) -> bytes:
    """The animation's bytes, recorded by the page of ``lesson`` (a lesson_document) in a
    headless browser; BrowserError when it fails or takes longer than ``timeout`` s."""
    html = lesson_file(lesson)
    with Headless(executable, timeout=timeout) as browser:
        page = browser.folder / "lesson.html"
        page.write_text(html, encoding="utf-8")
        target = browser.send("Target.createTarget", {"url": "about:blank"})
        session = browser.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
        metrics = {"width": request.width, "height": request.height, "deviceScaleFactor": 1, "mobile": False}
        browser.send("Emulation.setDeviceMetricsOverride", metrics, session)
        browser.send("Page.navigate", {"url": page.as_uri() + "?debug"}, session)
        _evaluate(browser, session, _READY % int(timeout * 1000))
        if request.projector:
            _evaluate(browser, session, "window.convscope.dispatch({type: 'projector', on: true}), true")
            _evaluate(browser, session, _SETTLED)
        asked = {
            "from": request.first,
            "to": request.last,
            "size": {"width": request.width, "height": request.height},
            "fps": request.fps,
            "format": request.format,
            "code": request.code,
        }
        encoded = _evaluate(browser, session, f"window.convscope.recordAnimation({json.dumps(asked)})")
    if not isinstance(encoded, str) or not encoded:
        raise BrowserError("the page returned no animation")
    return base64.b64decode(encoded)
