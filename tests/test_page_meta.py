"""GET /api/meta: what the page builds its controls from is convcore's registries, the
page's test fixture is exactly what the server publishes, and every option it
publishes is accepted by the trace API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from convcore.activations import ACTIVATIONS
from convcore.fill import FILLS
from convcore.trace import build_trace
from convcore.trace.config import CHOICES, DEFAULTS
from convcore.trace.views import get_view, view_names
from convscope.app import create_app
from convscope.settings import Settings

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "page" / "meta.json"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings()))


@pytest.fixture(scope="module")
def meta(client):
    r = client.get("/api/meta")
    assert r.status_code == 200
    return r.json()


def test_the_page_fixture_is_what_the_server_publishes(meta):
    assert json.loads(FIXTURE.read_text(encoding="utf-8")) == meta, (
        "re-run tests/fixtures/make_trace_fixtures.py: the page's unit tests read a stale /api/meta"
    )


def test_meta_lists_come_from_the_registries(meta):
    assert [a["name"] for a in meta["activations"]] == list(ACTIVATIONS)
    assert [v["name"] for v in meta["views"]] == view_names()
    for v in meta["views"]:
        view = get_view(v["name"])
        assert v["granularities"] == list(view.granularities)
        assert v["loop_letters"] == {g: view.loop_letters(g) for g in view.granularities}
    assert {k: [c["name"] for c in cs] for k, cs in meta["choices"].items()} == {k: list(v) for k, v in CHOICES.items()}
    assert {f["name"]: f["params"] for f in meta["fills"]} == {k: dict(f.defaults) for k, f in FILLS.items()}
    assert meta["defaults"] == json.loads(json.dumps(DEFAULTS))
    assert meta["limits"] == Settings().limits()
    # the default setup is the engine's: the same document with and without it
    assert build_trace(meta["defaults"]) == build_trace({})


def test_every_published_option_is_accepted_by_the_trace_api(client, meta):
    small = {"x": {"fill": "randint", "shape": [1, 1, 4, 4], "seed": 0}, "w": {"fill": "ones", "shape": [1, 1, 2, 2]}}
    bodies = []
    for a in meta["activations"]:
        bodies.append({**small, "activation": a["name"]})
    for v in meta["views"]:
        for g in v["granularities"]:
            for backward in meta["choices"]["backward"]:
                letters = v["loop_letters"][g]
                body = {
                    **small,
                    "view": v["name"],
                    "granularity": g,
                    "backward": backward["name"],
                    "loop_order": letters[::-1],
                }
                if v["name"] == "direct" and backward["name"] == "separate":
                    body["dx_loop_order"] = letters  # the page offers loop orders: both are accepted
                bodies.append(body)
    for p in meta["choices"]["phases"]:
        bodies.append({**small, "phases": p["name"]})
    shapes = {"NCHW": [1, 1, 4, 4], "NHWC": [1, 4, 4, 1], "NCL": [1, 1, 4], "NLC": [1, 4, 1]}
    published = {layout["name"] for layout in meta["choices"]["layout"]}
    assert {name for names in meta["layer_layouts"].values() for name in names} == published
    for layer, layouts in meta["layer_layouts"].items():
        assert layer in {c["name"] for c in meta["choices"]["layer"]}
        for layout in layouts:
            bodies.append({"layer": layer, "layout": layout, "x": {"fill": "ones", "shape": shapes[layout]}})
    values = {"int": 1, "pair": [1, 0], "four": [1, 0, 0, 1], "same": "same", "valid": "valid", "causal": "causal"}
    for form in meta["padding_forms"]:
        bodies.append({**small, "padding": values[form["name"]]})
    for layer, forms in meta["layer_padding_forms"].items():
        assert layer in {c["name"] for c in meta["choices"]["layer"]}
        for form in forms:
            bodies.append({"layer": layer, "padding": values[form["name"]]})
    for f in meta["fills"]:
        for name in ("x", "dout"):
            fill = {"fill": f["name"], **f["params"]}
            if name == "x":
                fill["shape"] = [1, 1, 4, 4]
            bodies.append({**small, name: fill})
    for name, fill in meta["default_fills"].items():
        body = dict(small)
        body[name] = {**fill, "shape": [1]} if name == "b" else fill
        bodies.append(body)
    for body in bodies:
        r = client.post("/api/trace", json=body)
        assert r.status_code == 200, (body, r.text[:300])
