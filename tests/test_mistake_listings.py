"""A mistake lesson's code (convcore/mistakes/listing.py): the mistaken listing is the
lab's correct listing with its mistake's ``listing_change``; run as code, it computes
exactly what the mistake's own loops compute (the catalogue's implementation, on random
specs: the same arrays, or a failure of the same kind), the diff marks exactly the lines
it changed, and the mistake trace's events carry the lines the listing runs under
``sys.settrace``. Every mistake the lab traces (``lab_mistakes``) has its code."""

from __future__ import annotations

import difflib
import sys
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import geometry, torch_layer
from strategies import conv_cases, cs231n_cases, examples, torch_style_cases
from trace_checks import assert_close

from convcore.mistakes import Case, Failure, Subject, get_convention, get_mistake, lab_mistakes, outcome_equal
from convcore.mistakes.lab import build_mistake_trace
from convcore.mistakes.listing import LAB_ALIASES, correct_listing, mistake_code, mistake_listing

LAB = lab_mistakes()  # (the mistakes the lab traces, with the code beside their steps)
WITH_CODE = [m for m in LAB if mistake_listing(m) is not None]


def layer_cases(**limits):
    """Specs the lab's layer code takes: one stride, any padding, no dilation or groups, a bias."""
    cases = conv_cases(**limits, max_dilation=1).filter(lambda c: c.groups == 1 and len(set(c.spec.stride)) == 1)
    return cases.map(lambda case: replace(case, bias=True))


SMALL = {
    "cs231n": cs231n_cases(max_n=2, max_cf=2, max_hw=5, max_k=3),
    "torch": torch_style_cases(max_n=2, max_cf=2, max_hw=5, max_k=3, max_dilation=2),
    "layer": layer_cases(max_n=2, max_cf=2, max_hw=5, max_k=3),
}
CASES = {
    "cs231n": cs231n_cases(max_n=2, max_cf=3, max_hw=6, max_k=4, max_pad=3),
    "torch": torch_style_cases(max_n=2, max_cf=4, max_hw=6, max_k=3, max_dilation=2),
    "layer": layer_cases(max_n=2, max_cf=3, max_hw=6, max_k=3),
}
# the layer computes its activation (its mistakes are in the derivative): drawn from these
ACTIVATIONS = {"cs231n": ("identity",), "torch": ("identity",), "layer": ("identity", "relu", "tanh")}
LAYOUTS = {"cs231n": "NCHW", "torch": "NCHW", "layer": "NHWC"}


def integer_case(case, activation: str = "identity") -> Case:
    """``case``'s geometry with small integer inputs: every sum exact, whatever its order
    (up to the activation's values)."""
    rng = np.random.default_rng(case.seed)
    x, w, b, dout = (rng.integers(-3, 4, size=a.shape).astype(float) for a in case.arrays())
    return Case.with_inputs(case.spec, activation, x, w, b, dout)


def layer_subject(listing) -> Subject:
    """The listing's ``Conv2D`` in the layer convention's calling form (the grader's:
    ``Cls(n_out, kernel_shape, stride=, pad=, activation=)``, ``parameters``,
    ``gradients``); the listing's activation is the lab's own object."""
    forward, backward = listing.functions["forward"], listing.functions["backward"]
    conv2d = forward.__globals__["Conv2D"]  # the listing's own class (compiled with its lines)

    class Layer:
        def __init__(self, n_out, kernel_shape, stride=1, pad=0, activation=None):
            self.args = stride, pad, activation

        def forward(self, X):
            stride, pad, activation = self.args
            self.code = conv2d(self.parameters["W"], self.parameters["b"].reshape(-1), stride, pad, activation)
            return forward(self.code, X)

        def backward(self, dLdY):
            dX = backward(self.code, dLdY)
            self.gradients = {"W": self.code.dW, "b": self.code.db.reshape(1, -1)}
            return dX

    return Subject(layer=Layer)


def listing_results(listing, case: Case) -> dict:
    if listing.convention == "layer":
        return get_convention("layer").run(layer_subject(listing), case)
    subject = Subject(forward=listing.functions["forward"], backward=listing.functions["backward"])
    return get_convention(listing.convention).run(subject, case)


def same_outcome(got, expected, exact: bool) -> bool:
    """``outcome_equal``, or (not ``exact``: a tanh's values, summed in another order) the
    same shape with values equal to 1e-12."""
    if exact or isinstance(got, Failure) or isinstance(expected, Failure) or got.shape != expected.shape:
        return outcome_equal(got, expected)
    return bool(np.allclose(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True))


@pytest.mark.parametrize("mistake", LAB, ids=lambda m: m.id)
def test_every_catalogued_mistake_s_trace_has_its_code(mistake):
    """A mistake added without a ``listing_change`` fails here."""
    doc = build_mistake_trace(mistake.setup_config(), mistake.id)
    assert doc["code"] is not None, f"{mistake.id}: its trace has no code (give its loops a listing_change)"
    assert doc["code"]["changed"] and doc["code"]["convention"] == mistake.convention
    assert all("line" in event for event in doc["events"])


def test_every_convention_s_lab_has_code():
    assert {m.convention for m in WITH_CODE} == {"cs231n", "torch", "layer"}
    assert len(WITH_CODE) == len(LAB)


@pytest.mark.parametrize("convention", sorted(CASES))
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_the_lab_s_correct_listing_is_correct(convention, data):
    case, activation = data.draw(CASES[convention]), data.draw(st.sampled_from(ACTIVATIONS[convention]))
    inputs = integer_case(case, activation)
    got = listing_results(correct_listing(convention), inputs)
    x, w, b, dout = inputs.arrays
    truth = torch_layer(x, w, b, dout, **geometry(case.spec), activation=activation)
    if convention == "layer":  # the grader's layout: NHWC, HWIO, db (1, F)
        got = {
            "out": got["out"].transpose(0, 3, 1, 2),
            "dx": got["dx"].transpose(0, 3, 1, 2),
            "dw": got["dw"].transpose(3, 2, 0, 1),
            "db": got["db"].reshape(-1),
        }
    for name in ("out", "dx", "dw", "db"):
        assert_close(got[name], getattr(truth, name), name, 1e-12)


@pytest.mark.parametrize("mistake", WITH_CODE, ids=lambda m: m.id)
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_the_mistaken_listing_computes_what_the_mistake_computes(mistake, data):
    case = data.draw(CASES[mistake.convention])
    activation = data.draw(st.sampled_from(ACTIVATIONS[mistake.convention]))
    mistaken = mistake_listing(mistake).mistaken
    inputs = integer_case(case, activation)
    got, expected = listing_results(mistaken, inputs), mistake.results(inputs)
    after_failed_forward = mistake.convention == "layer" and isinstance(expected["out"], Failure)
    for name in ("out", "dx", "dw", "db"):
        if after_failed_forward and name != "out":
            # a layer whose forward raised has no cache: its backward fails, in words of the calling form's
            assert isinstance(got[name], Failure) and isinstance(expected[name], Failure), (mistake.id, name)
            continue
        same = same_outcome(got[name], expected[name], activation != "tanh")
        assert same, f"{mistake.id} {name}: {got[name]} != {expected[name]}"


def test_a_listing_that_drifted_would_be_told_apart():
    """The check can fail: assign_dx's code is not assign_dw's."""
    case = get_mistake("assign_dx").setup
    got = listing_results(mistake_listing(get_mistake("assign_dw"))[0], case)
    expected = get_mistake("assign_dx").results(case)
    assert not all(outcome_equal(got[name], expected[name]) for name in ("dx", "dw"))


@pytest.mark.parametrize("mistake", WITH_CODE, ids=lambda m: m.id)
def test_the_diff_marks_exactly_the_changed_lines(mistake):
    mistaken, correct, changed, correct_of = mistake_listing(mistake)
    code = mistake_code(mistake)
    assert code["lines"] == list(mistaken.lines) and code["correct"] == list(correct.lines)
    assert code["correct_name"] == correct.name and code["convention"] == mistake.convention
    assert code["changed"] == list(changed) and code["correct_of"] == list(correct_of)
    # difflib's diff of the two listings, line by line: the lines it calls replaced or
    # inserted are the changed ones, each standing for a replaced line of its hunk
    differ, stands_for = [], []
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, correct.lines, mistaken.lines, False).get_opcodes():
        assert tag in ("equal", "replace"), (tag, correct.lines[a0:a1], mistaken.lines[b0:b1])  # nothing just dropped
        if tag == "replace":
            differ += range(b0 + 1, b1 + 1)
            stands_for += [range(a0 + 1, a1 + 1)] * (b1 - b0)
    assert list(changed) == differ and differ
    assert all(origin in lines for origin, lines in zip(correct_of, stands_for))
    one_for_one = len(mistaken.lines) == len(correct.lines)
    assert one_for_one == (list(correct_of) == list(changed))  # a line for a line keeps its number
    replacements = [part for _, new in mistake.loops.listing_change for part in new.split("\n")]
    for line in differ:  # each changed line holds (a line of) a replacement of its mistake's change
        assert any(part.strip() in mistaken.lines[line - 1] for part in replacements)


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
    doc = build_mistake_trace(case.trace_config(LAYOUTS[mistake.convention]), mistake.id)
    mistaken = mistake_listing(mistake).mistaken
    assert doc["code"]["lines"] == list(mistaken.lines)
    line_map, aliases = mistaken.line_map, LAB_ALIASES[mistake.convention]
    for event in doc["events"]:  # one line per write the code has a line for (CS231n's activation: none)
        lines = [line for name, line in line_map.get(event["phase"], {}).items()
                 for write in event["writes"] if aliases.get(name, name) == write["tensor"]]  # fmt: skip
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
    activation = data.draw(st.sampled_from(ACTIVATIONS[mistake.convention]))
    check_lines(mistake, integer_case(data.draw(SMALL[mistake.convention]), activation))


def test_the_divergence_names_the_changed_line():
    doc = build_mistake_trace(get_mistake("assign_dx").setup_config(), "assign_dx")
    assert doc["code"]["changed"] == [doc["divergence"]["line"]]
    assert "] = np.tensordot(" in doc["code"]["lines"][doc["divergence"]["line"] - 1]
    assert "] += np.tensordot(" in doc["code"]["correct"][doc["divergence"]["line"] - 1]


@pytest.mark.parametrize(
    ("mistake_id", "holds"), [("rotated_kernel_ignores_stride", "# (no dX in this loop"), ("dw_unfinished", "pass")]
)
def test_a_write_left_out_diverges_at_the_line_that_leaves_it_out(mistake_id, holds):
    """The first diverging step writes less than the correct one: its line is the changed
    line standing where the correct code writes what is missing, not a line it runs."""
    doc = build_mistake_trace(get_mistake(mistake_id).setup_config(), mistake_id)
    line = doc["divergence"]["line"]
    assert line in doc["code"]["changed"] and doc["code"]["lines"][line - 1].strip().startswith(holds)
    assert line not in doc["events"][doc["divergence"]["event"]]["lines"]
