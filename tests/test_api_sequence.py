"""Conv1d through the service (issue 24): /api/trace, its stream, /api/conv, the gradient
badge, compare and the predict questions take ``"layer": "conv1d"`` in NCL and NLC, with
PyTorch's numbers (``convcore.conv1d_forward`` / ``conv1d_backward``, themselves held
to ``F.conv1d`` by tests/test_conv1d_oracle.py); what the layer cannot take is a 422
naming the field and the numbers; a sequence too long for the limits is refused before
any work, as an image is."""

from __future__ import annotations

import json

import numpy as np
import pytest

from convcore import conv1d_backward, conv1d_forward
from convcore.trace import build_trace
from convcore.trace.questions import step_questions

RNG = np.random.default_rng(24)
X = RNG.integers(-3, 4, size=(2, 4, 9)).astype(float)  # (N, C, L)
W = RNG.integers(-2, 3, size=(6, 2, 3)).astype(float)  # (F, C/groups, K), groups 2
B = np.array([1.0, -1.0, 0.5, 0.0, 2.0, -2.0])
ARGS = {"stride": 2, "padding": "causal", "dilation": 2, "groups": 2, "padding_mode": "replicate"}


def _body(layout: str, dout: np.ndarray, **more) -> dict:
    nlc = layout == "NLC"
    x, w, dy = (X.transpose(0, 2, 1), W.transpose(2, 1, 0), dout.transpose(0, 2, 1)) if nlc else (X, W, dout)
    body = {"layer": "conv1d", "layout": layout, "x": x.tolist(), "w": w.tolist(), "b": B.tolist(), **ARGS}
    return {**body, "dout": dy.tolist(), **more}


def _truth(dout: np.ndarray) -> dict[str, np.ndarray]:
    out = conv1d_forward(X, W, B, **ARGS)
    dx, dw, db = conv1d_backward(dout, X, W, B, **ARGS)
    return {"out": out, "dx": dx, "dw": dw, "db": db}


@pytest.mark.parametrize("layout", ["NCL", "NLC"])
def test_the_trace_and_the_results_are_pytorchs_in_the_requests_layout(api_client, layout):
    out_shape = conv1d_forward(X, W, B, **ARGS).shape
    dout = RNG.normal(size=out_shape)
    truth = _truth(dout)
    nlc = layout == "NLC"
    shown = {  # the truth in the request's layout
        "out": truth["out"].transpose(0, 2, 1) if nlc else truth["out"],
        "dx": truth["dx"].transpose(0, 2, 1) if nlc else truth["dx"],
        "dw": truth["dw"].transpose(2, 1, 0) if nlc else truth["dw"],
        "db": truth["db"],
    }
    r = api_client.post("/api/trace", json=_body(layout, dout))
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["spec"]["layer"] == "conv1d" and doc["spec"]["causal"] is True and doc["spec"]["padding"] == [4, 0]
    for name, expected in shown.items():
        t = doc["tensors"][name]
        assert t["shape"] == list(expected.shape)
        np.testing.assert_allclose(np.reshape(t["data"], t["shape"]), expected, rtol=1e-12, atol=1e-12)
    assert doc["check"]["max_rel_error"] < 1e-12  # the badge: the gradients agree with the forward pass
    conv = api_client.post("/api/conv", json=_body(layout, dout)).json()
    assert conv["layout"] == layout and conv["spec"]["x_shape"] == list(np.shape(_body(layout, dout)["x"]))
    for name, expected in shown.items():
        np.testing.assert_allclose(conv[name], expected, rtol=1e-12, atol=1e-12)


def test_the_stream_sends_the_same_trace_line_by_line(api_client):
    dout = RNG.integers(-2, 3, size=conv1d_forward(X, W, B, **ARGS).shape).astype(float)
    body = _body("NCL", dout, granularity="mac")
    r = api_client.post("/api/trace/stream", json=body)
    assert r.status_code == 200, r.text
    lines = [json.loads(line) for line in r.text.splitlines()]
    header, events, end = lines[0], lines[1:-1], lines[-1]
    doc = build_trace(body)
    assert header["type"] == "header" and header["spec"] == doc["spec"]
    assert end == {"type": "end", "total_events": doc["total_events"]} and len(events) == doc["total_events"]
    assert [e["text"] for e in events] == [e["text"] for e in doc["events"]]


def test_compare_marks_the_cells_of_a_students_sequence_that_differ(api_client):
    dout = RNG.normal(size=conv1d_forward(X, W, B, **ARGS).shape)
    truth = _truth(dout)
    mine = {name: a.copy() for name, a in truth.items()}
    mine["dx"][1, 3, 7] += 1.0
    mine["dw"] = mine["dw"][:, :, ::-1].copy()  # the kernel reversed: a flipped gradient
    r = api_client.post("/api/trace", json=_body("NCL", dout, compare={k: v.tolist() for k, v in mine.items()}))
    assert r.status_code == 200, r.text
    comparison = r.json()["comparison"]
    assert comparison["out"]["match"] and comparison["db"]["match"]
    assert comparison["dx"]["differing_count"] == 1 and comparison["dx"]["differing"][0]["index"] == [1, 3, 7]
    assert comparison["dw"]["differing_count"] == int((~np.isclose(mine["dw"], truth["dw"])).sum()) > 0


def test_the_predict_questions_ask_a_sequences_output_length(api_client):
    config = {"layer": "conv1d", "x": [[[1, 2, 3, 4, 5, 6, 7]]], "w": [[[1, 0, -1]]], "stride": 2, "padding": 1}
    doc = build_trace(config)
    first = next(p["start"] for p in doc["phases"] if p["name"] == "forward")
    served = api_client.post("/api/questions", json={"config": config, "step": first}).json()
    assert served == step_questions(doc, first)
    (shape,) = [q for q in served if q["kind"] == "shape"]
    assert shape["answer"] == [1, 1, 4]
    assert "Lo = ⌊(7 + 1 + 1 − 1·(3 − 1) − 1) / 2⌋ + 1 = 4 positions" in shape["explanation"]


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"layout": "NHWC"}, "layout", "one of 'NCL', 'NLC' for layer 'conv1d'"),
        ({"x": [[[[1.0]]]]}, "x", "3 dimensions (N, C, L)"),
        ({"w": [[[1.0, 2.0]]]}, "groups", "groups=2 does not divide the filters F=1"),
        ({"stride": [2, 2]}, "stride", "1-tuple"),
        ({"padding": "full"}, "padding", "'causal'"),
        ({"padding": 9, "padding_mode": "reflect"}, "padding", "9"),
        ({"output_padding": 1}, "output_padding", "layer 'conv1d'"),
        ({"dout": [[[1.0]]]}, "dout", "(N, F, L_out)"),
        ({"loop_order": "nfij"}, "loop_order", "'nfj'"),
    ],
)
def test_what_the_layer_cannot_take_is_a_422_naming_the_field(api_client, change, field, words):
    body = {**_body("NCL", np.ones((2, 6, 3))), **change}
    r = api_client.post("/api/trace", json=body)
    assert r.status_code == 422, r.text
    (detail,) = r.json()["detail"]
    assert detail["loc"] == ["body", field] and words in detail["msg"], detail


def test_a_sequence_too_long_for_the_limits_is_refused_before_any_work(api_client):
    limits = api_client.get("/api/health").json()["limits"]
    longest = limits["max_tensor_elements"]
    body = {"layer": "conv1d", "x": {"fill": "ones", "shape": [1, 1, longest + 1]}, "w": [[[1.0, 1.0]]]}
    r = api_client.post("/api/trace", json=body)
    assert r.status_code == 413, r.text
    (detail,) = r.json()["detail"]
    assert detail["loc"] == ["body", "x"] and f"{longest + 1} elements (shape [1, 1, {longest + 1}])" in detail["msg"]
    w = {"fill": "ones", "shape": [4, 1, 8]}
    many = {"layer": "conv1d", "x": {"fill": "ones", "shape": [1, 1, 1000]}, "w": w, "granularity": "mac"}
    r = api_client.post("/api/trace", json=many)
    assert r.status_code == 413, r.text  # the cost model's bound, before one step is made
    (detail,) = r.json()["detail"]
    assert str(limits["max_events"]) in detail["msg"], detail
