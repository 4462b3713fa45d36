"""A printable handout from the command line: ``convscope export handout.pdf --preset cs231n``.

One landscape page per phase that has steps (its first step), or per step of a
``--phase`` or a ``--steps`` range: the phase's name and rule (the header's formulas of
the tensors it writes), the step's text whole, and the stage as the page draws it. The
pages are the page's own (js/panels/handout.js, reached through js/io/debug.js's
``window.convscope.handout``): the lesson file is opened from ``file://`` in the headless
Chromium the animation export uses (``browser.Headless``), with a stage laid out at the
printable width, and printed with ``Page.printToPDF`` under the page's print style
(style.css, ``@media print``): the page's Export → Handout prints the same pages, but
with its stage as the window lays it out, not at the printable width.

The steps are checked before any browser starts, with an error that names the option
and the numbers (``animation.frame_range``'s, and the page count against MAX_PAGES).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from .animation import _READY, _SETTLED, AnimationError, _evaluate, _phase_list, frame_range
from .browser import BrowserError, Headless
from .lesson import lesson_file

__all__ = ["MAX_PAGES", "PAPERS", "HandoutRequest", "handout_steps", "record_handout"]

MAX_PAGES = 200
# paper (width, height) in inches, portrait as Chromium takes them; landscape is asked for
PAPERS = {"a4": (8.27, 11.69), "letter": (8.5, 11.0)}
MARGIN_IN = 10 / 25.4  # (10 mm, as style.css's @page says)
# The stage's room in CSS px (96 a inch): the printable width of Letter landscape, the
# narrower of the two (259 mm), and the height left below the phase, rule and step text.
STAGE_ROOM = (980, 500)


@dataclass(frozen=True)
class HandoutRequest:
    """What to print: one page per step of ``steps`` (0-based), on ``paper`` ("a4", "letter")."""

    steps: tuple[int, ...]
    paper: str = "a4"

    @property
    def pages(self) -> int:
        return len(self.steps)


def handout_steps(
    header: dict[str, Any], *, phase: str | None, steps: tuple[int, int] | None, max_pages: int = MAX_PAGES
) -> tuple[int, ...]:
    """The handout's steps (0-based) from the trace header's phases: by default the first
    step of each phase that has steps; else every step of ``--phase`` or of ``--steps``
    (from 1, inclusive), at most ``max_pages`` of them."""
    if phase is None and steps is None:
        return tuple(p["start"] for p in header["phases"] if p["stop"] > p["start"])
    first, last = frame_range(header, phase=phase, steps=steps, max_frames=1 << 62)
    pages = last - first + 1
    if pages > max_pages:
        what = f"--phase {phase}" if phase is not None else f"--steps {steps[0]}-{steps[1]}"  # type: ignore[index]
        raise AnimationError(
            f"{what} is {pages} pages, more than a handout's {max_pages}: choose a shorter --steps range"
            f" ({_phase_list(header['phases'])})"
        )
    return tuple(range(first, last + 1))


# A stage that does not fit whole in that room (its columns would scroll: the picture
# would cut them) is laid out in a larger one, scaled down on paper: whole, in smaller
# digits (16 px at 1.5 times the room print at about 8 pt).
ROOM_GROWTH = (1.0, 1.25, 1.5)
# A step is drawn whole: the stage layout fits (js/model/stage-layout.js).
_FITS = "((c) => { c.seek(%d); const l = c.layout(); return !l || l.fits; })(window.convscope)"
# The window grows by the page's own parts around the stage (bars, the setup drawer), so
# that the stage itself gets the printable room.
_AROUND = """(() => { const r = document.getElementById('stage').getBoundingClientRect();
  return [Math.max(0, Math.ceil(innerWidth - r.width)), Math.max(0, Math.ceil(innerHeight - r.height))]; })()"""


def record_handout(
    lesson: dict[str, Any], request: HandoutRequest, *, executable: str, timeout: float
) -> tuple[bytes, tuple[int, int], list[str]]:
    """The handout's PDF, printed by the page of ``lesson`` (a lesson_document) in a
    headless browser, the narrowest and widest room its pages' stage was drawn in (CSS
    px), and the phases whose stage did not fit whole even in the largest room (their
    pictures leave out what the stage's columns scrolled away); BrowserError when it
    fails or takes longer than ``timeout`` s."""
    html = lesson_file(lesson)
    room_w, room_h = STAGE_ROOM
    with Headless(executable, timeout=timeout) as browser:
        page = browser.folder / "lesson.html"
        page.write_text(html, encoding="utf-8")
        target = browser.send("Target.createTarget", {"url": "about:blank"})
        session = browser.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
        # black on white, whatever the machine's colour scheme
        browser.send(
            "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]}, session
        )
        metrics = {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        browser.send("Emulation.setDeviceMetricsOverride", metrics, session)
        browser.send("Page.navigate", {"url": page.as_uri() + "?debug"}, session)
        _evaluate(browser, session, _READY % int(timeout * 1000))
        shown = {"grow": None}

        def lay_out(grow: float) -> None:
            if shown["grow"] == grow:
                return
            for _ in range(2):  # (a new width can fold the page's bars differently: measure again)
                around_w, around_h = _evaluate(browser, session, _AROUND)
                size = {"width": round(room_w * grow) + int(around_w), "height": round(room_h * grow) + int(around_h)}
                browser.send("Emulation.setDeviceMetricsOverride", {**metrics, **size}, session)
                _evaluate(browser, session, _SETTLED)
            shown["grow"] = grow

        # each page in the smallest room its phase fits whole in (the layout is the phase's)
        phases = lesson["lines"][0]["phases"]
        chosen: dict[int, float] = {}
        cut: list[str] = []
        pages = 0
        for step in request.steps:
            phase = next((k for k, p in enumerate(phases) if p["start"] <= step < p["stop"]), -1)
            if phase not in chosen:
                for grow in ROOM_GROWTH:
                    lay_out(grow)
                    if _evaluate(browser, session, _FITS % step):
                        break
                else:
                    cut.append(phases[phase]["name"] if phase >= 0 else f"step {step + 1}")
                chosen[phase] = grow
            lay_out(chosen[phase])
            asked = {"steps": [step], "append": pages > 0}
            pages = _evaluate(browser, session, f"window.convscope.handout({json.dumps(asked)})")
        if pages != request.pages:
            raise BrowserError(f"the page made {pages} handout pages, not {request.pages}")
        rooms = {round(room_w * g) for g in chosen.values()}
        width, height = PAPERS[request.paper]
        printed = browser.send(
            "Page.printToPDF",
            {
                "landscape": True,
                "printBackground": True,
                "paperWidth": width,
                "paperHeight": height,
                **{f"margin{side}": MARGIN_IN for side in ("Top", "Bottom", "Left", "Right")},
                "preferCSSPageSize": False,
            },
            session,
        )
    data = base64.b64decode(printed.get("data", ""))
    if not data.startswith(b"%PDF"):
        raise BrowserError("the browser printed no PDF")
    return data, (min(rooms, default=room_w), max(rooms, default=room_w)), cut
