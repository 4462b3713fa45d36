"""The mistakes lab over HTTP: GET /api/mistakes is the catalogue, a trace request naming
a mistake gets the mistake trace (document and stream), refusals name the field, and an
oversized mistake request is refused with 413 like any other trace."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import examples

from convcore.mistakes import MISTAKES, get_convention, lab_mistakes
from convcore.mistakes.lab import build_mistake_trace
from convcore.trace import replay
from convscope.settings import Settings

IDS = [m.id for m in lab_mistakes()]  # (GET /api/mistakes lists the lab's: Conv2d's)


@pytest.fixture
def catalogue(api_client):
    response = api_client.get("/api/mistakes")
    assert response.status_code == 200
    return response.json()["mistakes"]


def test_api_mistakes_lists_every_catalogue_entry_from_the_catalogue(catalogue):
    assert [entry["id"] for entry in catalogue] == IDS
    for entry in catalogue:
        m = MISTAKES[entry["id"]]
        assert (entry["title"], entry["wrong"], entry["should"], entry["source"], entry["convention"]) == (
            m.title,
            m.wrong,
            m.should,
            m.source,
            m.convention,
        )
        assert entry["convention_title"] == get_convention(m.convention).title
        assert entry["conditions"] == {name: {"words": c.words, "exact": c.exact} for name, c in m.conditions.items()}
        assert entry["setup"] == m.setup.to_dict()
        assert entry["request"] == {**m.setup_config(), "mistake": m.id}


@pytest.mark.parametrize("mistake_id", IDS)
def test_each_lesson_opens_with_one_request_and_diverges_where_the_catalogue_says(api_client, catalogue, mistake_id):
    entry = next(e for e in catalogue if e["id"] == mistake_id)
    response = api_client.post("/api/trace", json=entry["request"])
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["mistake"]["id"] == mistake_id and doc["check"] is None
    assert doc["first_divergence"] == entry["first_divergence"] is not None
    assert doc["divergence"]["phase"] == entry["divergence_phase"]
    assert sorted(doc["failures"]) == entry["failures"]
    expected = build_mistake_trace(MISTAKES[mistake_id].setup_config(), mistake_id)
    assert doc["events"] == json.loads(json.dumps(expected["events"]))
    state = replay(doc)
    for name, t in doc["tensors"].items():
        assert np.allclose(state[name], np.reshape(t["data"], t["shape"])), name


def test_the_stream_carries_the_same_mistake_trace(api_client):
    m = MISTAKES["rotated_kernel_ignores_stride"]
    body = {**m.setup_config(), "mistake": m.id}
    lines = [json.loads(line) for line in api_client.post("/api/trace/stream", json=body).text.splitlines()]
    doc = api_client.post("/api/trace", json=body).json()
    header = lines[0]
    assert header["type"] == "header" and header["first_divergence"] == doc["first_divergence"]
    assert header["truth"] == doc["truth"] and header["differences"] == doc["differences"]
    streamed = replay(lines)
    assert all(np.array_equal(streamed[k], v) for k, v in replay(doc).items())


def test_an_unknown_mistake_is_a_422_naming_the_field_and_the_ids(api_client):
    response = api_client.post("/api/trace", json={"mistake": "off_by_one"})
    assert response.status_code == 422
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["body", "mistake"]
    assert all(mistake_id in detail["msg"] for mistake_id in IDS) and "off_by_one" in detail["msg"]


@pytest.mark.parametrize(
    "change, field",
    [
        ({"dilation": 2}, "dilation"),
        ({"groups": 1, "view": "transposed"}, "view"),
        ({"loop_order": "fnij"}, "loop_order"),
    ],
)
def test_a_layer_the_mistakes_code_cannot_take_is_a_422_naming_the_field(api_client, change, field):
    m = MISTAKES["bias_not_added"]
    body = {**m.setup_config(), "dout": None, "x": {"fill": "ones", "shape": [1, 1, 3, 3]}, "mistake": m.id, **change}
    response = api_client.post("/api/trace", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["body", field]


def test_compare_and_mistake_together_are_refused(api_client):
    m = MISTAKES["assign_dx"]
    body = {**m.setup_config(), "mistake": m.id, "compare": {"db": [1.0]}}
    response = api_client.post("/api/trace", json=body)
    assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["body", "compare"]


def _layer(side: int, filters: int) -> dict:
    """A torch-convention layer: x (1, 1, side, side), w (filters, 1, 1, 1), a bias."""
    return {
        "x": {"fill": "randint", "shape": [1, 1, side, side], "seed": 1},
        "w": {"fill": "randint", "shape": [filters, 1, 1, 1], "seed": 2},
        "b": [1.0] * filters,
    }


@pytest.mark.parametrize("route", ["/api/trace", "/api/trace/stream"])
def test_an_oversized_mistake_request_gets_413_like_any_other(api_client, route):
    body = {
        "x": {"fill": "randint", "shape": [1, 8, 16, 16]},
        "w": {"fill": "randint", "shape": [16, 8, 3, 3]},
        "b": {"fill": "randint", "shape": [16]},
        "padding": 1,
    }  # every tensor within the limit, ~17 MB
    refusals = []
    for request in (body, {**body, "mistake": "db_averaged"}):
        response = api_client.post(route, json=request)
        assert response.status_code == 413, response.text
        refusals.append(response.json()["detail"][0]["msg"])
    assert all("the limit is" in msg for msg in refusals) and refusals[0].split(":")[0] == refusals[1].split(":")[0]


def test_the_mistake_cost_is_held_to_the_limits_where_the_plain_trace_fits():
    """A mistake trace costs more than the trace it replaces (the truth, the correct loops):
    with the work limit between the two, the plain trace passes and the mistake's is a 413."""
    from fastapi.testclient import TestClient

    from convcore.mistakes.lab_config import mistake_cost
    from convcore.trace import resolve_config
    from convcore.trace.cost import trace_cost
    from convscope.app import create_app

    body = _layer(20, 1)
    rc = resolve_config(body)
    plain, lab = trace_cost(rc), mistake_cost(rc, MISTAKES["db_averaged"])
    assert lab.work > plain.work and lab.bytes > plain.bytes
    settings = Settings(max_work=(plain.work + lab.work) // 2)
    with TestClient(create_app(settings, static_dir=None)) as client:
        assert client.post("/api/trace", json=body).status_code == 200
        refused = client.post("/api/trace", json={**body, "mistake": "db_averaged"})
    assert refused.status_code == 413
    assert "work" in refused.json()["detail"][0]["msg"]


def test_the_openapi_schema_names_the_mistake_field_and_the_route(api_client):
    schema = api_client.get("/openapi.json").json()
    assert schema["components"]["schemas"]["TraceConfig"]["properties"]["mistake"]["enum"] == IDS
    assert "/api/mistakes" in schema["paths"]
    document = schema["components"]["schemas"]["TraceDocument"]["properties"]
    assert {"mistake", "truth", "differences", "failures", "first_divergence", "divergence"} <= set(document)


@st.composite
def layers(draw):
    """A trace request with a mistake over a random small layer whose shapes fit (the
    geometry and the mistake's convention may still not: then a 422)."""
    groups = draw(st.integers(1, 2))
    cg, fg = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    body = {
        "mistake": draw(st.sampled_from(IDS)),
        "x": {
            "fill": "randint",
            "shape": [draw(st.integers(1, 2)), groups * cg, draw(st.integers(1, 6)), draw(st.integers(1, 6))],
            "low": -3,
            "high": 3,
            "seed": draw(st.integers(0, 99)),
        },
        "w": {
            "fill": "randint",
            "shape": [groups * fg, cg, draw(st.integers(1, 3)), draw(st.integers(1, 3))],
            "low": -2,
            "high": 2,
            "seed": 5,
        },
        "b": {"fill": "randint", "shape": [groups * fg], "low": -2, "high": 2, "seed": 6},
        "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 7},
        "groups": groups,
    }
    optional = {
        "stride": st.one_of(st.integers(1, 3), st.lists(st.integers(1, 3), min_size=2, max_size=2)),
        "padding": st.one_of(
            st.integers(0, 2), st.lists(st.integers(0, 2), min_size=4, max_size=4), st.sampled_from(["same", "valid"])
        ),
        "dilation": st.integers(1, 2),
        "activation": st.sampled_from(["identity", "relu", "tanh"]),
        "layout": st.sampled_from(["NCHW", "NHWC"]),
    }
    for key, values in optional.items():
        if draw(st.booleans()):
            body[key] = draw(values)
    if body.get("layout") == "NHWC":
        n, c, h, w = body["x"]["shape"]
        f, c_g, kh, kw = body["w"]["shape"]
        body["x"]["shape"], body["w"]["shape"] = [n, h, w, c], [kh, kw, c_g, f]
    return body


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(body=layers())
def test_any_layer_with_any_mistake_is_a_clear_4xx_or_a_trace_that_replays(api_client, body):
    """Random layers with every mistake: never a 500; a trace's replay rebuilds its tensors."""
    response = api_client.post("/api/trace", json=body)
    assert response.status_code in (200, 413, 422), response.text
    if response.status_code != 200:
        assert response.json()["detail"][0]["msg"]
        return
    doc = response.json()
    state = replay(doc)
    for name, t in doc["tensors"].items():
        assert np.allclose(state[name], np.reshape(t["data"], t["shape"])), name
    assert set(doc["failures"]) | set(doc["differences"]) == {"out", "dx", "dw", "db"}
