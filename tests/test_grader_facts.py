"""The plain facts about a wrong output come before any catalogue guess, and a guess
that holds only on the counterexample is a look-alike, not a name."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from convcore.compat.cs231n import conv_backward_naive, conv_forward_naive
from convcore.grader.facts import facts
from convcore.grader.grading import grade
from convcore.grader.search import Grader
from convcore.mistakes import Case, Failure, Subject, get_convention, get_mistake, mistakes_for, outcome_equal

CASE = Case(n=1, cg=1, fg=2, h=3, w=4, kh=2, kw=2, stride=(1, 1), padding=(1, 1, 1, 1))


def truth(name: str, case: Case = CASE) -> np.ndarray:
    return get_convention("cs231n").expected(case)[name]


def test_none_and_zeros_are_said_as_they_are():
    assert facts("cs231n", CASE, "dx", Failure("returned None", "dx is None")) == [
        "dx is None: nothing was returned for it (is the function finished?)"
    ]
    assert facts("cs231n", CASE, "dw", np.zeros_like(truth("dw"))) == [
        "dw is all zeros (never written, or returned before it was filled?)"
    ]
    assert facts("cs231n", CASE, "dx", Failure("IndexError", "index 3 is out of bounds")) == []


def test_a_wrong_shape_names_the_rule_with_its_numbers():
    out = truth("out")  # (1, 2, 4, 5)
    said = facts("cs231n", CASE, "out", np.zeros((1, 2, 3, 4)) + 1)
    assert said[0] == f"out has shape (1, 2, 3, 4); it should be {out.shape}"
    assert said[-2:] == [
        "the output's rows: H_out = 1 + (H + 2·pad − HH) // stride = 1 + (3 + 2·1 − 2) // 1 = 4",
        "the output's columns: W_out = 1 + (W + 2·pad − WW) // stride = 1 + (4 + 2·1 − 2) // 1 = 5",
    ]
    columns_only = facts("cs231n", CASE, "out", np.ones((1, 2, 4, 3)))  # the rows are right: only W's rule
    assert columns_only[-1].startswith("the output's columns: W_out") and not any("rows" in f for f in columns_only)
    x_shaped = facts("cs231n", Case(n=1, cg=1, fg=1, h=3, w=4, kh=2, kw=2), "out", np.ones((1, 1, 3, 4)))
    assert "out has the input's shape, not the output's" in x_shaped
    swapped = facts("cs231n", CASE, "out", np.ones((1, 2, 5, 4)))
    assert "out's last two sizes are swapped (H and W?)" in swapped


def test_transposed_scaled_shifted_and_bias_free_outputs_are_recognised():
    square = Case(n=1, cg=1, fg=1, h=3, w=3, kh=2, kw=2)
    out = truth("out", square)
    assert facts("cs231n", square, "out", np.swapaxes(out, -1, -2)) == [
        "out is the right answer transposed: rows and columns (H and W) swapped"
    ]
    assert facts("cs231n", CASE, "dw", truth("dw") / 4) == [
        "dw is the right answer times 0.25 (divided by 4: averaged?)"
    ]
    assert facts("cs231n", CASE, "dx", truth("dx") + 2) == ["dx is the right answer plus the constant 2"]
    b = CASE.arrays.b
    assert facts("cs231n", CASE, "out", truth("out") - b[None, :, None, None]) == [
        "out is the right answer without the bias: b is never added"
    ]


def test_an_output_wrong_in_one_cell_gets_no_invented_fact():
    wrong = truth("dx").copy()
    wrong[0, 0, 1, 1] += 1
    assert facts("cs231n", CASE, "dx", wrong) == []
    one = Case(n=1, cg=1, fg=1, h=1, w=1, kh=1, kw=1)  # one number is any multiple of another
    assert facts("cs231n", one, "db", truth("db", one) * 3) == []


def unfinished_backward(dout, cache):
    x, w, b, _ = cache
    return np.zeros_like(x), np.zeros_like(w), dout.sum(axis=(0, 2, 3))


def test_zeros_are_a_fact_and_a_catalogue_look_alike_is_not_a_name():
    """dw returned as zeros equals pad_hardcoded_1 on the 1×1 case; the grader finds a
    case where they differ and says "looks like", naming nothing."""
    report = grade("cs231n", Subject(forward=conv_forward_naive, backward=unfinished_backward), target="t").data
    dw = report["outputs"]["dw"]
    assert dw["facts"] == ["dw is all zeros (never written, or returned before it was filled?)"]
    assert dw["likely_mistakes"] == []
    alike = {a["id"]: a for a in dw["look_alikes"]}
    assert "pad_hardcoded_1" in alike and alike["pad_hardcoded_1"]["differs_on"].startswith("N=")
    assert report["outputs"]["db"]["status"] == "pass"


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_a_scaled_backward_is_graded_with_its_fact(scale):
    def scaled(dout, cache):
        dx, dw, db = conv_backward_naive(dout, cache)
        return dx, dw * scale, db

    report = grade("cs231n", Subject(forward=conv_forward_naive, backward=scaled), target="t").data
    dw = report["outputs"]["dw"]
    assert dw["status"] == "fail" and any(f"dw is the right answer times {scale:g}" in f for f in dw["facts"]), dw[
        "facts"
    ]


@pytest.mark.parametrize("mistake_id", [m.id for c in ("cs231n", "torch", "layer") for m in mistakes_for(c)])
def test_each_mistake_is_named_alone_and_its_look_alikes_are_told_apart(mistake_id):
    """Graded, a mistake's own implementation is named as that mistake and no other on
    every output it breaks: each look-alike (equal on the counterexample) is listed
    with a case where it differs."""
    m = get_mistake(mistake_id)
    report = grade(m.convention, m.implementation, target=mistake_id).data
    for name, result in report["outputs"].items():
        if result["status"] != "fail":
            continue
        assert [n["id"] for n in result["likely_mistakes"]] == [mistake_id], (name, result["likely_mistakes"])
        for alike in result["look_alikes"]:
            assert alike["id"] != mistake_id and alike["differs_on"]


def test_the_two_crops_that_are_empty_at_padding_0_are_told_apart():
    """[pad:-pad] and [1:-1] both give an empty dx at padding 0: each is named, and the
    other is its look-alike."""
    for mistake_id, other in (("empty_crop", "crop_hardcoded_1"), ("crop_hardcoded_1", "empty_crop")):
        dx = grade("cs231n", get_mistake(mistake_id).implementation, target=mistake_id).data["outputs"]["dx"]
        assert [n["id"] for n in dx["likely_mistakes"]] == [mistake_id]
        assert other in {a["id"] for a in dx["look_alikes"]}


def unfinished_dx_and_dw(dout, cache):
    """A student's backward as handed in: db written, dx allocated and never filled, dw
    still the starter's None."""
    x, w, b, _ = cache
    dx, dw, db = None, None, None
    db = dout.sum(axis=(0, 2, 3))
    dx = np.zeros_like(x)
    return dx, dw, db


def test_an_unfinished_dx_and_dw_are_said_as_facts_first_then_named():
    """All zeros and None are the plain facts; the catalogue's dx_unfinished and
    dw_unfinished are named after them, since they agree on every case tried."""
    checked = grade("cs231n", Subject(forward=conv_forward_naive, backward=unfinished_dx_and_dw), target="t")
    outputs = checked.data["outputs"]
    dx, dw = outputs["dx"], outputs["dw"]
    assert dx["facts"] == ["dx is all zeros (never written, or returned before it was filled?)"]
    assert dw["facts"] == ["dw is None: nothing was returned for it (is the function finished?)"]
    assert [m["id"] for m in dx["likely_mistakes"]] == ["dx_unfinished"]
    assert [m["id"] for m in dw["likely_mistakes"]] == ["dw_unfinished"]
    assert outputs["db"]["status"] == "pass" and outputs["out"]["status"] == "pass"
    text = str(checked)
    assert text.index("dx is all zeros") < text.index("likely mistake: dx_unfinished")
    assert text.index("dw is None") < text.index("likely mistake: dw_unfinished")


def zeros_dx_without_padding(dout, cache):
    """dx right when there is padding, zeros without: unfinished only in one branch."""
    dx, dw, db = conv_backward_naive(dout, cache)
    return (dx if cache[3]["pad"] else np.zeros_like(dx)), dw, db


def none_dw_with_a_stride(dout, cache):
    """dw right with stride 1, None with a larger stride."""
    dx, dw, db = conv_backward_naive(dout, cache)
    return dx, (dw if cache[3]["stride"] == 1 else None), db


@pytest.mark.parametrize(
    "backward, output, fact, alike",
    [
        (zeros_dx_without_padding, "dx", "dx is all zeros", "dx_unfinished"),
        (none_dw_with_a_stride, "dw", "dw is None", "dw_unfinished"),
    ],
)
def test_zeros_or_none_on_some_cases_only_is_a_look_alike_not_a_name(backward, output, fact, alike):
    """The counterexample gives zeros (None) as the unfinished mistake does, but the
    grader finds a case where that mistake differs: the fact is said, the name is not."""
    result = grade("cs231n", Subject(forward=conv_forward_naive, backward=backward), target="t").data["outputs"][output]
    assert result["status"] == "fail" and result["facts"][0].startswith(fact)
    assert result["likely_mistakes"] == []
    differs_on = {a["id"]: a["differs_on"] for a in result["look_alikes"]}
    assert differs_on.get(alike), result["look_alikes"]


def test_the_two_stride_mistakes_are_told_apart():
    """A stride missing on the columns equals the index grid that ignores the stride on
    a one-row input; the grader names the right one and lists the other with a case
    where they differ (two windows or more in a column)."""
    outputs = grade("cs231n", get_mistake("column_stride_missing").implementation, target="t").data["outputs"]
    for output in ("out", "dx", "dw"):
        result = outputs[output]
        assert [n["id"] for n in result["likely_mistakes"]] == ["column_stride_missing"]
        differs_on = {a["id"]: a["differs_on"] for a in result["look_alikes"]}
        assert "stride_one_index_grid" in differs_on, result["look_alikes"]
        assert Case.from_dict(result["counterexample"]["case"]).h == 1  # one row: the two agree there
    rows = grade("cs231n", get_mistake("stride_one_index_grid").implementation, target="t").data["outputs"]["out"]
    assert [n["id"] for n in rows["likely_mistakes"]] == ["stride_one_index_grid"]


def forward_without_stride(x, w, b, conv_param):
    """A naive forward that never reads conv_param['stride']: every window one step apart.
    x: (N, C, H, W), w: (F, C, HH, WW), b: (F,) -> out (N, F, H_out, W_out) of stride 1."""
    pad = conv_param["pad"]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    hh, ww = w.shape[2:]
    out = np.zeros((x.shape[0], w.shape[0], xp.shape[2] - hh + 1, xp.shape[3] - ww + 1))
    for n in range(out.shape[0]):
        for f in range(out.shape[1]):
            for i in range(out.shape[2]):
                for j in range(out.shape[3]):
                    out[n, f, i, j] = np.sum(xp[n, :, i : i + hh, j : j + ww] * w[f]) + b[f]
    return out, (x, w, b, conv_param)


def test_an_output_the_same_for_every_stride_is_said_as_a_fact_before_any_name():
    """A forward that ignores the stride gives the same out for the counterexample's stride
    and another: the grader runs it again with that stride and says so, first."""
    checked = grade("cs231n", Subject(forward=forward_without_stride), target="t")
    out = checked.data["outputs"]["out"]
    case = Case.from_dict(out["counterexample"]["case"])
    other = 1 if case.stride[0] != 1 else 2
    again = replace(case, stride=(other, other))
    # the truth: the right outputs differ between the two strides, this code's do not
    assert truth("out", case).shape != truth("out", again).shape
    assert np.array_equal(
        forward_without_stride(*case.arrays[:3], {"stride": other, "pad": case.padding[0]})[0],
        np.asarray(out["counterexample"]["got"]),
    )
    said = (
        f"out is identical for stride {case.stride[0]} and stride {other} (the right out differs between them: "
        f"shape {truth('out', case).shape} and {truth('out', again).shape}): is the stride used at all?"
    )
    assert said in out["facts"]
    assert out["likely_mistakes"] == []  # (the catalogue's stride mistakes size out by the stride)
    text = str(checked)
    assert "fact: " + said in text
    assert all(text.index(said) < text.index(w) for w in ("likely mistake:", "looks like") if w in text)


@pytest.mark.parametrize("mistake_id", ["stride_one_index_grid", "column_stride_missing"])
def test_code_that_uses_the_stride_wrongly_is_not_said_to_ignore_it(mistake_id):
    """These two size the output by the stride: their outputs differ between strides."""
    report = grade("cs231n", get_mistake(mistake_id).implementation, target="t").data
    said = [f for o in report["outputs"].values() for f in o.get("facts", [])]
    assert not any("is identical for stride" in f for f in said), said


def one_row_cases_only(monkeypatch):
    """The grader tries only outputs of one row (H = 1, KH = 1, no padding), where a stride
    missing on the columns and an index grid that ignores the stride give the same results."""
    original = Grader.search_cases

    def one_row(self: Grader) -> list[Case]:
        return [c for c in (replace(c, h=1, kh=1, padding=(0,) * 4) for c in original(self)) if c.valid]

    monkeypatch.setattr(Grader, "search_cases", one_row)


def test_look_alikes_the_tried_cases_do_not_separate_are_told_apart_by_a_case_searched_for(monkeypatch):
    one_row_cases_only(monkeypatch)
    named, other = get_mistake("column_stride_missing"), get_mistake("stride_one_index_grid")
    out = grade("cs231n", named.implementation, target="t").data["outputs"]["out"]
    assert out["status"] == "fail" and Case.from_dict(out["counterexample"]["case"]).h == 1
    assert [m["id"] for m in out["likely_mistakes"]] == ["column_stride_missing"]
    alike = {a["id"]: a for a in out["look_alikes"]}["stride_one_index_grid"]
    where = Case.from_dict(alike["differs_case"])
    assert where.spec.out_hw[0] > 1 and alike["differs_on"] == where.describe()  # not a case tried
    # the truth there, from the catalogue's own code: the two differ, the subject is the first
    there = named.results(where)["out"], other.results(where)["out"]
    assert not outcome_equal(*there)


def looks_like_a_stride_mistake_on_one_row(x, w, b, conv_param):
    """column_stride_missing's forward where out has one row, one more than it elsewhere."""
    out, cache = get_mistake("column_stride_missing").implementation.forward(x, w, b, conv_param)
    return (out if out.shape[2] == 1 else out + 1), cache


def test_code_equal_to_look_alikes_only_where_they_agree_is_named_neither(monkeypatch):
    one_row_cases_only(monkeypatch)
    checked = grade("cs231n", Subject(forward=looks_like_a_stride_mistake_on_one_row), target="t")
    out = checked.data["outputs"]["out"]
    assert out["likely_mistakes"] == []
    alike = {a["id"]: a for a in out["look_alikes"]}
    assert {"column_stride_missing", "stride_one_index_grid"} <= set(alike)
    for mistake_id in ("column_stride_missing", "stride_one_index_grid"):
        assert Case.from_dict(alike[mistake_id]["differs_case"]).spec.out_hw[0] > 1
        assert f"looks like {mistake_id} (" in str(checked)
