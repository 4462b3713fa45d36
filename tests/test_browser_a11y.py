"""The page's accessibility (Debian's Chromium): axe-core finds no violation at a backward
step of the CS231n lesson, in normal mode, in projector mode and with the setup panel
open; and a screen reader hears each cell's tensor, index, value and part in the step,
read from the browser's accessibility tree, following the step.

axe-core comes bundled in the axe-playwright-python package (its axe.min.js is injected
into the page; nothing is fetched at run time).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_browser_helpers import replay, require_chromium, server_document, wait_until

from convcore.trace.drawing import MARK_KINDS

pytestmark = pytest.mark.browser

require_chromium()

# Rules switched off for the whole page: none. (A rule whose violation is inherent to
# the page, and whose fix would harm it, goes here with the reason.)
DISABLED_RULES: dict[str, str] = {}


def _two_frames(page) -> None:
    """Let two animation frames pass: what a change of state draws is on the page."""
    page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def _backward_step(doc: dict) -> int:
    """A step in the middle of the backward phase: one that reads xp and writes dw."""
    steps = [k for k, ev in enumerate(doc["events"]) if ev["phase"] == "backward"]
    return steps[len(steps) // 2]


def _open_cs231n(open_page, base_url, viewport=(1600, 1000), **context_args):
    """The CS231n lesson at a backward step; returns (page, doc, step)."""
    page = open_page("/#l=cs231n", viewport=viewport, **context_args).page
    wait_until(page, "window.convscope.preset === 'cs231n' && window.convscope.complete")
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    step = _backward_step(doc)
    page.evaluate(f"window.convscope.seek({step})")
    wait_until(page, f"window.convscope.step === {step} && document.querySelectorAll('.cell.wr').length > 0")
    _two_frames(page)
    return page, doc, step


def _set_setup(page, open_: bool) -> None:
    if page.get_attribute("#toggle-setup", "aria-expanded") != str(open_).lower():
        page.click("#toggle-setup")
    want = "!" if open_ else ""
    wait_until(page, f"{want}document.body.classList.contains('setup-closed')")
    _two_frames(page)


def _axe_violations(page) -> str:
    """axe-core's violations on the page as it stands, as a readable report ("" if none)."""
    from axe_playwright_python.sync_playwright import Axe

    options = {"resultTypes": ["violations"], "rules": {rule: {"enabled": False} for rule in DISABLED_RULES}}
    results = Axe().run(page, options=options)
    return results.generate_report() if results.violations_count else ""


@pytest.mark.parametrize(
    "mode", ["normal", "projector", "setup open", "normal dark", "laptop 1366x768", "xga 1024x768"]
)
def test_axe_finds_no_violation_at_a_backward_step(open_page, base_url, mode):
    """Every rule of axe-core (WCAG 2.x A and AA, and its best practices): names of
    controls, contrast, landmarks, unique ids, the ARIA of the cells' lists; also at the
    short screens, whose top bar is one line (style.css, up to 800 px tall)."""
    scheme = {"color_scheme": "dark"} if "dark" in mode else {}
    size = tuple(int(n) for n in mode.split()[-1].split("x")) if mode[-1].isdigit() else (1600, 1000)
    page, _doc, _step = _open_cs231n(open_page, base_url, viewport=size, **scheme)
    if mode == "projector":
        page.click("#projector")
        wait_until(page, "document.body.classList.contains('projector')")
        assert page.get_attribute("#projector", "aria-pressed") == "true"
        _two_frames(page)
    else:
        _set_setup(page, mode == "setup open")
        if mode == "setup open":
            # the setup's tensor editors are drawn: their cells are audited too
            wait_until(page, "document.querySelectorAll('#tensor-editors input').length > 0")
    assert page.locator(".cell.wr").count() > 0 and page.locator(".cell.rd").count() > 0
    report = _axe_violations(page)
    assert not report, report


# -- the cells' accessible names, against the server's trace document ----------------


def _number(v: float) -> str:
    """A whole number as a cell shows it (number-format.js formatValue: "−" for minus)."""
    assert float(v).is_integer(), v  # (the CS231n lesson's numbers are whole)
    return f"−{int(-v)}" if v < 0 else str(int(v))


def _in_box(box: dict, idx: tuple[int, ...]) -> int | None:
    """The position of cell ``idx`` in ``box``'s row-major order, or None outside it."""
    counts, pos = [], []
    for i, a, b, s in zip(idx, box["start"], box["stop"], box["step"]):
        if not (a <= i < b and (i - a) % s == 0):
            return None
        counts.append(len(range(a, b, s)))
        pos.append((i - a) // s)
    return int(np.ravel_multi_index(pos, counts))


# the words of the header's marks: the server's (GET /api/meta's mark_kinds)
MARK_WORDS = MARK_KINDS


def expected_name(doc: dict, step: int, tensor: str, flat: int) -> str:
    """What a screen reader should hear for cell ``flat`` of ``tensor`` at ``step``, from
    the trace document alone (docs/page.md)."""
    t = doc["tensors"][tensor]
    idx = tuple(int(i) for i in np.unravel_index(flat, t["shape"]))
    name = f"{tensor}[{','.join(map(str, idx))}]"
    mark = "."
    if t.get("marks"):
        row, col = (idx[t["axes"].index(a)] for a in t["grid"])
        mark = t["marks"][row][col]
    values, counts = replay(doc, step)
    if tensor not in values:
        shown = _number(t["data"][flat])
    elif counts[tensor].ravel()[flat] == 0 and mark not in "pz":
        shown = "not written yet"
    else:
        shown = _number(values[tensor].ravel()[flat])
    words = [f"{name} = {shown}"]
    if mark in MARK_WORDS:
        words.append(MARK_WORDS[mark])
    ev = doc["events"][step]
    writes = [(w, k) for w in ev["writes"] if w["tensor"] == tensor and (k := _in_box(w, idx)) is not None]
    if writes:
        w, k = writes[0]
        d = w["delta"][k]
        words += ["written by this step", _number(d) if d < 0 else f"+{_number(d)}"]
    elif any(r["tensor"] == tensor and _in_box(r, idx) is not None for r in ev["reads"]):
        words.append("read by this step")
    return ", ".join(words)


def _flat(doc: dict, tensor: str, idx) -> int:
    return int(np.ravel_multi_index(idx, doc["tensors"][tensor]["shape"]))


def _assert_heard(page, doc: dict, step: int, tensor: str, flat: int) -> str:
    """The cell's name in the accessibility tree is the expected one (found by role and
    name, it is that cell); returns it."""
    want = expected_name(doc, step, tensor, flat)
    cell = page.get_by_role("listitem", name=want, exact=True)
    assert cell.count() == 1, (
        want,
        page.locator(f'.cell[data-tensor="{tensor}"][data-idx="{flat}"]').get_attribute("aria-label"),
    )
    assert (cell.get_attribute("data-tensor"), cell.get_attribute("data-idx")) == (tensor, str(flat))
    return want


# the cells the step marks (rd or wr), as [tensor, flat]
MARKED_JS = """() => Array.from(document.querySelectorAll('#stage .cell.rd, #stage .cell.wr'),
                 (c) => [c.dataset.tensor, Number(c.dataset.idx)])"""
# from now on, every cell whose aria-label is set goes into window.__renamed
WATCH_NAMES_JS = """() => {
  window.__renamed = [];
  new MutationObserver((records) => {
    for (const r of records) window.__renamed.push([r.target.dataset.tensor, Number(r.target.dataset.idx)]);
  }).observe(document.getElementById('stage'), {subtree: true, attributes: true, attributeFilter: ['aria-label']});
}"""


def test_a_cells_accessible_name_follows_a_backward_step(open_page, base_url):
    """At a backward step a written dw cell says "dw[f,c,kh,kw] = v, written by this step,
    +d" and a read xp cell "xp[...] = v, read by this step" (its padding said too); after
    a step on, the same cells say their new value and part."""
    page, doc, step = _open_cs231n(open_page, base_url)
    ev = doc["events"][step]
    dw = next(w for w in ev["writes"] if w["tensor"] == "dw")
    # a dw cell the step changes (its delta not zero), and one of xp's read window inside
    # the padding and one outside it
    k = next(k for k, d in enumerate(dw["delta"]) if d)
    counts = [len(range(a, b, s)) for a, b, s in zip(dw["start"], dw["stop"], dw["step"])]
    pos = np.unravel_index(k, counts)
    written = _flat(doc, "dw", [a + p * s for a, p, s in zip(dw["start"], pos, dw["step"])])
    xp_box = next(r for r in ev["reads"] if r["tensor"] == "xp")
    marks = doc["tensors"]["xp"]["marks"]
    window = list(
        itertools.product(*(range(a, b, st) for a, b, st in zip(xp_box["start"], xp_box["stop"], xp_box["step"])))
    )
    inside = next(i for i in window if marks[i[2]][i[3]] == ".")
    pad = next((i for i in window if marks[i[2]][i[3]] == "p"), None)
    read = [_flat(doc, "xp", i) for i in (inside, pad) if i is not None]

    said = _assert_heard(page, doc, step, "dw", written)
    assert said.startswith("dw[") and ", written by this step, " in said, said
    for flat in read:
        heard = _assert_heard(page, doc, step, "xp", flat)
        assert heard.endswith(", read by this step"), heard
    # every marked cell says its part, and only those
    parts = page.evaluate(
        """() => Array.from(document.querySelectorAll('#stage .cell'), (c) =>
             [c.classList.contains('wr'), c.classList.contains('rd'), c.getAttribute('aria-label')])"""
    )
    for wr, rd, label in parts:
        assert (", written by this step" in label) == wr and (", read by this step" in label) == (rd and not wr), label
    # the aria snapshot of dw's first slice (filter 0, channel 0) lists its cells by name
    snapshot = page.locator('figure.tensor[data-tensor="dw"] [role="list"]').first.aria_snapshot()
    assert snapshot.startswith('- list "dw · f=0,c=0":'), snapshot
    for flat in range(9):
        assert f'- listitem "{expected_name(doc, step, "dw", flat)}"' in snapshot, snapshot

    # a step on (the page's own key): the names follow, and only the names of cells the
    # step changes are set (those it marks or unmarks: a frame walks no other cell)
    marked = set(map(tuple, page.evaluate(MARKED_JS)))
    page.evaluate(WATCH_NAMES_JS)
    page.locator("#stage").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowRight")
    wait_until(page, f"window.convscope.step === {step + 1}")
    _two_frames(page)
    renamed = set(map(tuple, page.evaluate("window.__renamed.splice(0)")))
    marked |= set(map(tuple, page.evaluate(MARKED_JS)))
    assert renamed and renamed <= marked, sorted(renamed - marked)[:10]
    after = _assert_heard(page, doc, step + 1, "dw", written)
    for flat in read:
        _assert_heard(page, doc, step + 1, "xp", flat)
    assert after != said
    # and back: the names of the step before
    page.keyboard.press("ArrowLeft")
    wait_until(page, f"window.convscope.step === {step}")
    _two_frames(page)
    _assert_heard(page, doc, step, "dw", written)
    for flat in read:
        _assert_heard(page, doc, step, "xp", flat)
