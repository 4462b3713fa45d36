"""Compare your numbers: a trace request carrying a student's out, dx, dw, db gets back,
per tensor, the cells that differ from the truth (torch's), with both values."""

from __future__ import annotations

import json

import numpy as np
import pytest
from oracle import torch_layer

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(12)
X = RNG.integers(-3, 4, size=(2, 2, 4, 5)).astype(float)
W = RNG.integers(-2, 3, size=(3, 2, 2, 3)).astype(float)
B = RNG.integers(-2, 3, size=3).astype(float)
CONFIG = {"x": X.tolist(), "w": W.tolist(), "b": B.tolist(), "stride": 2, "padding": 1}


def truth(dout: np.ndarray) -> dict[str, np.ndarray]:
    t = torch_layer(X, W, B, dout, stride=2, padding=1)
    return {"out": t.out, "dx": t.dx, "dw": t.dw, "db": t.db}


def test_the_comparison_marks_exactly_the_cells_that_differ(api_client):
    shape = (2, 3, 3, 3)  # (N, F, Ho, Wo) of this layer
    dout = RNG.normal(size=shape)
    true = truth(dout)
    mine = {name: a.copy() for name, a in true.items()}
    mine["dx"][1, 0, 2, 3] += 1.5
    mine["dx"][0, 1, 0, 0] -= 2.0
    mine["dw"] = mine["dw"][:, :, ::-1, ::-1].copy()  # dw rotated: many cells differ
    response = api_client.post(
        "/api/trace", json={**CONFIG, "dout": dout.tolist(), "compare": {k: v.tolist() for k, v in mine.items()}}
    )
    assert response.status_code == 200, response.text
    comparison = response.json()["comparison"]
    assert comparison["out"]["match"] and comparison["db"]["match"]
    dx = comparison["dx"]
    assert dx["kind"] == "wrong values" and dx["differing_count"] == 2
    assert [c["index"] for c in dx["differing"]] == [[0, 1, 0, 0], [1, 0, 2, 3]]  # row-major
    for cell in dx["differing"]:
        index = tuple(cell["index"])
        assert cell["expected"] == pytest.approx(true["dx"][index])
        assert cell["got"] == pytest.approx(mine["dx"][index])
        assert cell["flat"] == np.ravel_multi_index(index, X.shape)
    wrong = np.argwhere(~np.isclose(mine["dw"], true["dw"]))
    assert comparison["dw"]["differing_count"] == len(wrong) > 0


def test_a_wrong_shape_is_reported_not_refused(api_client):
    response = api_client.post("/api/trace", json={**CONFIG, "compare": {"db": [1, 2]}})
    assert response.status_code == 200, response.text
    comparison = response.json()["comparison"]
    assert comparison["db"]["kind"] == "wrong shape" and comparison["db"]["got_shape"] == [2]


@pytest.mark.parametrize("dx, shape", [([], [0]), ([[[]]], [1, 1, 0])])
def test_an_empty_result_is_compared_as_its_shape_not_refused(api_client, dx, shape):
    """A crop of [pad:-pad] at padding 0 gives an empty dx: the grader's link carries it,
    and the page must open and say so, not be refused into a blank page."""
    response = api_client.post("/api/trace", json={**CONFIG, "compare": {"dx": dx}})
    assert response.status_code == 200, response.text
    dx_c = response.json()["comparison"]["dx"]
    assert dx_c["kind"] == "wrong shape" and dx_c["got_shape"] == shape and dx_c["message"].startswith("dx has shape (")


@pytest.mark.parametrize(
    "dx, words",
    [
        ([[1, 2], [3]], "compare.dx[1] has 1 item but compare.dx[0] has 2"),
        ([[1, "two"]], "compare.dx[0][1] is 'two', not a number"),
        ([[1, None]], "compare.dx[0][1] is None, not a number"),
    ],
)
def test_typed_numbers_that_are_not_a_tensor_are_refused_naming_the_cell(api_client, dx, words):
    response = api_client.post("/api/trace", json={**CONFIG, "compare": {"dx": dx}})
    assert response.status_code == 422, response.text
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["body", "compare", "dx"] and words in detail["msg"], detail


def test_the_stream_header_carries_the_comparison(api_client):
    out = truth(np.ones((2, 3, 3, 3)))["out"]
    out[0, 0, 0, 0] += 1
    response = api_client.post("/api/trace/stream", json={**CONFIG, "compare": {"out": out.tolist()}})
    header = json.loads(response.text.splitlines()[0])
    assert header["comparison"]["out"]["differing_count"] == 1
    assert header["comparison"]["out"]["differing"][0]["index"] == [0, 0, 0, 0]


@pytest.mark.parametrize(
    "compare, loc, words",
    [
        ({"z": [1]}, ["body", "compare", "z"], "compare can hold out, dx, dw, db"),
        ([1, 2], ["body", "compare"], "must be an object"),
    ],
)
def test_a_bad_compare_is_a_422_naming_the_field(api_client, compare, loc, words):
    response = api_client.post("/api/trace", json={**CONFIG, "compare": compare})
    assert response.status_code == 422
    detail = response.json()["detail"][0]
    assert detail["loc"] == loc and words in detail["msg"]


def test_db_without_a_bias_says_why(api_client):
    config = {k: v for k, v in CONFIG.items() if k != "b"}
    response = api_client.post("/api/trace", json={**config, "compare": {"db": [0, 0, 0]}})
    assert response.status_code == 422 and "no bias" in response.json()["detail"][0]["msg"]


def test_no_compare_no_comparison(api_client):
    assert "comparison" not in api_client.post("/api/trace", json=CONFIG).json()


@pytest.mark.parametrize("mistake_id, output", [("assign_dw", "dw"), ("activation_derivative_skipped", "dx")])
def test_the_graders_page_link_is_a_trace_request_whose_comparison_agrees(api_client, mistake_id, output):
    """The config in a counterexample's link (NCHW or NHWC) posts as it is, and the
    service marks the same cells as the grader did."""
    import base64

    from convcore.grader import grade
    from convcore.mistakes import get_mistake

    m = get_mistake(mistake_id)
    ce = grade(m.convention, m.implementation, target=mistake_id, examples=20).data["outputs"][output]["counterexample"]
    encoded = ce["page"].split("c=", 1)[1]
    config = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    response = api_client.post("/api/trace", json=config)
    assert response.status_code == 200, response.text
    served = response.json()["comparison"][output]
    assert served["kind"] == "wrong values"
    assert served["differing"] == ce["comparison"]["differing"]
