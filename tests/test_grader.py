"""The grader in-process: every catalogued mistake is caught and named, its reported
counterexample is minimal, correct code passes, a seed gives the same report twice, and
the report reads as text, JSON and Gradescope's results.json."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from mistake_oracle import differs, torch_expected

from convcore.compat import cs231n as compat_cs231n
from convcore.compat.layer import Conv2D
from convcore.functional import conv2d_backward, conv2d_forward
from convcore.grader import check, grade
from convcore.grader.loader import find_subject, load_module
from convcore.grader.search import Grader
from convcore.mistakes import MISTAKES, Subject, get_convention, get_mistake, one_step_smaller

STUDENTS = Path(__file__).parent / "fixtures" / "students"
IDS = list(MISTAKES)
_REPORTS: dict[str, dict] = {}


def mistake_report(mistake_id: str) -> dict:
    """The report of grading a mistake's own implementation (once per session)."""
    if mistake_id not in _REPORTS:
        m = get_mistake(mistake_id)
        _REPORTS[mistake_id] = grade(m.convention, m.implementation, target=mistake_id).data
    return _REPORTS[mistake_id]


@pytest.mark.parametrize("mistake_id", IDS)
def test_every_mistake_is_caught_and_named(mistake_id):
    m = get_mistake(mistake_id)
    report = mistake_report(mistake_id)
    assert report["error"] is None
    failed = {name for name, o in report["outputs"].items() if o["status"] == "fail"}
    assert failed, f"{mistake_id} passed the grader"
    assert failed <= set(m.conditions), failed - set(m.conditions)  # only what the mistake breaks
    for name in failed:
        named = report["outputs"][name]["likely_mistakes"]
        assert named and named[0]["id"] == mistake_id and named[0]["everywhere"], (name, named)
        assert all(not other["everywhere"] for other in named[1:]), (name, named)


@pytest.mark.oracle
@pytest.mark.parametrize("mistake_id", IDS)
def test_the_counterexample_is_minimal_and_really_fails(mistake_id):
    """Every one-step-smaller neighbour of the reported case passes that output or fails
    it another way; the case itself fails against torch."""
    m = get_mistake(mistake_id)
    conv = get_convention(m.convention)
    fresh = Grader(m.convention, m.implementation)
    for name, result in mistake_report(mistake_id)["outputs"].items():
        if result["status"] != "fail":
            continue
        case = conv.case_type.from_dict(result["counterexample"]["case"])
        assert differs(torch_expected(m.convention, case)[name], m.results(case)[name])
        kind = fresh.kind(case, name)
        assert kind == result["counterexample"]["kind"]
        for smaller in one_step_smaller(case, conv.knobs):
            assert fresh.kind(smaller, name) != kind, f"{name}: {smaller.describe()} fails the same way"


def test_the_counterexample_report_has_inputs_expected_got_and_cells():
    result = mistake_report("assign_dw")["outputs"]["dw"]
    ce = result["counterexample"]
    assert ce["kind"] == "wrong values"
    assert set(ce["inputs"]) == {"x", "w", "b", "dout", "conv_param"}
    cells = ce["comparison"]["differing"]
    assert cells and ce["comparison"]["differing_count"] >= len(cells)
    for cell in cells:
        index = tuple(cell["index"])
        assert np.asarray(ce["expected"])[index] == cell["expected"]
        assert np.asarray(ce["got"])[index] == cell["got"]
    # integers first: the smallest counterexample has integer inputs a person can check
    assert all(float(v).is_integer() for v in np.ravel(ce["inputs"]["x"]))


def test_the_page_link_opens_the_counterexample_with_the_received_tensor():
    ce = mistake_report("assign_dw")["outputs"]["dw"]["counterexample"]
    fragment = ce["page"].split("#", 1)[1]
    encoded = dict(part.split("=", 1) for part in fragment.split("&"))["c"]
    config = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    assert config["x"] == ce["inputs"]["x"] and config["dout"] == ce["inputs"]["dout"]
    assert config["compare"] == {"dw": ce["got"]}


def _layer_core():
    return Subject(layer=Conv2D)


@pytest.mark.parametrize(
    "convention, subject",
    [
        ("cs231n", Subject(forward=compat_cs231n.conv_forward_naive, backward=compat_cs231n.conv_backward_naive)),
        ("layer", Subject(layer=Conv2D)),
        ("torch", Subject(forward=conv2d_forward, backward=conv2d_backward)),
    ],
)
def test_the_correct_core_passes(convention, subject):
    report = grade(convention, subject, target="core")
    assert report.exit_code == 0, str(report)
    assert set(report.data["outputs"]) == {"out", "dx", "dw", "db"}


def test_a_seven_loop_implementation_in_seed_004s_style_passes():
    module = load_module(str(STUDENTS / "seven_loops.py"))
    report = grade("cs231n", find_subject(module, "cs231n", None, "seven_loops.py"), target="seven_loops.py")
    assert report.exit_code == 0, str(report)


def test_the_same_seed_gives_the_same_report_and_another_seed_other_cases():
    m = get_mistake("stride_one_index_grid")
    first = grade(m.convention, m.implementation, target="t", seed=3).data
    again = grade(m.convention, m.implementation, target="t", seed=3).data
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    a = Grader("cs231n", m.implementation, seed=3).search_cases()
    b = Grader("cs231n", m.implementation, seed=4).search_cases()
    assert a != b and a[:10] == b[:10]  # the edge cases come first either way


def test_a_backward_only_file_is_graded_with_the_tuple_cache():
    module = load_module(str(STUDENTS / "empty_crop.py"))
    subject = find_subject(module, "cs231n", None, "empty_crop.py")
    assert subject.forward is None
    report = grade("cs231n", subject, target="empty_crop.py")
    assert set(report.data["outputs"]) == {"dx", "dw", "db"}
    assert report.data["outputs"]["dx"]["likely_mistakes"][0]["id"] == "empty_crop"
    assert report.data["outputs"]["dw"]["status"] == "pass"


def test_the_backward_gets_the_cache_its_own_forward_returned():
    seen = []

    def forward(x, w, b, conv_param):
        out, _ = compat_cs231n.conv_forward_naive(x, w, b, conv_param)
        return out, ("my cache", x, w, b, conv_param)

    def backward(dout, cache):
        seen.append(cache[0])
        _, x, w, b, conv_param = cache
        return compat_cs231n.conv_backward_naive(dout, (x, w, b, conv_param))

    assert check(forward, backward, examples=5).exit_code == 0
    assert seen and set(seen) == {"my cache"}


def test_check_from_a_notebook_reads_as_text_and_html():
    m = get_mistake("db_averaged")
    report = check(m.implementation.forward, m.implementation.backward, convention="torch", examples=10)
    text = str(report)
    assert "db" in text and "FAIL" in text and "db_averaged" in text and "exit 1" in text
    assert report._repr_html_().startswith("<pre>") and "db_averaged" in report._repr_html_()
    assert report.exit_code == 1


def test_check_names_functions_by_arity_and_refuses_nothing():
    def f(x, w, b, conv_param):
        return compat_cs231n.conv_forward_naive(x, w, b, conv_param)

    def g(dout, cache):
        return compat_cs231n.conv_backward_naive(dout, cache)

    report = check(g, f, examples=5)
    assert set(report.data["outputs"]) == {"out", "dx", "dw", "db"} and report.exit_code == 0
    with pytest.raises(ValueError, match="needs the code"):
        check()
    with pytest.raises(ValueError, match="convention"):
        check(f, convention="keras")


def test_a_function_that_raises_everywhere_cannot_be_graded():
    def forward(x, w, b, conv_param):
        raise NotImplementedError("todo")

    report = check(forward, examples=5)
    assert report.exit_code == 2 and "raises on every input" in report.data["error"]
    assert "NotImplementedError: todo" in str(report)


def test_a_call_that_loops_is_stopped_in_process():
    def forward(x, w, b, conv_param):
        while True:
            pass

    report = check(forward, examples=5, call_seconds=0.5)
    assert report.exit_code == 2 and "time limit of 0.5 s" in report.data["error"]


def test_a_stub_that_returns_none_fails_without_crashing_the_grader():
    report = check(lambda x, w, b, conv_param: (None, None), examples=5)
    assert report.exit_code == 1
    assert report.data["outputs"]["out"]["counterexample"]["kind"] == "returned None"


def test_gradescope_results_have_one_test_per_output():
    m = get_mistake("empty_crop")
    report = grade(m.convention, m.implementation, target="empty_crop")
    results = report.gradescope()
    assert results["score"] == 3 and sum(t["max_score"] for t in results["tests"]) == 4
    by_name = {t["name"]: t for t in results["tests"]}
    assert by_name["dx (backward)"]["status"] == "failed" and "empty_crop" in by_name["dx (backward)"]["output"]
    assert by_name["out (forward)"]["status"] == "passed"
    json.dumps(results)  # plain JSON


def test_a_fatal_report_reads_in_every_form():
    from convcore.grader import Report

    report = Report.fatal("x.py", "cs231n", "x.py has neither conv_forward_naive nor conv_backward_naive")
    assert report.exit_code == 2 and "could not grade" in str(report)
    assert report.gradescope()["score"] == 0 and "neither" in report.gradescope()["output"]
    assert json.loads(report.to_json())["error"].startswith("x.py")


@pytest.mark.parametrize(
    "file, convention, output, mistake",
    [
        ("layer_crop.py", "layer", "dx", "crop_p0_p1_plus_rows"),
        ("torch_averaged_db.py", "torch", "db", "db_averaged"),
    ],
)
def test_student_files_of_the_other_conventions_are_named(file, convention, output, mistake):
    module = load_module(str(STUDENTS / file))
    report = grade(convention, find_subject(module, convention, None, file), target=file).data
    failed = {name for name, o in report["outputs"].items() if o["status"] == "fail"}
    assert failed == {output}, failed
    named = report["outputs"][output]["likely_mistakes"]
    assert named[0]["id"] == mistake and named[0]["everywhere"]


def test_the_call_timer_gives_an_outer_alarm_its_time_back():
    import signal
    import time

    from convcore.grader.grading import _alarm

    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *args: fired.append(True))
    try:
        signal.setitimer(signal.ITIMER_REAL, 5.0)
        with _alarm(2.0):
            time.sleep(0.05)
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 4.0 < remaining < 5.0 and not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
