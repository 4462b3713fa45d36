"""A mistake lesson's code (convcore/mistakes/listing.py): the mistaken listing is the
lab's correct listing with its mistake's ``listing_change``; run as code, it computes
exactly what the mistake's own loops compute (the catalogue's implementation, on random
specs: the same arrays, or a failure of the same kind), the diff marks exactly the lines
it changed, and the mistake trace's events carry the lines the listing runs under
``sys.settrace``."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import geometry, torch_layer
from strategies import cs231n_cases, examples, torch_style_cases
from trace_checks import assert_close

from convcore.mistakes import MISTAKES, Case, Subject, get_convention, get_mistake, outcome_equal
from convcore.mistakes.lab import build_mistake_trace
from convcore.mistakes.listing import LAB_ALIASES, correct_listing, mistake_code, mistake_listing

WITH_CODE = [m for m in MISTAKES.values() if mistake_listing(m) is not None]
SMALL = {
    "cs231n": cs231n_cases(max_n=2, max_cf=2, max_hw=5, max_k=3),
    "torch": torch_style_cases(max_n=2, max_cf=2, max_hw=5, max_k=3, max_dilation=2),
}
CASES = {
    "cs231n": cs231n_cases(max_n=2, max_cf=3, max_hw=6, max_k=4, max_pad=3),
    "torch": torch_style_cases(max_n=2, max_cf=4, max_hw=6, max_k=3, max_dilation=2),
}


def integer_case(case) -> Case:
    """``case``'s geometry with small integer inputs: every sum exact, whatever its order."""
    rng = np.random.default_rng(case.seed)
    x, w, b, dout = (rng.integers(-3, 4, size=a.shape).astype(float) for a in case.arrays())
    return Case.with_inputs(case.spec, "identity", x, w, b, dout)


def listing_results(listing, case: Case) -> dict:
    subject = Subject(forward=listing.functions["forward"], backward=listing.functions["backward"])
    return get_convention(listing.convention).run(subject, case)


def test_the_catalogue_s_most_common_cs231n_mistakes_have_code():
    have = {m.id for m in WITH_CODE}
    assert {"assign_dx", "assign_dw", "empty_crop", "crop_hardcoded_1", "pad_hardcoded_1"} <= have
    assert {"stride_one_index_grid", "column_stride_missing", "bias_not_added", "output_size_parentheses"} <= have
    assert {"flipped_kernel_forward", "dw_rotated", "db_wrong_axes", "groups_ignored"} <= have
    assert all(m.convention in ("cs231n", "torch") for m in WITH_CODE)


@pytest.mark.parametrize("convention", sorted(CASES))
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_the_lab_s_correct_listing_is_correct(convention, data):
    case = data.draw(CASES[convention])
    got = listing_results(correct_listing(convention), integer_case(case))
    x, w, b, dout = integer_case(case).arrays
    truth = torch_layer(x, w, b, dout, **geometry(case.spec))
    for name in ("out", "dx", "dw", "db"):
        assert_close(got[name], getattr(truth, name), name, 1e-12)


@pytest.mark.parametrize("mistake", WITH_CODE, ids=lambda m: m.id)
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_the_mistaken_listing_computes_what_the_mistake_computes(mistake, data):
    case = data.draw(CASES[mistake.convention])
    mistaken, _, _ = mistake_listing(mistake)
    inputs = integer_case(case)
    got, expected = listing_results(mistaken, inputs), mistake.results(inputs)
    for name in ("out", "dx", "dw", "db"):
        assert outcome_equal(got[name], expected[name]), f"{mistake.id} {name}: {got[name]} != {expected[name]}"


def test_a_listing_that_drifted_would_be_told_apart():
    """The check can fail: assign_dx's code is not assign_dw's."""
    case = get_mistake("assign_dx").setup
    got = listing_results(mistake_listing(get_mistake("assign_dw"))[0], case)
    expected = get_mistake("assign_dx").results(case)
    assert not all(outcome_equal(got[name], expected[name]) for name in ("dx", "dw"))


@pytest.mark.parametrize("mistake", WITH_CODE, ids=lambda m: m.id)
def test_the_diff_marks_exactly_the_changed_lines(mistake):
    mistaken, correct, changed = mistake_listing(mistake)
    code = mistake_code(mistake)
    assert code["lines"] == list(mistaken.lines) and code["correct"] == list(correct.lines)
    assert code["correct_name"] == correct.name and code["convention"] == mistake.convention
    assert len(mistaken.lines) == len(correct.lines)
    differ = [k for k, (a, b) in enumerate(zip(correct.lines, mistaken.lines), start=1) if a != b]
    assert code["changed"] == list(changed) == differ and differ
    for line in differ:  # each changed line holds a replacement of its mistake's change
        assert any(new in mistaken.lines[line - 1] for _, new in mistake.loops.listing_change)


def executed(listing, case: Case) -> list[int]:
    """The marked lines the listing runs on ``case``, forward then backward (each pass
    as the convention calls it: an exception stops that pass only)."""
    marked = {mark.line for mark in listing.marks}
    (section,) = listing.sections
    seen: list[int] = []

    def local(frame, event, arg):
        if event == "line" and frame.f_lineno in marked:
            seen.append(frame.f_lineno)
        if event == "exception" and seen and seen[-1] == frame.f_lineno:
            seen.pop()  # the line raised: it made no step (the trace stops before it)
        return local

    before = sys.gettrace()

    def start(frame, event, arg):  # the listing's functions, not a comprehension's frame in their lines
        return local if frame.f_code.co_filename == section.path and not frame.f_code.co_name.startswith("<") else None

    sys.settrace(start)
    try:
        listing_results(listing, case)
    finally:
        sys.settrace(before)
    return seen


def event_lines(doc) -> list[int]:
    """The events' lines in order, a line outside every loop (the pad, the crop) once per
    run of its steps: the code runs it once for all of them."""
    outside = {mark.line for mark in mistake_listing(get_mistake(doc["mistake"]["id"]))[0].marks if not mark.loops}
    lines = [line for event in doc["events"] for line in event["lines"]]
    return [line for k, line in enumerate(lines) if not (line in outside and k and lines[k - 1] == line)]


def check_lines(mistake, case: Case) -> None:
    doc = build_mistake_trace(case.trace_config("NCHW"), mistake.id)
    mistaken, _, _ = mistake_listing(mistake)
    assert doc["code"]["lines"] == list(mistaken.lines)
    line_map = mistaken.line_map
    for event in doc["events"]:  # one line per write the code has a line for (the activation: none)
        lines = [line_map[event["phase"]][name] for name in ("out", "db", "dxp", "dw", "dx", "xp")
                 for write in event["writes"] if LAB_ALIASES.get(name, name) == write["tensor"]
                 and name in line_map.get(event["phase"], {})]  # fmt: skip
        assert sorted(event["lines"]) == sorted(lines) and event["line"] == (lines and event["lines"][-1] or None)
    want, seen = event_lines(doc), executed(mistaken, case)
    # a step whose later line raised is no event (the lab makes its writes together), but
    # the code ran its first lines: at most F of a backward step's F + 1, at the very end
    tail = seen[len(want) :]
    assert want == seen[: len(want)], mistake.id
    assert len(tail) <= case.spec.F and set(tail) <= set(mistaken.line_map["backward"].values()), (mistake.id, tail)


@pytest.mark.parametrize("mistake", WITH_CODE, ids=lambda m: m.id)
def test_the_mistake_trace_runs_the_lines_of_the_mistaken_code(mistake):
    check_lines(mistake, mistake.setup)


@pytest.mark.parametrize("mistake", WITH_CODE, ids=lambda m: m.id)
@settings(max_examples=examples(25), deadline=None)
@given(data=st.data())
def test_the_mistake_trace_runs_its_lines_on_random_specs(mistake, data):
    check_lines(mistake, integer_case(data.draw(SMALL[mistake.convention])))


def test_the_divergence_names_the_changed_line():
    doc = build_mistake_trace(get_mistake("assign_dx").setup_config(), "assign_dx")
    assert doc["code"]["changed"] == [doc["divergence"]["line"]]
    assert "] = np.tensordot(" in doc["code"]["lines"][doc["divergence"]["line"] - 1]
    assert "] += np.tensordot(" in doc["code"]["correct"][doc["divergence"]["line"] - 1]


@pytest.mark.parametrize("mistake_id", ["squeeze_one_image", "input_size_loops"])
def test_a_mistake_without_code_has_code_null(mistake_id):
    doc = build_mistake_trace(get_mistake(mistake_id).setup_config(), mistake_id)
    assert doc["code"] is None and not any("line" in e for e in doc["events"])
