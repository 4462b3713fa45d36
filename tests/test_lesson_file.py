"""The offline lesson file (``convscope export``) in Debian's Chromium, opened from
file:// with no server running: it shows the trace, plays, steps with the keys, says
that editing needs the server, and not one request leaves the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_browser_helpers import (
    assert_equation_matches,
    assert_stage_matches,
    debug_url,
    live_server,
    require_chromium,
    step_of,
    wait_complete,
    wait_until,
)

from convcore.trace import build_trace
from convcore.trace.questions import step_questions
from convscope.cli import main
from convscope.export.lesson import QUESTION_BYTES, _questions_within
from convscope.http.encoding import encode_json
from convscope.traces.presets import PRESETS

pytestmark = pytest.mark.browser

require_chromium()

MAX_BYTES = 1_000_000


# Chromium for this module (no server: the pages open from files)


@pytest.fixture(scope="module")
def cs231n_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("lesson") / "cs231n.html"
    assert main(["export", str(path), "--preset", "cs231n"]) == 0
    return path


class OfflinePage:
    """A page opened from a file: every request it makes and every console message."""

    def __init__(self, browser, path, viewport=(1600, 1000)):
        self.url = path.as_uri() + "?debug"
        self.context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        self.requests: list[str] = []
        self.errors: list[str] = []
        # every request reaches this route: the file itself may load, nothing else
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(self.url)
        wait_complete(self.page)

    def _route(self, route):
        if route.request.url == self.url:
            route.continue_()
        else:
            self.requests.append(route.request.url)
            route.abort()

    def close(self):
        left = [u for u in self.requests if not u.startswith(("file:", "data:"))]
        assert left == [], f"requests left the page: {left}"
        assert self.errors == [], f"console errors: {self.errors}"
        self.context.close()


def test_the_cs231n_file_is_under_a_megabyte(cs231n_file, capsys):
    size = cs231n_file.stat().st_size
    print(f"cs231n lesson file: {size} bytes")
    assert size < MAX_BYTES
    html = cs231n_file.read_text(encoding="utf-8")
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    assert '<script type="module" src=' not in html and 'rel="stylesheet"' not in html


def test_the_file_plays_and_steps_with_the_keys_offline(browser, cs231n_file):
    doc = build_trace(PRESETS["cs231n"].config)
    view = OfflinePage(browser, cs231n_file)
    page = view.page
    try:
        assert page.evaluate("window.convscope.total") == doc["total_events"] == len(doc["events"])
        assert page.evaluate("window.convscope.preset") == "cs231n"
        assert "gradients verified" in page.inner_text("#badge")
        assert step_of(page) == 0
        assert_stage_matches(page, doc, 0)
        page.locator("#stage").focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        wait_until(page, "window.convscope.shownStep === 3")
        assert_equation_matches(page, doc, 3)
        assert_stage_matches(page, doc, 3)
        page.keyboard.press("PageUp")
        wait_until(page, "window.convscope.shownStep === 2")
        page.keyboard.press("End")
        last = doc["total_events"] - 1
        wait_until(page, f"window.convscope.shownStep === {last}")
        assert_stage_matches(page, doc, last)
        page.keyboard.press("Home")
        wait_until(page, "window.convscope.shownStep === 0")
        # Space plays to the end (at top speed)
        page.evaluate("window.convscope.setSpeedIndex(99)")
        page.locator("#stage").click(position={"x": 5, "y": 5})
        page.keyboard.press(" ")
        wait_until(page, f"window.convscope.playing || window.convscope.step === {last}", 3)
        wait_until(page, f"!window.convscope.playing && window.convscope.step === {last}", 10)
        # projector mode is a view of the same trace
        page.keyboard.press("p")
        wait_until(page, "document.body.classList.contains('projector')")
        page.keyboard.press("p")
    finally:
        view.close()


def test_editing_says_it_needs_the_server(browser, cs231n_file):
    view = OfflinePage(browser, cs231n_file)
    page = view.page
    try:
        before = page.evaluate("window.convscope.document().events.length")
        page.fill('input[name="stride_h"]', "1")
        page.locator('input[name="stride_h"]').blur()
        page.locator("#form-error").wait_for(state="visible", timeout=5000)
        assert "needs the ConvScope server" in page.inner_text("#form-error")
        assert (
            page.evaluate("window.convscope.document().events.length")
            == before
            == len(build_trace(PRESETS["cs231n"].config)["events"])
        )
    finally:
        view.close()


def test_a_setup_file_exports_with_its_title(browser, tmp_path):
    config = {
        "x": [[[[0, 1, 2], [3, 4, 5], [6, 7, 8]]]],
        "w": [[[[0, 1], [2, 3]]]],
        "dout": [[[[1, -2], [3, -1]]]],
        "title": "My </script> lesson",
        "teaches": "a & b",
    }
    (tmp_path / "setup.json").write_text(json.dumps(config))
    out = tmp_path / "mine.html"
    assert main(["export", str(out), "--setup", str(tmp_path / "setup.json")]) == 0
    view = OfflinePage(browser, out)
    try:
        page = view.page
        assert page.title() == "My </script> lesson · ConvScope lesson"
        trace_config = {k: v for k, v in config.items() if k not in ("title", "teaches")}
        doc = build_trace(trace_config)
        assert page.evaluate("window.convscope.total") == len(doc["events"])
        assert page.evaluate("window.convscope.preset") == "lesson"
        page.keyboard.press("End")
        wait_until(page, f"window.convscope.shownStep === {len(doc['events']) - 1}")
        assert_stage_matches(page, doc, len(doc["events"]) - 1)
    finally:
        view.close()


def test_export_refuses_bad_input_with_the_numbers(tmp_path, capsys):
    (tmp_path / "bad.json").write_text(json.dumps({"x": [[[[1, 2], [3, 4]]]], "w": [[[[1, 2, 3]]]]}))
    assert main(["export", str(tmp_path / "o.html"), "--setup", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert "convscope:" in err and "3" in err and "2" in err
    assert not (tmp_path / "o.html").exists()
    assert main(["export", str(tmp_path / "o.html"), "--preset", "nope"]) == 2
    assert "no preset named 'nope'" in capsys.readouterr().err


def _download_lesson(browser, path: str, folder: Path, step: int | None = None) -> Path:
    """The lesson file the page at ``path`` (on a live server) downloads through Export
    → Lesson file, saved in ``folder``; ``step``: once the page shows that step."""
    with live_server() as base:
        context = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
        try:
            page = context.new_page()
            page.goto(debug_url(base + path))
            wait_complete(page)
            if step is not None:
                wait_until(page, f"window.convscope.shownStep === {step}")
            with page.expect_download(timeout=60_000) as dl:
                page.click("#export-menu > summary")
                page.click("#download-lesson")
            saved = folder / dl.value.suggested_filename
            dl.value.save_as(saved)
        finally:
            context.close()
    return saved


def test_the_page_downloads_the_lesson_it_shows_as_a_file_that_plays_offline(browser, tmp_path):
    """ "Lesson file" on the served page: the file is the one `convscope export` writes for
    that lesson (same bytes), and it opens from file:// and plays with no request leaving;
    a lesson file itself offers no download (it has no server)."""

    saved = _download_lesson(browser, "/#s=5&l=stride2", tmp_path)  # (the file opens where the page was)
    assert saved.name == "convscope-stride2.html"
    cli = tmp_path / "cli.html"
    assert main(["export", str(cli), "--preset", "stride2"]) == 0

    def lesson_of(path: Path) -> dict:
        html = path.read_text(encoding="utf-8")
        start = html.index('<script type="application/json" id="convscope-lesson">') + len(
            '<script type="application/json" id="convscope-lesson">'
        )
        return json.loads(html[start : html.index("</script>", start)])

    got, want = lesson_of(saved), lesson_of(cli)
    assert (got["step"], want["step"]) == (5, 0)
    assert got["lines"] == want["lines"], "the same trace as convscope export's"
    assert (got["preset"]["name"], got["preset"]["title"], got["preset"]["teaches"]) == (
        want["preset"]["name"],
        want["preset"]["title"],
        want["preset"]["teaches"],
    )
    assert got["meta"] == want["meta"]
    doc = build_trace(PRESETS["stride2"].config)
    view = OfflinePage(browser, saved)
    try:
        assert view.page.evaluate("window.convscope.total") == doc["total_events"]
        assert view.page.evaluate("window.convscope.preset") == "stride2"
        wait_until(view.page, "window.convscope.shownStep === 5")  # where it was downloaded
        assert view.page.locator("#download-lesson").is_hidden()
        view.page.keyboard.press("End")
        wait_until(view.page, f"window.convscope.shownStep === {doc['total_events'] - 1}")
    finally:
        view.close()


def test_a_mistake_lesson_and_your_numbers_travel_in_the_file(browser, tmp_path):
    """A lesson file of a mistake plays the mistaken code with its lab (marks, the first
    divergence); one of a setup with "compare" marks the numbers that differ. (Before,
    the export dropped both and the file played the truth under the mistake's title.)"""
    from convcore.mistakes.lessons import mistake_lessons

    entry = {m["id"]: m for m in mistake_lessons()}["groups_ignored"]
    setups = {
        "mistake": {**entry["request"], "title": entry["title"]},
        "compare": {
            "x": [[[[0, 1, 2], [3, 4, 5], [6, 7, 8]]]],
            "w": [[[[0, 1], [2, 3]]]],
            "compare": {"out": [[[[19, 25], [37, 40]]]]},
        },
    }
    for kind, setup in setups.items():
        (tmp_path / f"{kind}.json").write_text(json.dumps(setup))
        out = tmp_path / f"{kind}.html"
        assert main(["export", str(out), "--setup", str(tmp_path / f"{kind}.json")]) == 0
        view = OfflinePage(browser, out)
        try:
            page = view.page
            wait_until(
                page,
                "!document.getElementById('lab-bar').hidden && document.querySelectorAll('#stage .cell.diff').length > 0",
            )
            marked = page.evaluate(
                "Array.from(document.querySelectorAll('#stage .cell.diff'), (c) => c.dataset.tensor + c.dataset.idx)"
            )
            if kind == "compare":
                assert marked == ["out3"]  # 40 where the truth is 43
            else:
                assert len(marked) == 4  # out 1, dx 2, dw 1 (the catalogue's smallest case)
                page.keyboard.press("d")
                wait_until(
                    page,
                    f"window.convscope.step === {entry['first_divergence']} && !document.getElementById('eq-lab').hidden",
                )
        finally:
            view.close()


def test_a_lesson_file_asked_for_past_its_last_step_opens_at_the_last(browser, tmp_path):
    import httpx
    from test_browser_helpers import live_server

    with live_server() as base:
        answer = httpx.post(
            base + "/api/lesson", json={"setup": PRESETS["d2l"].config, "name": "d2l", "step": 10**6}, timeout=60
        )
        assert answer.status_code == 200, answer.text
        assert (
            httpx.post(base + "/api/lesson", json={"setup": PRESETS["d2l"].config, "step": -1}, timeout=60).status_code
            == 422
        )
    path = tmp_path / "d2l.html"
    path.write_bytes(answer.content)
    view = OfflinePage(browser, path)
    try:
        last = build_trace(PRESETS["d2l"].config)["total_events"] - 1
        wait_until(view.page, f"window.convscope.shownStep === {last}")
    finally:
        view.close()


def test_check_writes_the_failing_case_as_a_lesson_file_that_opens_offline(browser, tmp_path):
    """`convscope check FILE --lesson case.html`: the first failing output's smallest
    case, the student's output compared, in a file that plays with no server; here an
    empty-crop dx, whose shape the lab bar states."""
    import os
    import subprocess
    import sys

    from test_grader_sandbox import ROOT, STUDENTS

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    case = tmp_path / "case.html"
    done = subprocess.run(
        [sys.executable, "-m", "convscope", "check", str(STUDENTS / "empty_crop.py"), "--lesson", str(case)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"lesson file: {case} opens the dx case with your dx compared, with no server" in done.stdout
    view = OfflinePage(browser, case)
    try:
        wait_until(view.page, "document.getElementById('lab-lines').textContent.includes('dx has shape (')", 20)
        assert view.page.evaluate("window.convscope.total") > 0
    finally:
        view.close()
    passing = subprocess.run(
        [
            sys.executable,
            "-m",
            "convscope",
            "check",
            str(STUDENTS / "seven_loops.py"),
            "--lesson",
            str(tmp_path / "none.html"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert passing.returncode == 0 and "nothing fails, so no lesson file was written" in passing.stderr
    assert not (tmp_path / "none.html").exists()


def _embedded(path) -> dict:
    html = path.read_text(encoding="utf-8")
    tag = '<script type="application/json" id="convscope-lesson">'
    start = html.index(tag) + len(tag)
    return json.loads(html[start : html.index("</script>", start)])


def test_predict_in_the_file_asks_the_questions_it_carries_and_keeps_the_score(browser, cs231n_file):
    doc = build_trace(PRESETS["cs231n"].config)
    carried = _embedded(cs231n_file)["questions"]
    assert carried == json.loads(encode_json([step_questions(doc, k) for k in range(doc["total_events"])]))
    # (a step whose first question on the page is a written cell's value: no shape, no yes or no)
    step = next(
        k
        for k, qs in enumerate(carried)
        if k and qs[0]["kind"] == "value" and not {"shape", "changes"} & {q["kind"] for q in qs}
    )
    (value,) = [q for q in carried[step] if q["kind"] == "value"][:1]
    view = OfflinePage(browser, cs231n_file, viewport=(1366, 768))
    page = view.page
    try:
        page.evaluate(f"window.convscope.seek({step - 1})")
        page.locator("#stage").focus()
        page.keyboard.press("q")
        page.keyboard.press("ArrowRight")
        wait_until(page, "!document.getElementById('ask').hidden && !document.getElementById('ask-form').hidden")
        assert page.text_content("#ask-prompt") == value["prompt"]
        assert (
            page.evaluate("Array.from(document.querySelectorAll('.cell.hidden-answer'), c => c.textContent).join('')")
            == ""
        )
        page.keyboard.type(f"{value['answer']:.6g}")
        page.keyboard.press("Enter")
        wait_until(page, "document.getElementById('ask').dataset.verdict === 'right'")
        assert page.text_content("#ask-score") == "1 of 1 right"
        page.reload()
        wait_complete(page)
        page.evaluate(f"window.convscope.seek({step})")
        page.locator("#stage").focus()
        page.keyboard.press("ArrowRight")
        wait_until(page, "!document.getElementById('ask').hidden")
        assert page.text_content("#ask-score") == "1 of 1 right", "kept in the browser across a reload"
    finally:
        view.close()


def test_a_trace_too_long_for_its_questions_carries_none_and_costs_no_more_to_try():
    doc = json.loads(encode_json(build_trace(PRESETS["depthwise"].config)))
    whole = _questions_within(doc, QUESTION_BYTES)
    assert whole is not None and len(whole) == doc["total_events"]
    size = sum(len(encode_json(asked)) for asked in whole)  # (each step's JSON, as counted)
    assert _questions_within(doc, size) == whole
    assert _questions_within(doc, size - 1) is None


def test_a_lesson_file_of_a_setup_downloaded_mid_lesson_opens_at_that_step(browser, tmp_path):
    """Export → Lesson file on a setup of one's own (the address holds it whole, `c=`), at
    a backward step: the file opens at that step, offline, showing that step's equation."""
    from test_browser_helpers import lesson_path

    config = {**PRESETS["cs231n"].config, "b": [2, -1]}  # (no lesson's: the file's name is custom)
    doc = build_trace(config)
    step = next(k for k, ev in enumerate(doc["events"]) if ev["phase"] == "backward") + 6
    saved = _download_lesson(browser, lesson_path(config, step), tmp_path, step)
    assert saved.name == "convscope-custom.html"
    assert _embedded(saved)["step"] == step
    view = OfflinePage(browser, saved, viewport=(1366, 768))
    try:
        wait_until(view.page, f"window.convscope.shownStep === {step}")
        assert view.page.inner_text("#eq-text") == doc["events"][step]["text"]
        assert step_of(view.page) == step
    finally:
        view.close()


def test_export_step_sets_where_the_lesson_file_opens(browser, tmp_path, capsys):
    """`convscope export lesson.html --step N` (numbered from 1, as the page shows steps):
    the file opens at step N; a step the trace has not, or --step for an animation, is
    refused with the numbers before anything is written."""
    out = tmp_path / "at25.html"
    assert main(["export", str(out), "--preset", "cs231n", "--step", "25"]) == 0
    assert _embedded(out)["step"] == 24
    view = OfflinePage(browser, out)
    try:
        wait_until(view.page, "window.convscope.shownStep === 24")
    finally:
        view.close()
    total = build_trace(PRESETS["cs231n"].config)["total_events"]
    capsys.readouterr()
    for bad in ("0", str(total + 1)):
        assert main(["export", str(tmp_path / "bad.html"), "--preset", "cs231n", "--step", bad]) == 2
        assert f"--step {bad}: this trace has steps 1 to {total}" in capsys.readouterr().err
    assert not (tmp_path / "bad.html").exists()
    assert main(["export", str(tmp_path / "a.gif"), "--preset", "cs231n", "--step", "3"]) == 2
    assert "--step: only for a lesson file" in capsys.readouterr().err
    assert not (tmp_path / "a.gif").exists()


def test_export_code_opens_the_lesson_file_with_the_code_panel(browser, tmp_path):
    """`convscope export lesson.html --code` (and the page's download with the panel open):
    the file opens offline with the code panel, the step's line marked."""
    out = tmp_path / "code.html"
    assert main(["export", str(out), "--preset", "cs231n", "--step", "30", "--code"]) == 0
    assert _embedded(out)["code"] is True
    doc = build_trace(PRESETS["cs231n"].config)
    view = OfflinePage(browser, out)
    try:
        wait_until(view.page, "window.convscope.shownStep === 29 && !document.getElementById('code').hidden")
        line = doc["events"][29]["line"]
        wait_until(view.page, f"document.querySelector('#code .code-line.current')?.dataset.line === '{line}'")
    finally:
        view.close()
    plain = tmp_path / "plain.html"
    assert main(["export", str(plain), "--preset", "cs231n"]) == 0
    assert _embedded(plain)["code"] is False
