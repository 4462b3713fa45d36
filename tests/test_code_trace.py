"""Trace your own code (``convcore.grader.code_trace.trace_code``, issue 23) on code
written the ways students write it, in tests/student_code/: correct seven-loop, im2col
and einsum CS231n code, a PyTorch-style pair with stride, padding, dilation and groups,
and an NHWC layer class; buggy variants each marked ``# BUG`` on the line that holds the
bug; and the mistake catalogue's own listings.

Checked against: the truth of convcore's core (the trace's ``differences``), the code's
own results (``convention.run`` outside any recording: the stage's final arrays must be
what the code returns), the ``# BUG`` line of each buggy file (the first wrong write's
line) and, for every catalogued mistake, the line the catalogue's mistake trace names
(``build_mistake_trace``), except the listed ones, each with its reason and a check of it.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import conv_cases, cs231n_cases, examples, torch_style_cases

from convcore.grader.code_trace import JUDGE_BUDGET, MAX_BASIS, trace_code
from convcore.mistakes import MISTAKES, OUTPUTS, Case, Subject, get_convention, lab_mistakes
from convcore.mistakes.lab import build_mistake_trace
from convcore.mistakes.listing import mistake_listing

STUDENT_CODE = Path(__file__).parent / "student_code"


def load_as(path: Path, name: str) -> ModuleType:
    """``path`` as the module ``name`` (in place of any module of that name), as an import
    would: its functions are compiled from the file, so the trace reads the lines from
    there, and it is in sys.modules, where the recording patches its module's names."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@cache
def load(name: str) -> ModuleType:
    """tests/student_code/<name>.py as a module."""
    return load_as(STUDENT_CODE / f"{name}.py", f"student_code_{name}")


# the functions each convention calls, by name in a student's file (the layer: its class)
NAMES = {"cs231n": ("conv_forward_naive", "conv_backward_naive"), "torch": ("conv2d_forward", "conv2d_backward")}


def subject(name: str, convention: str) -> Subject:
    module = load(name)
    if convention == "layer":
        return Subject(layer=module.Conv2D)
    forward, backward = (getattr(module, function) for function in NAMES[convention])
    return Subject(forward=forward, backward=backward)


def trace(name: str, convention: str, case: Case) -> dict[str, Any]:
    code = subject(name, convention)
    if convention == "layer":
        return trace_code(code.layer, convention="layer", case=case)
    return trace_code(code.forward, code.backward, convention=convention, case=case)


def bug_line(name: str) -> int:
    """The line of tests/student_code/<name>.py that ends with ``# BUG`` (exactly one)."""
    lines = (STUDENT_CODE / f"{name}.py").read_text(encoding="utf-8").splitlines()
    marked = [k for k, line in enumerate(lines, 1) if line.rstrip().endswith("# BUG")]
    assert len(marked) == 1, f"{name}.py marks {len(marked)} lines # BUG, not one"
    return marked[0]


def line_of(doc: dict[str, Any]) -> int | None:
    return doc["divergence"]["line"] if doc["divergence"] else None


# -- correct code, on drawn cases ---------------------------------------------------------

CORRECT = {
    "cs231n_seven_loops": "cs231n",
    "cs231n_im2col": "cs231n",
    "cs231n_einsum": "cs231n",
    "torch_style": "torch",
    "layer_nhwc": "layer",
}


def layer_cases(**limits):
    """Specs the layer convention takes: one stride, any padding, no dilation or groups."""
    cases = conv_cases(**limits, max_dilation=1).filter(lambda c: c.groups == 1 and len(set(c.spec.stride)) == 1)
    return cases.map(lambda case: replace(case, bias=True))


# small: each example traces in well under a second (the seven loops' basis runs are the most)
CASES = {
    "cs231n": cs231n_cases(max_n=2, max_cf=2, max_hw=5, max_k=3, max_pad=1),
    "torch": torch_style_cases(max_n=2, max_cf=3, max_hw=5, max_k=3, max_stride=2, max_dilation=2),
    "layer": layer_cases(max_n=2, max_cf=2, max_hw=5, max_k=3, max_stride=2),
}
ACTIVATIONS = {"cs231n": ("identity",), "torch": ("identity",), "layer": ("identity", "relu", "tanh")}


def as_case(drawn, activation: str) -> Case:
    """A drawn spec as the grader's Case: distinct non-zero small integers, seeded."""
    return Case.of_spec(drawn.spec, activation, seed=drawn.seed)


def assert_stage_shows_the_results(doc: dict[str, Any], name: str, convention: str, case: Case) -> None:
    """Each output's array on the stage (the trace's ``tensors``, replayed from the
    recorded writes) is what the code returns when it runs unrecorded."""
    returned = get_convention(convention).run(subject(name, convention), case)
    for output, value in returned.items():
        assert isinstance(value, np.ndarray), f"{name}: {output} is {value} on {case.describe()}"
        shown = doc["tensors"][output]
        assert shown["shape"] == list(value.shape), f"{name} {output}: {shown['shape']} on the stage, {value.shape}"
        stage = np.array(shown["data"]).reshape(value.shape)
        assert np.array_equal(stage, value), f"{name} {output} on {case.describe()}: the stage {stage} != {value}"


@pytest.mark.parametrize("name", sorted(CORRECT))
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_correct_code_makes_no_wrong_write(name, data):
    convention = CORRECT[name]
    case = as_case(data.draw(CASES[convention]), data.draw(st.sampled_from(ACTIVATIONS[convention])))
    doc = trace(name, convention, case)
    assert doc["divergence"] is None, f"{name} on {case.describe()}: {doc['divergence']}"
    assert doc["failures"] == {}, f"{name} on {case.describe()}: {doc['failures']}"
    assert set(doc["differences"]) == set(OUTPUTS), f"{name}: {sorted(doc['differences'])}"
    for difference in doc["differences"].values():
        assert difference["match"], f"{name} on {case.describe()}: {difference['message']}"
    for pass_name, note in doc["recording"]["judged"].items():
        if pass_name == "backward" or case.activation == "identity":  # (another activation: the forward is not)
            # (a case past the judging budget is judged by its results, and says so with the numbers)
            over = re.match(r"not judged write by write: (\d+) cells written, (\d+) terms", note)
            if over:
                assert int(over[1]) * int(over[2]) > JUDGE_BUDGET, f"{name} {pass_name} on {case.describe()}: {note}"
                continue
            # (or past the terms it tells apart: one per dout cell, or per x and b cell)
            terms = re.match(r"not judged write by write: (\d+) terms to tell apart", note)
            if terms:
                x, _, b, dout = case.arrays
                assert int(terms[1]) == (dout.size if pass_name == "backward" else x.size + b.size) > MAX_BASIS, note
                continue
            assert note.startswith("judged write by write"), f"{name} {pass_name} on {case.describe()}: {note}"
    assert_stage_shows_the_results(doc, name, convention, case)


# -- buggy code, each on a case where its bug shows ------------------------------------

# the buggy file: (the correct file it was made from, a case where the bug shows)
BUGS = {
    "bug_kernel_3x3": ("cs231n_seven_loops", Case(n=1, cg=1, fg=1, h=3, w=3, kh=1, kw=1)),
    "bug_dw_row_off": ("cs231n_seven_loops", Case(n=1, cg=1, fg=1, h=5, w=3, kh=2, kw=2, stride=(2, 2))),
    "bug_bias_per_channel": ("cs231n_seven_loops", Case(n=1, cg=2, fg=1, h=3, w=3, kh=2, kw=2)),
    "bug_dx_width_stride": ("cs231n_einsum", Case(n=1, cg=1, fg=1, h=5, w=5, kh=2, kw=2, stride=(2, 2))),
    "bug_db_batch_axis": ("cs231n_einsum", Case(n=2, cg=1, fg=2, h=3, w=3, kh=2, kw=2)),
    "bug_col2im_transposed": ("cs231n_im2col", Case(n=1, cg=1, fg=1, h=3, w=3, kh=2, kw=2)),
    "bug_bias_last_axis": ("torch_style", Case(n=1, cg=1, fg=2, h=3, w=3, kh=2, kw=2)),
    "bug_dx_rotated_kernel": ("torch_style", Case(n=1, cg=1, fg=1, h=3, w=3, kh=2, kw=2)),
    "bug_hw_swapped": ("layer_nhwc", Case(n=1, cg=1, fg=1, h=3, w=3, kh=2, kw=2)),
    "bug_assign_dw_window": ("layer_nhwc", Case(n=1, cg=1, fg=1, h=3, w=3, kh=2, kw=2)),
    # a crop of the right shape at the wrong offset: judged where the crop is (dx_pad against dxp)
    "bug_crop_offset": ("torch_style", Case(n=1, cg=1, fg=1, h=3, w=3, kh=2, kw=2, padding=(1, 1, 0, 0))),
    # an output computed as a whole (db = dout_rows[…].sum(axis=1)): judged whole, where it is made
    "bug_db_first_image": ("cs231n_im2col", Case(n=2, cg=1, fg=1, h=3, w=3, kh=2, kw=2)),
    # a layer's out is its activation's copy of Z: Z's writes are judged against out
    "bug_layer_first_bias": ("layer_nhwc", Case(n=1, cg=1, fg=2, h=3, w=3, kh=2, kw=2)),
}
BUGGY = [pytest.param(name, where, id=name) for name, where in BUGS.items()]


@pytest.mark.parametrize(("name", "where"), BUGGY)
def test_a_bug_s_first_wrong_write_is_on_its_line(name, where):
    correct, case = where
    convention = CORRECT[correct]
    doc = trace(name, convention, case)
    assert doc["divergence"] is not None, f"{name}: no wrong write found ({doc['mistake']['wrong']})"
    assert line_of(doc) == bug_line(name), f"{name}: the trace names line {line_of(doc)}: {doc['divergence']['did']}"
    assert not doc["divergence"]["stopped"], f"{name}: the code raised ({doc['divergence']['did']})"
    assert not all(d["match"] for d in doc["differences"].values()), f"{name}: the bug does not show on this case"


@pytest.mark.parametrize("name", list(BUGS))
def test_the_correct_code_on_a_bug_s_case_makes_no_wrong_write(name):
    """The judging tells the two apart: what a bug's trace finds is the bug's, not the case's."""
    correct, case = BUGS[name]
    doc = trace(correct, CORRECT[correct], case)
    assert doc["divergence"] is None, f"{correct} on {name}'s case: {doc['divergence']}"
    assert all(d["match"] for d in doc["differences"].values()), f"{correct} on {name}'s case"


@pytest.mark.parametrize("name", list(BUGS))
def test_a_buggy_run_s_stage_shows_what_the_code_returns(name):
    correct, case = BUGS[name]
    convention = CORRECT[correct]
    assert_stage_shows_the_results(trace(name, convention, case), name, convention, case)


# writes made in ways other than a[idx] = v and in-place operators: each must reach the stage
OTHER_WRITES = ("forward_flat", "forward_put", "backward_einsum_out")  # out.flat[k] = v, np.put, einsum(out=)


@pytest.mark.parametrize("function", OTHER_WRITES)
def test_every_way_of_writing_an_output_reaches_the_stage(function):
    code = getattr(load("unrecorded_writes"), function)
    forward, backward = (code, None) if function.startswith("forward") else (None, code)
    case = Case(n=1, cg=1, fg=2, h=3, w=3, kh=2, kw=2)
    doc = trace_code(forward, backward, case=case)
    assert all(d["match"] for d in doc["differences"].values()), f"{function}: {doc['differences']}"
    returned = get_convention("cs231n").run(Subject(forward=forward, backward=backward), case)
    for output, value in returned.items():
        stage = np.array(doc["tensors"][output]["data"]).reshape(value.shape)
        assert np.array_equal(stage, value), (
            f"{function} {output}: the stage shows {stage.ravel()}, not {value.ravel()}"
        )


def test_writes_after_an_in_place_reshape_land_in_the_cells_they_name():
    """The recording keeps each array's geometry between its writes; ``out.shape = ...``
    changes it, and the writes after must still land where they do unrecorded."""
    forward = load("shape_in_place").conv_forward_naive
    case = Case(n=2, cg=2, fg=3, h=4, w=3, kh=2, kw=2, padding=(1,) * 4)
    doc = trace_code(forward, case=case)
    assert doc["divergence"] is None, doc["divergence"]
    returned = get_convention("cs231n").run(Subject(forward=forward), case)["out"]
    stage = np.array(doc["tensors"]["out"]["data"]).reshape(returned.shape)
    assert np.array_equal(stage, returned), f"the stage shows {stage.ravel()}, not {returned.ravel()}"


def test_numpy_functions_imported_by_name_are_recorded_in_each_module_loaded(tmp_path):
    """torch_style.py with ``from numpy import pad, zeros`` (on its import line, so every
    line keeps its number) traces as the file itself does; so does another copy loaded
    later under the same module name, which the recording must find anew."""
    case = Case(n=1, cg=2, fg=2, h=4, w=4, kh=2, kw=2, stride=(2, 1), padding=(1, 1, 1, 1))
    expected = trace("torch_style", "torch", case)["events"]
    source = (STUDENT_CODE / "torch_style.py").read_text(encoding="utf-8")
    by_name = source.replace("import numpy as np\n", "import numpy as np; from numpy import pad, zeros\n", 1)
    by_name = by_name.replace("np.pad(", "pad(").replace("np.zeros(", "zeros(")
    assert by_name.count("zeros(") == source.count("np.zeros(") > 0 and "np.pad(" not in by_name
    for copy in ("first.py", "second.py"):
        (tmp_path / copy).write_text(by_name, encoding="utf-8")
        module = load_as(tmp_path / copy, "student_code_numpy_by_name")
        doc = trace_code(module.conv2d_forward, module.conv2d_backward, convention="torch", case=case)
        assert [e["text"] for e in doc["events"]] == [e["text"] for e in expected], copy
        assert doc["events"] == expected, copy


# -- the catalogue's listings ------------------------------------------------------------


def layer_class(listing) -> type:
    """The listing's ``Conv2D`` in the layer convention's calling form (as the grader calls
    it: ``Cls(n_out, kernel_shape, stride=, pad=, activation=)``, ``parameters``,
    ``gradients``), its ``forward`` and ``backward`` the listing's own methods.

    (Not test_mistake_listings.layer_subject: trace_code reads the code's file from the
    class's first method, and that adapter's methods are in that test's file, so every
    write would be given one of its lines.)"""
    conv2d = listing.functions["forward"].__globals__["Conv2D"]

    class Layer(conv2d):
        forward = conv2d.forward  # (first: the class's code is the listing's)
        backward = conv2d.backward

        def __init__(self, n_out, kernel_shape, stride=1, pad=0, activation=None):
            self.args = stride, pad, activation

        @property
        def parameters(self):
            return {"W": self.W, "b": self.b.reshape(1, -1)}

        @parameters.setter
        def parameters(self, value):
            conv2d.__init__(self, value["W"], value["b"].reshape(-1), *self.args)

        @property
        def gradients(self):
            return {"W": self.dW, "b": self.db.reshape(1, -1)}

    return Layer


def trace_mistake(mistake) -> dict[str, Any]:
    listing = mistake_listing(mistake).mistaken
    if mistake.convention == "layer":
        return trace_code(layer_class(listing), convention="layer", case=mistake.setup, source=listing.lines)
    functions = listing.functions
    return trace_code(
        functions.get("forward"),
        functions.get("backward"),
        convention=mistake.convention,
        case=mistake.setup,
        source=listing.lines,
    )


@dataclass(frozen=True)
class Elsewhere:
    """A mistake whose code's trace names another line than the catalogue: ``line`` the
    trace's, ``why`` the reason, ``holds(doc)`` checks the reason on the trace."""

    line: int | None
    why: str
    holds: Callable[[dict[str, Any]], bool]


def _events_at(doc: dict[str, Any], line: int) -> list[dict[str, Any]]:
    return [e for e in doc["events"] if e["line"] == line]


ELSEWHERE = {
    "pad_hardcoded_1": Elsewhere(
        19,
        "the mistake is in xp, a scratch array no output is made of (not judged): the first wrong write is the "
        "first out write it spoils",
        lambda doc: any(w["tensor"] == "xp" for e in _events_at(doc, 12) for w in e["writes"]),
    ),
    "squeeze_one_image": Elsewhere(
        18,
        "the code raises on line 18 (the squeezed window), a line before the forward step the catalogue names",
        lambda doc: doc["divergence"]["stopped"] and "IndexError" in doc["divergence"]["did"],
    ),
    "dx_unfinished": Elsewhere(
        None,
        "the mistake leaves dx's write out: no write is wrong, dx is left zero (said in the differences)",
        lambda doc: doc["divergence"] is None and not doc["differences"]["dx"]["match"],
    ),
    "dw_unfinished": Elsewhere(
        41,
        "dw is returned as None: the divergence is that return (line 41), not the write left out",
        lambda doc: "dw" in doc["failures"] and "dw is None" in doc["divergence"]["did"],
    ),
    "symmetric_pad_from_4tuple": Elsewhere(
        28,
        "out's wrong shape is said at the first write into z, whose values out returns; the catalogue names the "
        "activation's line (29), its first step of another shape",
        lambda doc: (
            "out has the shape" in doc["divergence"]["did"] and doc["divergence"]["did"].startswith("line 28: z[")
        ),
    ),
    "rotated_kernel_ignores_stride": Elsewhere(
        60,
        "the catalogue names the line where the scatter was left out (52, a comment); the trace names the first "
        "write of the gather that adds a term the cell does not have",
        lambda doc: "is not in its sum" in doc["divergence"]["should"],
    ),
    "activation_derivative_skipped": Elsewhere(
        52,
        "dz (line 45) is an expression, not a write into a buffer: the first wrong write is the first dx write it "
        "spoils",
        lambda doc: not _events_at(doc, 45) and doc["divergence"]["phase"] == "backward",
    ),
    "activation_derivative_of_output": Elsewhere(
        52,
        "dz (line 45) is an expression, not a write into a buffer: the first wrong write is the first dx write it "
        "spoils",
        lambda doc: not _events_at(doc, 45) and doc["divergence"]["phase"] == "backward",
    ),
}


def test_every_exception_is_a_catalogued_mistake():
    assert set(ELSEWHERE) <= set(MISTAKES), sorted(set(ELSEWHERE) - set(MISTAKES))


@pytest.mark.parametrize("mistake", lab_mistakes(), ids=lambda m: m.id)
def test_the_trace_of_a_mistake_s_code_names_the_catalogue_s_line(mistake):
    catalogue = build_mistake_trace(mistake.setup_config(), mistake.id)["divergence"]["line"]
    doc = trace_mistake(mistake)
    if mistake.id not in ELSEWHERE:
        assert line_of(doc) == catalogue, f"{mistake.id}: the trace names {line_of(doc)}, the catalogue {catalogue}"
        return
    elsewhere = ELSEWHERE[mistake.id]
    assert line_of(doc) == elsewhere.line != catalogue, (
        f"{mistake.id}: the trace names {line_of(doc)}, the catalogue {catalogue}; listed as {elsewhere.line} "
        f"({elsewhere.why})"
    )
    assert elsewhere.holds(doc), f"{mistake.id}: the reason does not hold: {elsewhere.why}; {doc['divergence']}"


def test_a_pass_with_more_terms_than_the_recording_tells_apart_says_how_many():
    """Hypothesis found it: 432 dout cells (N 2, F 3, 8×9 out of a 1×1 kernel on 4×5
    padded by 2) is past MAX_BASIS; the backward is judged by its results and says so
    with its numbers, and the forward, 40 + 3 terms, is judged write by write."""
    case = Case(n=2, fg=3, h=4, w=5, kh=1, kw=1, padding=(2, 2, 2, 2))
    doc = trace("torch_style", "torch", case)
    judged = doc["recording"]["judged"]
    assert judged["backward"].startswith(
        f"not judged write by write: 432 terms to tell apart, more than the {MAX_BASIS}"
    )
    assert judged["forward"].startswith("judged write by write"), judged["forward"]
    assert doc["divergence"] is None and all(d["match"] for d in doc["differences"].values())


def test_a_copy_made_with_values_is_no_output_s_twin():
    """A 1×1 case where the padded input holds out's value by chance (found by hypothesis):
    out, made as a whole, is judged whole, not through the padded copy of x."""
    case = Case(n=1, cg=1, fg=1, h=1, w=1, kh=1, kw=1, seed=334725)
    doc = trace("cs231n_im2col", "cs231n", case)
    assert doc["divergence"] is None, doc["divergence"]
