"""What a step changed, on the stage (Debian's Chromium): each written cell says what the
step added to it (data-delta, "+6", "−2"), and a write that adds exactly zero is marked
dead ("+0", dimmed) so that dead ReLU windows and zero gradients read as dead. The
numbers come from the server's trace document, not from the page."""

from __future__ import annotations

import pytest
from test_browser_helpers import choose_preset, require_chromium, server_document, wait_until

pytestmark = pytest.mark.browser

require_chromium()


def _delta_text(v: float) -> str:
    s = str(int(abs(v))) if float(v).is_integer() else f"{abs(v):.3g}"
    return ("−" if v < 0 else "+") + s


def _marks(page) -> dict[str, tuple[str, bool]]:
    return {
        f"{t}[{i}]": (d, dead)
        for t, i, d, dead in page.evaluate(
            "Array.from(document.querySelectorAll('.cell.wr'), (c) => [c.dataset.tensor, c.dataset.idx, c.dataset.delta, c.classList.contains('dead')])"
        )
    }


def _expected(doc: dict, step: int) -> dict[str, tuple[str, bool]]:
    import numpy as np

    out = {}
    for w in doc["events"][step]["writes"]:
        shape = doc["tensors"][w["tensor"]]["shape"]
        ranges = [range(a, z, s) for a, z, s in zip(w["start"], w["stop"], w["step"])]
        cells = np.ravel_multi_index(np.ix_(*ranges), shape).ravel() if all(ranges) else []
        for flat, d in zip(cells, w["delta"]):
            out[f"{w['tensor']}[{flat}]"] = (_delta_text(d), d == 0)
    return out


def test_a_dead_relu_step_marks_its_writes_as_zero_changes_and_a_live_one_its_changes(open_page, base_url):
    page = open_page(viewport=(1920, 1080)).page
    choose_preset(page, "nhwc_relu")
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    backward = [k for k, e in enumerate(doc["events"]) if e["phase"] == "backward"]
    dead = [k for k in backward if all(d == 0 for w in doc["events"][k]["writes"] for d in w["delta"])]
    live = [k for k in backward if any(d != 0 for w in doc["events"][k]["writes"] for d in w["delta"])]
    assert dead and live, "the ReLU lesson has dead and live backward windows"
    for step in (dead[0], live[0], dead[-1], live[-1]):
        page.evaluate(f"window.convscope.seek({step})")
        got = _marks(page)
        want = _expected(doc, step)
        assert got == want, (step, {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v})
    # the marks leave with the step: the next step's cells carry only its own
    page.evaluate(f"window.convscope.seek({dead[0]})")
    stale = page.evaluate("document.querySelectorAll('.cell[data-delta]:not(.wr), .cell.dead:not(.wr)').length")
    assert stale == 0


def test_playing_too_fast_to_read_leaves_the_change_marks_out_and_a_pause_draws_its_steps(open_page, base_url):
    """At top speed the written cells carry no data-delta (a mark a frame cannot show
    legibly, 17 steps a frame, and the costliest part of one); paused, the step on show
    has its own marks again, as the trace document says."""
    from test_browser_helpers import lesson_path

    config = {
        "x": {"fill": "randint", "shape": [1, 2, 16, 16], "low": -2, "high": 2, "seed": 3},
        "w": {"fill": "randint", "shape": [2, 2, 3, 3], "low": -1, "high": 1, "seed": 4},
        "padding": 1,
    }
    page = open_page(lesson_path(config), viewport=(1366, 768)).page
    doc = server_document(base_url, config)
    # (a play of a few hundred steps at top speed could end before a loaded machine's
    # first frame came: the play's length is measured in time, not frames)
    assert doc["total_events"] > 1000, "long enough to play over many frames"
    page.evaluate("window.convscope.seek(0)")
    page.evaluate("window.convscope.setSpeedIndex(99)")
    page.evaluate("window.convscope.play()")
    seen = page.evaluate(
        """() => new Promise((done) => { const out = []; const tick = () => {
             if (!window.convscope.playing) return done(out);
             out.push([document.querySelectorAll('.cell.wr').length, document.querySelectorAll('.cell[data-delta]').length]);
             if (out.length < 400) requestAnimationFrame(tick); else done(out); };
             requestAnimationFrame(tick); })"""
    )
    page.evaluate("window.convscope.pause()")
    assert any(wr for wr, _ in seen), "steps were drawn while playing"
    assert all(marked == 0 for _, marked in seen), seen[:20]
    wait_until(page, "!window.convscope.playing")
    step = page.evaluate("window.convscope.step")
    page.wait_for_function("document.querySelectorAll('.cell[data-delta]').length > 0")
    assert _marks(page) == _expected(doc, step)


def test_one_step_flashes_its_written_cells_and_a_jump_does_not(open_page, base_url):
    """The written cells flash (a short animation) when one step is taken, by a key or
    a slow play; after a jump (the scrubber, Home, End, a typed step) the step on show
    is marked but not flashed: there is no step just taken to show. (Each step and its
    count in one call: the flash lasts 0.38 s, a loaded machine may take longer. A step
    is one step from the step the stage last drew, not the one the page state asks for:
    the test starts once the stage has drawn step 10, which on a loaded machine can come
    a frame after the trace is complete. A jump is counted again two animation frames
    later: a flash started late, in the next frame, would show then.)"""
    page = open_page("/#s=10&l=cs231n", viewport=(1366, 768)).page
    count = """async (step) => {
      const flashing = () => Array.from(document.querySelectorAll('.cell.wr')).filter((c) => c.getAnimations().length > 0).length;
      const shown = window.convscope.seek(step);
      const written = document.querySelectorAll('.cell.wr').length;
      const now = flashing();
      for (let i = 0; i < 2; i++) await new Promise((done) => requestAnimationFrame(() => done()));
      return [shown, written, now, flashing()]; }"""
    wait_until(page, "window.convscope.complete && window.convscope.step === 10 && window.convscope.shownStep === 10")
    for step in (11, 10):  # (a step back is one step too)
        shown, written, flashing, _ = page.evaluate(count, step)
        assert shown == step and written > 0 and flashing == written, (step, shown, written, flashing)
    for jump in (30, 0, 37):  # cs231n's 38 steps: the pad and crop copies one step each
        shown, written, flashing, later = page.evaluate(count, jump)
        assert shown == jump and written > 0 and flashing == 0 and later == 0, (jump, shown, written, flashing, later)


@pytest.mark.parametrize("lesson", ["cs231n", "stride2"])
def test_the_inspector_on_a_dx_cell_lists_its_contributions_and_their_sum(open_page, base_url, lesson):
    """Click a dx cell at the last step: the inspector lists as many contributions as the
    library finds (convcore.trace.contributions, through the crop) and their sum, the
    cell's value; a step in it jumps there."""
    import numpy as np

    from convcore.trace import contributions

    page = open_page(viewport=(1366, 768)).page
    choose_preset(page, lesson)
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    last = doc["total_events"] - 1
    page.evaluate(f"window.convscope.seek({last})")
    shape = doc["tensors"]["dx"]["shape"]
    index = tuple(min(s - 1, k) for s, k in zip(shape, (0, 0, 2, 3)))
    flat = int(np.ravel_multi_index(index, shape))
    want = contributions(doc, "dx", index)
    assert want, "the cell has contributions"
    page.click(f'.cell[data-tensor="dx"][data-idx="{flat}"]')
    wait_until(page, "document.getElementById('inspector').open")
    total = doc["tensors"]["dx"]["data"][flat]
    said = page.inner_text("#insp-sum")
    value = str(int(total)) if float(total).is_integer() else f"{total:.6g}"
    assert said == f"{len(want)} contribution{'' if len(want) == 1 else 's'}, summing to {value.replace('-', '−')}", (
        said
    )
    assert page.locator("#insp-steps li").count() == len(want)
    page.locator("#insp-steps .insp-step").first.click()
    wait_until(page, f"window.convscope.step === {want[0]['event']}")
    page.keyboard.press("Escape")
    wait_until(page, "!document.getElementById('inspector').open")


def test_the_loop_letters_are_named_in_words_from_the_header(open_page, base_url):
    """The step panel's loop letters (n=0 f=1 i=1 j=1) are named once in words, as the
    header's loop_names say: in the legend where there is room, and as the letters' tooltip."""
    page = open_page(viewport=(1920, 1080)).page
    choose_preset(page, "cs231n")
    doc = server_document(base_url, page.evaluate("window.convscope.config"))
    words = [f"{k} = {w}" for k, w in doc["loop_names"].items()]
    assert page.inner_text("#legend-loops") == " · ".join(words)
    assert page.get_attribute("#eq-loop", "title") == ", ".join(words)
    assert "i = output row" in words and "j = output column" in words
