"""Predict, then reveal, on the page (Debian's Chromium): the key Q, a step taken forward
asked before it is shown (its written cells carry `hidden-answer` and show no value), an
answer typed, picked on the stage or given by Y / N, judged right or wrong with the
explanation, and the score kept across a reload; at 1366×768, on a phone, and in a
lesson file opened from file:// (its questions carried in the file).

Every question and answer comes from the server (``POST /api/questions``), whose answers
``tests/test_questions.py`` checks against the replayed trace and PyTorch; what is typed
here is the server's number to six significant digits, as a student reads it off a
calculator, or a number one off it.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from live_server import ONE_ADDRESS_CROWD
from test_browser_helpers import (
    TEACHER_TOKEN,
    lesson_path,
    live_server,
    require_chromium,
    server_document,
    wait_complete,
    wait_until,
)

from convcore.trace.questions import judge
from convscope.traces.presets import PRESETS

pytestmark = pytest.mark.browser

require_chromium()


@pytest.fixture(scope="module")
def base_url():
    """This module's server: a class here is one address (every page, the teacher's and
    the students', and the scripted answers come from 127.0.0.1, as they never do in a
    room), so the per-address shares are raised; tests/test_server_fair.py holds them.
    (With the defaults, a loaded run refused a student's stream with a 429.)"""
    with live_server(**ONE_ADDRESS_CROWD) as url:
        yield url


CS231N = PRESETS["cs231n"].config
ASKED = "!document.getElementById('ask').hidden && !document.getElementById('ask-form').hidden"


def _questions(base_url: str, config: dict, step: int) -> list[dict]:
    r = httpx.post(base_url + "/api/questions", json={"config": config, "step": step}, timeout=30)
    r.raise_for_status()
    return r.json()


def _steps(base_url: str, config: dict, want) -> list[int]:
    """The steps whose questions satisfy ``want(questions)``, in order."""
    doc = server_document(base_url, config)
    return [k for k in range(doc["total_events"]) if want(_questions(base_url, config, k))]


def _first_kind(questions: list[dict]) -> str:
    order = ["shape", "changes", "value", "reads"]
    return min((q["kind"] for q in questions if q["kind"] in order), key=order.index, default="")


def _hidden(page) -> list[list]:
    """The cells a question hides: [tensor, flat, text, written] each."""
    return page.evaluate(
        "Array.from(document.querySelectorAll('.cell.hidden-answer'), c => [c.dataset.tensor, Number(c.dataset.idx), c.textContent, c.classList.contains('wr')])"
    )


def _written(page) -> list[list]:
    return page.evaluate(
        "Array.from(document.querySelectorAll('.cell.wr'), c => [c.dataset.tensor, Number(c.dataset.idx)])"
    )


def _ask(page, step: int, predict_on: bool = True) -> None:
    """From step - 1, one step forward with Predict on: the question of ``step`` shows."""
    page.evaluate(f"window.convscope.seek({step - 1})")
    page.locator("#stage").focus()
    if predict_on and page.get_attribute("#predict-toggle", "aria-pressed") != "true":
        page.keyboard.press("q")
    page.keyboard.press("ArrowRight")
    wait_until(page, ASKED)
    assert page.evaluate("window.convscope.step") == step


def _typed(answer: float) -> str:
    return f"{answer:.6g}"


def _value_steps(base_url: str) -> list[int]:
    return _steps(base_url, CS231N, lambda qs: _first_kind(qs) == "value" and any(q["kind"] == "reads" for q in qs))


def test_self_study_on_cs231n_right_wrong_explained_and_the_score_kept_across_a_reload(open_page, base_url):
    steps = _value_steps(base_url)
    first, second = steps[3], steps[4]
    watch = open_page(f"/#l=cs231n&s={first - 1}", viewport=(1366, 768))
    page = watch.page
    # Predict off: a step forward shows the step
    page.locator("#stage").focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate("window.convscope.step") == first and not _hidden(page)
    # Predict on (Q): the step is asked first; every cell it writes is hidden, and only those
    _ask(page, first)
    (value,) = [q for q in _questions(base_url, CS231N, first) if q["kind"] == "value"][:1]
    assert page.text_content("#ask-prompt") == value["prompt"]
    hidden = _hidden(page)
    assert hidden and sorted(h[:2] for h in hidden) == sorted(_written(page))
    assert all(text == "" and wr for _, _, text, wr in hidden), hidden
    assert page.is_hidden("#eq-text"), "the step's text would give the answer away"
    # a word is no number: said beside the field, nothing typed is lost, nothing scored
    page.fill("#ask-input", "twelve")
    page.press("#ask-input", "Enter")
    wait_until(page, "document.getElementById('ask-how').textContent.includes('is not a number')")
    assert page.input_value("#ask-input") == "twelve" and _hidden(page)
    # right: typed as a calculator shows it, started from the stage (a digit focuses the field)
    page.locator("#stage").focus()
    page.fill("#ask-input", "")
    page.locator("#stage").focus()
    page.keyboard.type(_typed(value["answer"]))
    assert page.evaluate("document.activeElement.id") == "ask-input"
    page.keyboard.press("Enter")
    wait_until(page, "document.getElementById('ask').dataset.verdict === 'right'")
    assert page.text_content("#ask-verdict").startswith("✓ Right")
    assert not _hidden(page)
    tensor, index = value["cell"]["tensor"], value["cell"]["index"]
    assert page.text_content("#eq-text") == server_document(base_url, CS231N)["events"][first]["text"]
    assert f"{tensor}[{','.join(map(str, index))}]" in page.text_content("#ask-verdict")
    assert page.text_content("#ask-score") == "1 of 1 right"
    assert page.evaluate("document.activeElement.id") == "stage", "the keys are the player's again"
    # wrong: one off, with what was given and the explanation
    _ask(page, second)
    (value2,) = [q for q in _questions(base_url, CS231N, second) if q["kind"] == "value"][:1]
    page.fill("#ask-input", _typed(value2["answer"] + 1))
    page.click("#ask-check")
    wait_until(page, "document.getElementById('ask').dataset.verdict === 'wrong'")
    verdict = page.text_content("#ask-verdict")
    said = _typed(value2["answer"] + 1).replace("-", "−")  # (the page's minus sign)
    assert verdict.startswith(f"✗ Not quite (you said {said})"), verdict
    assert value2["explanation"].startswith(verdict.split("): ", 1)[1]), (verdict, value2["explanation"])
    assert page.text_content("#ask-score") == "1 of 2 right"
    # back and forward again: an answered step is not asked twice
    page.keyboard.press("ArrowLeft")
    wait_until(page, f"window.convscope.shownStep === {second - 1}")
    page.keyboard.press("ArrowRight")
    wait_until(page, f"window.convscope.shownStep === {second}")
    assert page.is_hidden("#ask") and not _hidden(page)
    # a reload keeps Predict on and the lesson's score
    page.reload()
    wait_complete(page)
    assert page.get_attribute("#predict-toggle", "aria-pressed") == "true"
    later = steps[6]
    _ask(page, later, predict_on=False)
    assert page.text_content("#ask-score") == "1 of 2 right"
    # "Show me" (or → again) shows the answer unscored; Q turns Predict off
    page.keyboard.press("ArrowRight")
    wait_until(page, "document.getElementById('ask').dataset.verdict === 'shown'")
    assert not _hidden(page)
    assert page.text_content("#ask-score") == "1 of 2 right"
    page.keyboard.press("q")
    page.keyboard.press("ArrowRight")
    wait_until(page, f"window.convscope.step === {later + 1} && document.getElementById('ask').hidden")
    assert not _hidden(page)
    assert page.get_attribute("#predict-toggle", "aria-pressed") == "false"


def test_the_cells_a_step_reads_picked_on_the_stage_and_the_output_shape_typed(open_page, base_url):
    steps = _value_steps(base_url)
    page = open_page("/#l=cs231n&s=0", viewport=(1366, 768)).page
    step = steps[2]
    _ask(page, step)
    (reads,) = [q for q in _questions(base_url, CS231N, step) if q["kind"] == "reads"]
    page.click("#ask-kinds button:has-text('it reads')")
    wait_until(page, f"document.getElementById('ask-prompt').textContent === {json.dumps(reads['prompt'])}")
    wait_until(page, "document.getElementById('stage').classList.contains('asking-reads')")
    tensor = reads["answer"]["tensor"]
    shape = server_document(base_url, CS231N)["tensors"][tensor]["shape"]
    flats = [_flat(c, shape) for c in reads["answer"]["cells"]]
    # a wrong cell picked, then unpicked (a second click); then the right ones
    wrong = next(f for f in range(9) if f not in flats)
    page.click(f".cell[data-tensor='{tensor}'][data-idx='{wrong}']")
    wait_until(page, "document.querySelectorAll('.cell.picked').length === 1")
    page.click(f".cell[data-tensor='{tensor}'][data-idx='{wrong}']")
    for f in flats:
        page.click(f".cell[data-tensor='{tensor}'][data-idx='{f}']")
    wait_until(page, f"document.getElementById('ask-how').textContent.includes('({len(flats)} picked)')")
    picked = page.evaluate(
        "Array.from(document.querySelectorAll('.cell.picked'), c => [c.dataset.tensor, Number(c.dataset.idx)])"
    )
    assert sorted(picked) == sorted([tensor, f] for f in flats)
    page.locator("#stage").focus()
    page.keyboard.press("Enter")
    wait_until(page, "document.getElementById('ask').dataset.verdict === 'right'")
    assert page.text_content("#ask-verdict").startswith(f"✓ Right, {len(flats)} cells of {tensor}")
    assert not page.evaluate("document.getElementById('stage').classList.contains('asking-reads')")
    # the picks stay beside the step's read marks until the step is left
    assert page.evaluate("document.querySelectorAll('.cell.picked.rd').length") == len(flats)
    assert page.evaluate("document.querySelectorAll('#inspector[open]').length") == 0, "a pick opens no story"
    # out's shape, asked at the forward's first step
    doc = server_document(base_url, CS231N)
    forward = next(p for p in doc["phases"] if p["name"] == "forward")
    _ask(page, forward["start"])
    assert page.evaluate("document.querySelectorAll('.cell.picked').length") == 0
    (shape_q,) = [q for q in _questions(base_url, CS231N, forward["start"]) if q["kind"] == "shape"]
    wait_until(page, f"document.getElementById('ask-prompt').textContent === {json.dumps(shape_q['prompt'])}")
    page.fill("#ask-input", "×".join(map(str, shape_q["answer"])))
    page.press("#ask-input", "Enter")
    wait_until(page, "document.getElementById('ask').dataset.verdict === 'right'")
    assert "⌊" in page.text_content("#ask-verdict"), "the shape rule with the spec's numbers"


def _flat(index: list[int], shape: list[int]) -> int:
    flat = 0
    for i, n in zip(index, shape):
        flat = flat * n + i
    return flat


def test_a_dead_relu_step_is_answered_with_the_keys_y_and_n(open_page, base_url):
    config = dict(CS231N, activation="relu")
    dead = _steps(base_url, config, lambda qs: any(q["kind"] == "changes" and q["answer"] is False for q in qs))
    assert dead
    page = open_page(lesson_path(config), viewport=(1366, 768)).page
    _ask(page, dead[0])
    wait_until(page, "document.getElementById('ask-prompt').textContent === 'Does this step change anything?'")
    assert page.is_visible("#ask-yes") and page.is_hidden("#ask-input")
    page.keyboard.press("y")
    wait_until(page, "document.getElementById('ask').dataset.verdict === 'wrong'")
    assert "nothing changes" in page.text_content("#ask-verdict")


def test_on_a_phone_the_question_is_answered_by_touch(open_page, base_url):
    steps = _value_steps(base_url)
    watch = open_page(f"/#l=cs231n&s={steps[3] - 1}", viewport=(390, 844), is_mobile=True, has_touch=True)
    page = watch.page
    page.tap("#predict-toggle")
    page.tap("#btn-next")
    wait_until(page, ASKED)
    (value,) = [q for q in _questions(base_url, CS231N, steps[3]) if q["kind"] == "value"][:1]
    for part in ("#ask-prompt", "#ask-input", "#ask-check"):
        box = page.locator(part).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["y"] + box["height"] <= 844, (part, box)
    assert page.evaluate("document.getElementById('ask-input').inputMode") == "decimal"
    page.tap("#ask-input")
    page.fill("#ask-input", _typed(value["answer"]))
    page.tap("#ask-check")
    wait_until(page, "document.getElementById('ask').dataset.verdict === 'right'")
    assert page.text_content("#ask-score") == "1 of 1 right"


# -- a class question (follow mode) -------------------------------------------------


def _publications(page) -> list[tuple[float, str]]:
    """The page's publications (PUT .../state) as they start, end or fail: (seconds from
    now, what), for a failure's message."""
    start, seen = time.monotonic(), []

    def note(what):
        return lambda r: (
            r.method == "PUT" and r.url.endswith("/state") and seen.append((round(time.monotonic() - start, 2), what))
        )

    page.on("request", note("sent"))
    page.on("requestfinished", note("answered"))
    page.on("requestfailed", note("failed"))
    return seen


def class_question_round(browser, base_url: str, scripted: int = 28) -> None:
    """A teacher's page asks, a laptop's and a phone's pages answer (right, and two off)
    with ``scripted`` more pages' answers sent through the API; the teacher's count, the
    answers revealed (equal to those sent), every page's verdict, the CSV. (Also run
    across two workers sharing Redis: tests/test_browser_follow_workers.py.)"""
    contexts = []

    def page_of(path: str, viewport=(1366, 768), **context_args):
        context = browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]}, accept_downloads=True, **context_args
        )
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        contexts.append((context, errors))
        page.goto(base_url + path)
        wait_complete(page)
        return page

    teacher = page_of(f"/?debug&teacher={TEACHER_TOKEN}#s=0&l=cs231n")
    published = _publications(teacher)
    teacher.click("#class-session")
    wait_until(teacher, "document.querySelector('#follow-bar .join-code')")
    code = teacher.inner_text("#follow-bar .join-code")
    step = _value_steps(base_url)[3]
    teacher.evaluate(f"window.convscope.seek({step - 1})")
    (value,) = [q for q in _questions(base_url, CS231N, step) if q["kind"] == "value"][:1]
    first = page_of(f"/?debug&follow={code}")
    second = page_of(f"/?debug&follow={code}", (390, 844), is_mobile=True, has_touch=True)
    for student in (first, second):
        wait_until(student, f"window.convscope.preset === 'cs231n' && window.convscope.step === {step - 1}", 10)
    # A: the teacher asks about the next step; every page goes there with its answer hidden
    teacher.locator("#stage").focus()
    teacher.keyboard.press("a")
    wait_until(teacher, f"window.convscope.step === {step} && !document.getElementById('ask-class').hidden")
    assert teacher.text_content("#ask-prompt") == value["prompt"] and teacher.is_hidden("#ask-form")
    assert teacher.evaluate("document.querySelectorAll('.cell.hidden-answer').length") > 0
    for student in (first, second):
        wait_until(student, f"window.convscope.step === {step} && {ASKED}", 10)
        assert student.text_content("#ask-prompt") == value["prompt"]
        hidden = "Array.from(document.querySelectorAll('.cell.hidden-answer'), c => c.textContent).join('')"
        assert student.evaluate(hidden) == ""
    # → on a following student's question waits for the teacher: no step, no answer shown
    first.locator("#stage").focus()
    first.keyboard.press("ArrowRight")
    wait_until(first, "document.getElementById('toast').textContent.includes('once the class has answered')")
    # (still following: its bar offers to break away, whether its stream is live or
    # reconnecting, as a loaded machine's may be for a moment)
    assert first.evaluate("window.convscope.step") == step
    assert first.get_attribute("#follow-action", "data-does") == "breakAway"
    assert first.evaluate("document.querySelectorAll('.cell.hidden-answer').length") > 0
    # the laptop right, the phone two off; each page sends once
    right = value["answer"]
    first.fill("#ask-input", _typed(right))
    first.press("#ask-input", "Enter")
    wait_until(first, "document.getElementById('ask-verdict').textContent.startsWith('Sent: ')")
    assert (
        first.is_hidden("#ask-form") and first.evaluate("document.querySelectorAll('.cell.hidden-answer').length") > 0
    )
    second.tap("#ask-input")
    second.fill("#ask-input", _typed(right + 2))
    second.tap("#ask-check")
    wait_until(second, "document.getElementById('ask-verdict').textContent.startsWith('Sent: ')")
    # the rest of the class through the API, as their pages send it
    session = teacher.evaluate("JSON.parse(sessionStorage.getItem('convscope.classSession')).session")
    rng = random.Random(30)
    sent = [right, right + 2] + [rng.choice([right, right + 1, right + 2, 0.5]) for _ in range(scripted)]
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for i, given in enumerate(sent[2:]):
            r = client.post(
                f"/api/follow/sessions/{session}/questions/1/answers",
                json={"voter": f"scripted-{i:08d}", "given": given},
            )
            assert r.status_code == 201, r.text
    total = len(sent)
    count = "document.getElementById('ask-count').textContent"
    wait_until(teacher, f"{count}.startsWith('{total} answered')", 10)
    # (the two pages' event streams may be reconnecting for a moment on a loaded machine:
    # the count of who follows comes back with them; see also this module's base_url)
    try:
        wait_until(teacher, f"{count}.startsWith('{total} answered (2 following)')", 30)
    except AssertionError as exc:  # (say what the teacher saw and where each student was)
        said = teacher.evaluate(count)
        students = [s.get_attribute("#follow-action", "data-does") for s in (first, second)]
        raise AssertionError(
            f"{exc}; the count read {said!r}; the students' follow buttons: {students}; "
            f"the teacher's publications (s, what): {published[-12:]}"
        ) from exc
    # nothing shows before the reveal; → reveals the answers on the teacher's screen
    assert teacher.evaluate("document.querySelectorAll('#ask-tally li').length") == 0
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "document.querySelectorAll('#ask-tally li').length > 0")
    # (a row a catalogued mistake gives says so after " · ": tests/test_follow_questions.py)
    shown = teacher.evaluate(
        "Array.from(document.querySelectorAll('#ask-tally li'), li => [li.dataset.right, li.textContent.split(' · ')[0]])"
    )
    counts = Counter(sent)
    want = [
        [str(judge(value, v)).lower(), f"{'✓' if judge(value, v) else '✗'} {_typed(v).replace('-', '−')}: {n}"]
        for v, n in counts.items()
    ]
    assert sorted(shown) == sorted(want), (shown, want)
    n_right = sum(n for v, n in counts.items() if judge(value, v))
    assert teacher.text_content("#ask-right") == f"{n_right} of {total} right ({round(100 * n_right / total)}%)"
    assert teacher.evaluate("document.querySelectorAll('.cell.hidden-answer').length") == 0
    # every page plays the step, each with its own verdict
    wait_until(first, "document.getElementById('ask').dataset.verdict === 'right'", 10)
    wait_until(second, "document.getElementById('ask').dataset.verdict === 'wrong'", 10)
    for student in (first, second):
        assert student.evaluate("document.querySelectorAll('.cell.hidden-answer').length") == 0
    # an answer after the close is refused
    with httpx.Client(base_url=base_url, timeout=30) as client:
        late = client.post(
            f"/api/follow/sessions/{session}/questions/1/answers", json={"voter": "scripted-late-000", "given": right}
        )
        assert late.status_code == 409
    # the counts as CSV
    with teacher.expect_download() as download:
        teacher.click("#ask-csv")
    csv = Path(download.value.path()).read_text(encoding="utf-8")
    assert csv.splitlines()[0] == "answer,pages,right" and len(csv.splitlines()) == 1 + len(counts), csv
    for context, errors in contexts:
        assert errors == []
        context.close()


# (alone: three pages and 28 scripted answers wait on one in-process server's streams;
# beside the parallel suite's load, twice in stop 40's CI, the teacher's count read
# "0 following" for 30 s while both students' pages still followed: not yet explained)
@pytest.mark.alone
def test_a_class_of_30_is_asked_answers_and_every_page_plays_the_reveal(browser, base_url):
    class_question_round(browser, base_url)


def test_a_class_reads_question_revealed_marks_how_many_picked_each_cell(open_page, base_url):
    teacher = open_page(f"/?teacher={TEACHER_TOKEN}#s=0&l=cs231n", viewport=(1366, 768)).page
    teacher.click("#class-session")
    wait_until(teacher, "document.querySelector('#follow-bar .join-code')")
    step = _value_steps(base_url)[2]
    teacher.evaluate(f"window.convscope.seek({step - 1})")
    teacher.locator("#stage").focus()
    teacher.keyboard.press("a")
    wait_until(teacher, "!document.getElementById('ask-class').hidden")
    # "ask about" asks the class again, another kind of the step's questions: question 2
    teacher.click("#ask-class-kinds button:has-text('it reads')")
    wait_until(teacher, "document.getElementById('ask-prompt').textContent.startsWith('Which cells')")
    (reads,) = [q for q in _questions(base_url, CS231N, step) if q["kind"] == "reads"]
    cells, tensor = reads["answer"]["cells"], reads["answer"]["tensor"]
    shape = server_document(base_url, CS231N)["tensors"][tensor]["shape"]
    session = teacher.evaluate("JSON.parse(sessionStorage.getItem('convscope.classSession')).session")
    sent = [cells, cells, cells[:2], [cells[0], [0, 0, 0, 0]] if [0, 0, 0, 0] not in cells else cells[:1]]
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for i, given in enumerate(sent):
            r = client.post(
                f"/api/follow/sessions/{session}/questions/2/answers",
                json={"voter": f"reads-page-{i:06d}", "given": given},
            )
            assert r.status_code == 201, r.text
    teacher.locator("#stage").focus()
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "document.querySelectorAll('.cell.heat').length > 0")
    heat = dict(
        teacher.evaluate(
            f"Array.from(document.querySelectorAll(\".cell.heat[data-tensor='{tensor}']\"), c => [Number(c.dataset.idx), Number(c.dataset.heat)])"
        )
    )
    want = Counter(_flat(c, shape) for given in sent for c in given)
    assert heat == dict(want), (heat, want)
    assert teacher.text_content("#ask-right") == "2 of 4 right (50%)"
    # the step left: the marks go
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "document.querySelectorAll('.cell.heat').length === 0")
