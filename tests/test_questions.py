"""Predict, then reveal: the questions a step answers (``convcore.trace.questions``) and
``POST /api/questions`` (issue 25's first part).

Every answer is checked against what the trace's own questions module does not read:
a written cell's value against the replay of every event's deltas up to the step, the
read and written cells against NumPy indexing of the boxes, out's shape against PyTorch's
conv2d, "does it change anything" against the replayed tensors before and after; the
judging of a number against the trace's six significant digits.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import conv_cases, examples, small_ints
from test_browser_helpers import replay

from convcore.trace import build_trace
from convcore.trace.questions import KINDS, MAX_CLICK_CELLS, accepted, judge, step_questions
from convscope.traces.presets import PRESETS


def _box_cells(box: dict, shape: list[int]) -> set[tuple[int, ...]]:
    """The cells of a box, by NumPy's indexing of an index grid."""
    grid = np.indices(shape).reshape(len(shape), -1).T.reshape(*shape, len(shape))
    picked = grid[tuple(slice(a, b, s) for a, b, s in zip(box["start"], box["stop"], box["step"]))]
    return {tuple(int(v) for v in c) for c in picked.reshape(-1, len(shape))}


def _config(case, activation: str, layout: str) -> dict:
    spec = case.spec
    config = {
        **small_ints(list(case.x_shape), list(case.w_shape), list(spec.out_shape), case.seed % 2**31),
        **case.kwargs(),
        "activation": activation,
    }
    if not case.bias:
        config["b"] = None
    if layout == "NHWC":
        if case.groups != 1 or len(set(spec.stride)) != 1:
            return {}
        n, c, h, w = case.x_shape
        f, cg, kh, kw = case.w_shape
        _, _, ho, wo = spec.out_shape
        config["x"]["shape"], config["w"]["shape"] = [n, h, w, c], [kh, kw, cg, f]
        config["dout"]["shape"] = [n, ho, wo, f]
        config["layout"] = "NHWC"
    return config


def check_questions(doc: dict, step: int) -> None:
    """Each question of ``step`` answers as the trace does (module notes)."""
    event = doc["events"][step]
    shapes = {k: v["shape"] for k, v in doc["tensors"].items()}
    for alias, name in doc["aliases"].items():
        shapes.setdefault(alias, shapes[name])
    (after, _), (before, _) = replay(doc, step), replay(doc, step - 1)
    asked = step_questions(doc, step)
    kinds = [q["kind"] for q in asked]
    assert set(kinds) <= set(KINDS)
    for q in asked:
        assert q["prompt"] and (q["kind"] == "shape" or q["explanation"].endswith(event["text"])), q
        assert judge(q, q["answer"] if q["kind"] != "reads" else q["answer"]["cells"]), q
    written = {(w["tensor"], c) for w in event["writes"] for c in _box_cells(w, shapes[w["tensor"]])}
    values = [q for q in asked if q["kind"] == "value"]
    assert [q["cell"]["tensor"] for q in values] == [w["tensor"] for w in event["writes"]]
    for q in values:
        tensor, index = q["cell"]["tensor"], tuple(q["cell"]["index"])
        assert (tensor, index) in written
        name = doc["aliases"].get(tensor, tensor)
        assert math.isclose(q["answer"], after[name][index], rel_tol=1e-12, abs_tol=1e-12), (q, after[name][index])
    writes = [q for q in asked if q["kind"] == "writes"]
    assert len(writes) == (len(written) <= MAX_CLICK_CELLS)  # (more is no question to click)
    for q in writes:
        assert {(c["tensor"], tuple(c["index"])) for c in q["answer"]} == written
        assert len(q["answer"]) == len(written)
    reads = [q for q in asked if q["kind"] == "reads"]
    boxes = [_box_cells(r, shapes[r["tensor"]]) for r in event["reads"]]
    assert len(reads) == bool(boxes and len(max(boxes, key=len)) <= MAX_CLICK_CELLS)
    for q in reads:
        assert {tuple(c) for c in q["answer"]["cells"]} == max(boxes, key=len)
        assert q["answer"]["tensor"] in {r["tensor"] for r in event["reads"]}
    forward = next((p for p in doc["phases"] if p["name"] == "forward" and p["stop"] > p["start"]), None)
    shape_asked = [q for q in asked if q["kind"] == "shape"]
    assert bool(shape_asked) == (forward is not None and step == forward["start"])
    changes = [q for q in asked if q["kind"] == "changes"]
    assert bool(changes) == (event["phase"] in ("activation", "activation grad"))
    for q in changes:
        moved = any(
            not np.array_equal(after[doc["aliases"].get(t, t)], before[doc["aliases"].get(t, t)]) for t, _ in written
        )
        assert q["answer"] == moved, q


def _torch_out_shape(doc: dict) -> list[int]:
    spec = doc["spec"]
    nhwc = spec["layout"] == "NHWC"
    x_shape = [spec["x_shape"][i] for i in ((0, 3, 1, 2) if nhwc else range(4))]
    w_shape = [spec["w_shape"][i] for i in ((3, 2, 0, 1) if nhwc else range(4))]
    top, bottom, left, right = spec["padding"]
    x = torch.nn.functional.pad(torch.zeros(x_shape, dtype=torch.float64), (left, right, top, bottom))
    out = torch.nn.functional.conv2d(
        x,
        torch.zeros(w_shape, dtype=torch.float64),
        stride=spec["stride"],
        dilation=spec["dilation"],
        groups=spec["groups"],
    )
    shape = list(out.shape)
    return [shape[0], shape[2], shape[3], shape[1]] if nhwc else shape


@settings(max_examples=examples(100), deadline=None)
@given(
    case=conv_cases(max_n=2, max_cf=3, max_hw=6, max_k=3),
    activation=st.sampled_from(["identity", "relu", "tanh"]),
    layout=st.sampled_from(["NCHW", "NHWC"]),
    data=st.data(),
)
def test_every_questions_answer_is_the_traces(case, activation, layout, data):
    config = _config(case, activation, layout)
    if not config:
        return
    doc = build_trace(config)
    step = data.draw(st.integers(0, doc["total_events"] - 1), label="step")
    check_questions(doc, step)
    forward = next(p for p in doc["phases"] if p["name"] == "forward")
    (shape,) = [q for q in step_questions(doc, forward["start"]) if q["kind"] == "shape"]
    assert shape["answer"] == _torch_out_shape(doc) == doc["tensors"]["out"]["shape"]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_step_of_every_lesson(name):
    doc = build_trace(PRESETS[name].config)
    for step in range(doc["total_events"]):
        check_questions(doc, step)


def test_a_step_that_reads_more_cells_than_a_student_clicks_asks_no_reads_question():
    # CS231n's padding step copies the whole 3×5×5 input in one step
    doc = build_trace(PRESETS["cs231n"].config)
    big = [
        i
        for i, e in enumerate(doc["events"])
        if any(
            math.prod(len(range(*t)) for t in zip(r["start"], r["stop"], r["step"])) > MAX_CLICK_CELLS
            for r in e["reads"]
        )
    ]
    assert big
    for step in big:
        assert "reads" not in [q["kind"] for q in step_questions(doc, step)]


def test_a_dead_relu_step_changes_nothing_and_says_so():
    doc = build_trace(dict(PRESETS["cs231n"].config, activation="relu"))
    answers = {}
    for p in doc["phases"]:
        if p["name"] in ("activation", "activation grad"):
            for step in range(p["start"], p["stop"]):
                (q,) = [q for q in step_questions(doc, step) if q["kind"] == "changes"]
                answers[step] = q["answer"]
                if not q["answer"]:
                    assert "nothing changes" in q["explanation"], q
    assert set(answers.values()) == {True, False}, answers  # the lesson has both kinds of step


def test_the_shape_rule_is_explained_with_the_specs_numbers():
    doc = build_trace(PRESETS["cs231n"].config)  # x 5×5, k 3, stride 2, pad 1
    (q,) = [q for q in step_questions(doc, 1) if q["kind"] == "shape"]
    assert q["answer"] == [1, 2, 3, 3]
    assert "Ho = ⌊(5 + 1 + 1 − 1·(3 − 1) − 1) / 2⌋ + 1 = 3 rows" in q["explanation"], q["explanation"]


def _value(answer: float) -> dict:
    return {"kind": "value", "answer": answer, "accept": list(accepted(answer))}


def test_a_number_is_judged_to_six_significant_digits():
    q = _value(5.525781709334531)
    assert judge(q, 5.525781709334531) and judge(q, 5.52578) and judge(q, "5.525782")
    assert not judge(q, 5.5258) and not judge(q, 5.52577) and not judge(q, 5.53)
    assert not judge(q, float("nan")) and not judge(q, "five") and not judge(q, True)
    small = _value(-0.000123456789)
    assert judge(small, -0.000123457) and not judge(small, -0.00012346)
    zero = _value(0.0)
    assert judge(zero, 0) and judge(zero, -0.0) and not judge(zero, 0.001)
    big = _value(1234567.0)
    assert judge(big, 1234570) and not judge(big, 1234600)


def test_sets_shapes_and_yes_or_no_are_judged_whole():
    reads = {"kind": "reads", "answer": {"tensor": "xp", "cells": [[0, 0, 0, 0], [0, 0, 0, 1]]}}
    assert judge(reads, [[0, 0, 0, 1], [0, 0, 0, 0]]) and not judge(reads, [[0, 0, 0, 0]])
    assert not judge(reads, "everything")
    writes = {"kind": "writes", "answer": [{"tensor": "z", "index": [0, 0, 0, 0]}]}
    assert judge(writes, [{"tensor": "z", "index": [0, 0, 0, 0]}])
    assert not judge(writes, [{"tensor": "out", "index": [0, 0, 0, 0]}])
    shape = {"kind": "shape", "answer": [1, 2, 3, 3]}
    assert judge(shape, [1, 2, 3, 3]) and not judge(shape, [1, 2, 3]) and not judge(shape, None)
    changes = {"kind": "changes", "answer": False}
    assert judge(changes, False) and not judge(changes, True) and not judge(changes, 0)


def test_a_step_the_trace_lacks_is_an_index_error_naming_the_range():
    doc = build_trace(PRESETS["d2l"].config)
    last = doc["total_events"] - 1
    with pytest.raises(IndexError, match=f"step {last + 1}: this trace has steps 0 to {last}"):
        step_questions(doc, last + 1)


# -- the API --------------------------------------------------------------------------


def test_the_api_serves_the_questions_of_a_step(api_client):
    config = PRESETS["cs231n"].config
    r = api_client.post("/api/questions", json={"config": config, "step": 20})
    assert r.status_code == 200, r.text
    served = r.json()
    assert served == step_questions(build_trace(config), 20)
    assert all({"kind", "prompt", "answer", "explanation"} <= set(q) for q in served)
    # a second asking is the document cache's (same answers)
    assert api_client.post("/api/questions", json={"config": config, "step": 20}).json() == served


def test_the_api_refuses_what_it_cannot_ask_naming_the_field_and_the_numbers(api_client):
    config = PRESETS["d2l"].config
    last = build_trace(config)["total_events"] - 1
    cases = [
        (
            {"config": config, "step": last + 1},
            422,
            ["body", "step"],
            f"step {last + 1}: this trace has steps 0 to {last}",
        ),
        ({"config": config, "step": -1}, 422, ["body", "step"], "greater than or equal to 0"),
        (
            {"config": {**config, "stride": 0}, "step": 0},
            422,
            ["body", "config", "stride"],
            "stride must be at least 1, got 0",
        ),
        (
            {
                "config": {"x": {"fill": "randint", "shape": [1, 1, 200, 200], "low": 0, "high": 1, "seed": 1}},
                "step": 0,
            },
            413,
            ["body", "config", "x"],
            "x has 40000 elements",
        ),
        ({"step": 0}, 422, ["body", "config"], "Field required"),
        ({"config": config, "step": 0, "answer": 3}, 422, ["body", "answer"], "Extra inputs"),
    ]
    for body, status, loc, said in cases:
        r = api_client.post("/api/questions", json=body)
        assert r.status_code == status, (body, r.text)
        (detail,) = r.json()["detail"]
        assert detail["loc"] == loc and said in detail["msg"], (body, detail)
