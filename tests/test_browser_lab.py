"""The mistakes lab and "compare your numbers" on the page (Debian's Chromium).

Every mistake of the lab (the Conv2d ones, ``lab_mistakes``) opens from the Lesson
menu's "Common mistakes" group; the cells
the page marks as differing are exactly those where the mistaken code's result (the
server's trace document) differs from the truth, each tagged with the true value; the D
key lands on the step where the catalogue says the code first leaves the correct code.
A pasted result marks exactly the cells where it differs. The expected cells come from
numpy over the server's documents, not from the page.
"""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest
from test_browser_helpers import choose_preset, require_chromium, server_document, shown_number, wait_until

from convcore.mistakes import lab_mistakes
from convcore.mistakes.lessons import mistake_lessons

pytestmark = pytest.mark.browser

require_chromium()


LESSONS = {m["id"]: m for m in mistake_lessons()}
OUTPUTS = ("out", "dx", "dw", "db")


def _marked(page) -> dict[tuple[str, int], str]:
    return {
        (t, int(i)): other
        for t, i, other in page.evaluate(
            "Array.from(document.querySelectorAll('#stage .cell.diff'), (c) => [c.dataset.tensor, c.dataset.idx, c.dataset.other])"
        )
    }


def _differing(doc: dict) -> dict[tuple[str, int], float]:
    """(tensor, flat) -> true value, for every output cell where the mistaken code's
    tensor (same shape as the truth) differs from the truth."""
    out = {}
    for name in OUTPUTS:
        if name not in doc["tensors"] or name not in doc["truth"] or name in doc["failures"]:
            continue
        got = np.asarray(doc["tensors"][name]["data"], dtype=float)
        truth = np.asarray(doc["truth"][name]["data"], dtype=float)
        if list(doc["tensors"][name]["shape"]) != list(doc["truth"][name]["shape"]):
            continue
        for flat in np.flatnonzero(~np.isclose(got, truth, rtol=1e-9, atol=1e-9)):
            out[(name, int(flat))] = float(truth[flat])
    return out


@pytest.mark.parametrize("mistake", list(LESSONS))
def test_every_mistake_lesson_marks_what_differs_and_d_lands_on_the_first_divergence(open_page, base_url, mistake):
    entry = LESSONS[mistake]
    watch = open_page("/", viewport=(1600, 1000))
    page = watch.page
    name = f"mistake-{mistake}"
    assert page.locator(f'#preset optgroup[label="Common mistakes"] option[value="{name}"]').count() == 1
    choose_preset(page, name)
    doc = server_document(base_url, entry["request"])
    expected = _differing(doc)
    # (the lab is drawn with the frame after the trace completes)
    wait_until(
        page,
        f"!document.getElementById('lab-bar').hidden && document.querySelectorAll('#stage .cell.diff').length === {len(expected)}",
    )
    marked = _marked(page)
    assert set(marked) == set(expected), f"{mistake}: marked {sorted(marked)}, differing {sorted(expected)}"
    for key, other in marked.items():
        assert other.startswith("✓") and shown_number(other[1:]) == pytest.approx(expected[key], rel=1e-2, abs=1e-6), (
            key,
            other,
        )
    bar = page.locator("#lab-bar")
    assert bar.is_visible()
    assert entry["title"] in page.locator("#lab-title").inner_text()
    lines = page.locator("#lab-lines").inner_text()
    for output, failure in doc["failures"].items():
        assert output in lines and (failure["kind"] in lines), (output, failure, lines)
    wait_until(page, "document.getElementById('badge').textContent.includes('mistaken code')")
    # the key a teacher presses: the first step where the code leaves the correct code
    page.locator("#stage").focus()
    page.keyboard.press("d")
    first = entry["first_divergence"]
    assert first is not None and first == doc["first_divergence"]
    wait_until(page, f"window.convscope.step === {first} && !document.getElementById('eq-lab').hidden")
    note = page.locator("#eq-lab")
    assert doc["divergence"]["should"] in note.inner_text()
    page.keyboard.press("ArrowRight")
    if first + 1 < doc["total_events"]:  # (the next step says nothing of it)
        wait_until(page, f"window.convscope.step === {first + 1} && document.getElementById('eq-lab').hidden")


def test_a_changed_setup_hides_the_mistake_and_a_reload_keeps_it(open_page):
    # padding 1 hides the empty crop [pad:-pad]: the lesson stays, the marks go
    watch = open_page("/", viewport=(1600, 1000))
    page = watch.page
    choose_preset(page, "mistake-empty_crop")
    wait_until(page, "document.getElementById('lab-lines').textContent.includes('empty array')")
    for i in range(4):
        field = page.locator(f"input[name=pad{i}]")
        if field.is_visible():
            field.fill("1")
            field.dispatch_event("change")
    wait_until(
        page,
        "window.convscope.complete && window.convscope.config.padding && JSON.stringify(window.convscope.config.padding).includes('1') && !document.querySelector('#lab-divergence').textContent.includes('step')",
        20,
    )
    assert page.locator("#lab-divergence").is_disabled()
    assert "hides the mistake" in page.locator("#lab-divergence").inner_text()
    assert _marked(page) == {}
    assert page.locator("#preset").input_value() == "mistake-empty_crop"
    assert "your setup" in page.locator("#preset-sentence").inner_text()
    config = page.evaluate("window.convscope.config")
    assert config["mistake"] == "empty_crop"
    page.reload()
    # (the lab bar is drawn with the first frame after the trace completes)
    wait_until(
        page, "Boolean(window.convscope && window.convscope.complete) && !document.getElementById('lab-bar').hidden"
    )
    assert page.evaluate("window.convscope.config") == config
    assert page.locator("#preset").input_value() == "mistake-empty_crop"
    assert page.locator("#lab-divergence").is_disabled()
    assert "hides the mistake" in page.locator("#lab-divergence").inner_text()


def _numpy_print(a: np.ndarray) -> str:
    return np.array2string(a, separator=" ")


def test_pasted_numbers_mark_exactly_the_cells_that_differ_and_survive_a_reload(open_page, base_url):
    watch = open_page("/", viewport=(1600, 1000))
    page = watch.page
    choose_preset(page, "cs231n")
    config = page.evaluate("window.convscope.config")
    doc = server_document(base_url, config)
    dx = np.asarray(doc["tensors"]["dx"]["data"], dtype=float).reshape(doc["tensors"]["dx"]["shape"])
    dw = np.asarray(doc["tensors"]["dw"]["data"], dtype=float).reshape(doc["tensors"]["dw"]["shape"])
    rng = np.random.default_rng(7)
    mine = dx.copy()
    wrong = sorted(int(f) for f in rng.choice(dx.size, size=5, replace=False))
    mine.flat[wrong] += np.array([1, -2, 0.5, 3, -1])
    # a word in a paste is named, and nothing is sent
    page.click("#compare-open")
    page.fill("#compare-dx", "[[1, 2], [3, x]]")
    page.click("#compare-apply")
    assert 'dx: "x"' in page.locator("#compare-error-dx").inner_text()
    assert page.locator("#compare-dialog").is_visible()
    # dx as print() shows it, dw as .tolist() gives it (equal to the truth)
    page.fill("#compare-dx", _numpy_print(mine))
    page.fill("#compare-dw", json.dumps(dw.tolist()))
    page.click("#compare-apply")
    wait_until(page, f"document.querySelectorAll('#stage .cell.diff').length === {len(wrong)}", 20)
    page.locator("#all-tensors").click()  # (dx is folded outside its phase: show it)
    marked = _marked(page)
    assert set(marked) == {("dx", f) for f in wrong}
    for f in wrong:
        assert marked[("dx", f)].startswith("you ") and shown_number(marked[("dx", f)][4:]) == pytest.approx(
            mine.flat[f]
        )
    lines = page.locator("#lab-lines").inner_text()
    assert f"dx: {len(wrong)} of {dx.size} cells differ" in lines and "dw matches" in lines
    # the server's comparison says the same
    r = httpx.post(base_url + "/api/trace", json={**config, "compare": {"dx": mine.tolist()}}, timeout=30).json()
    assert r["comparison"]["dx"]["differing_flat"] == wrong
    # a marked cell's story is the truth's: what it should have received
    first = page.locator(f'#stage .cell.diff[data-tensor="dx"][data-idx="{wrong[0]}"]')
    first.click()
    wait_until(page, "document.getElementById('inspector').open")
    true_value = dx.flat[wrong[0]]
    assert shown_number(page.locator("#insp-sum").inner_text().split()[-1]) == pytest.approx(
        true_value
    )  # "8 contributions, summing to 6"
    # its closed form and the PyTorch expression that computes it, at its own index
    index = ", ".join(str(int(i)) for i in np.unravel_index(wrong[0], dx.shape))
    assert page.locator("#insp-formula").inner_text().startswith(doc["tensors"]["dx"]["formula"])
    code = page.locator("#insp-torch-code").text_content()
    assert code.splitlines()[:-1] == doc["torch_setup"]
    assert code.splitlines()[-1] == f"torch.autograd.grad(out, x, dout, retain_graph=True)[0][{index}]"
    page.keyboard.press("Escape")
    # a reload keeps the comparison (the address holds it) and the pasted text
    page.reload()
    wait_until(
        page,
        f"window.convscope && window.convscope.complete && document.querySelectorAll('#stage .cell.diff').length === {len(wrong)}",
        20,
    )
    page.click("#lab-edit")
    assert page.locator("#compare-dx").input_value() == _numpy_print(mine)
    page.click("#compare-cancel")
    page.click("#lab-stop")
    wait_until(
        page,
        "window.convscope.complete && !('compare' in window.convscope.config) && document.getElementById('lab-bar').hidden",
        20,
    )
    assert _marked(page) == {}


def test_a_mistake_lesson_cannot_also_compare(open_page):
    watch = open_page("/", viewport=(1600, 1000))
    page = watch.page
    choose_preset(page, "mistake-assign_dx")
    wait_until(page, "!document.getElementById('lab-bar').hidden")
    page.click("#compare-open")
    assert "already compares" in page.locator("#compare-why").inner_text()
    assert page.locator("#compare-apply").is_disabled()
    page.click("#compare-cancel")


@pytest.mark.parametrize("mistake", ["assign_dw", "db_averaged", "stride_one_index_grid"])
def test_the_graders_link_opens_the_counterexample_with_the_students_cells_marked(open_page, mistake):
    """`convscope check`'s link for a failing output: the page opens that case with the
    student's tensor compared, and marks exactly the cells the grader found wrong."""
    from convcore.grader import grade
    from convcore.grader.report import PAGE
    from convcore.mistakes import get_mistake

    m = get_mistake(mistake)
    report = grade(m.convention, m.implementation, target=mistake).data
    failing = {
        name: o["counterexample"]
        for name, o in report["outputs"].items()
        if o["status"] == "fail" and o["counterexample"]["kind"] == "wrong values"
    }
    assert failing, f"{mistake}: no output failed with wrong values"
    name, ce = next(iter(failing.items()))
    expected = np.asarray(ce["expected"], dtype=float)
    got = np.asarray(ce["got"], dtype=float).reshape(expected.shape)
    wrong = {int(f) for f in np.flatnonzero(~np.isclose(got, expected, rtol=1e-9, atol=1e-9))}
    path = "/" + ce["page"][len(PAGE) :]
    watch = open_page(path, viewport=(1600, 1000))
    page = watch.page
    wait_until(page, f"document.querySelectorAll('#stage .cell.diff').length === {len(wrong)}", 20)
    assert set(_marked(page)) == {(name, f) for f in wrong}
    assert f"{name}: {len(wrong)} of {expected.size} cells differ" in page.locator("#lab-lines").inner_text()


def _unfinished_dx(dout, cache):  # returns nothing for dx: the link must still open
    from convcore.compat.cs231n import conv_backward_naive

    _, dw, db = conv_backward_naive(dout, cache)
    return None, dw, db


def _wrong_shaped(mistake) -> list[str]:
    """The outputs of a catalogued mistake that are None, or of another shape than the
    truth (an empty crop among them), on its smallest setup."""
    from convcore.mistakes import Failure, get_convention

    got, truth = mistake.results(mistake.setup), get_convention(mistake.convention).expected(mistake.setup)
    return [
        name
        for name, value in got.items()
        if (value.kind == "returned None" if isinstance(value, Failure) else np.shape(value) != truth[name].shape)
    ]


# every catalogued mistake with an output of the wrong shape, empty or None (derived from
# the catalogue, so a new one is tested too), and a dx returned as None
WRONG_SHAPED = [m.id for m in lab_mistakes() if _wrong_shaped(m)]


@pytest.mark.parametrize("subject", [*WRONG_SHAPED, "unfinished dx"])
def test_the_graders_link_opens_for_an_output_of_the_wrong_shape_empty_or_none(open_page, subject):
    """An empty dx ([pad:-pad] at padding 0), every other wrong-shaped output of the
    catalogue, and a dx of None: the link opens the case, the trace plays, and the lab
    bar says what the student's output is, instead of a refusal and a blank page."""
    from convcore.compat.cs231n import conv_forward_naive
    from convcore.grader import grade
    from convcore.grader.report import PAGE, counterexample_data
    from convcore.mistakes import Subject, get_mistake

    if subject == "unfinished dx":
        convention, code = "cs231n", Subject(forward=conv_forward_naive, backward=_unfinished_dx)
    else:
        convention, code = get_mistake(subject).convention, get_mistake(subject).implementation
    report = grade(convention, code, target=subject).data
    shaped = {
        name: o["counterexample"]
        for name, o in report["outputs"].items()
        if o["status"] == "fail" and o["counterexample"]["kind"] in ("wrong shape", "returned None")
    }
    if not shaped and subject != "unfinished dx":  # its graded smallest case raises first: the link the
        m = get_mistake(subject)  # report makes for its setup, where the output has the wrong shape
        shaped = {n: counterexample_data(convention, m.setup, n, m.results(m.setup)[n]) for n in _wrong_shaped(m)}
    assert shaped, {n: o["status"] for n, o in report["outputs"].items()}
    name, ce = next(iter(shaped.items()))
    page = open_page("/" + ce["page"][len(PAGE) :], viewport=(1366, 768)).page
    wait_until(
        page, "document.getElementById('lab-lines') && document.getElementById('lab-lines').textContent.length > 0", 20
    )
    said = page.locator("#lab-lines").inner_text()
    if ce["kind"] == "returned None":
        assert f"{name} is None: nothing was returned for it" in said, said
    else:
        assert f"{name} has shape (" in said and "expected (" in said, said
    assert page.evaluate("window.convscope.total") > 0 and not page.locator("#badge[data-state=error]").count()
