"""The code beside the step (schema 3, docs/trace-format.md): which listing a trace's
header carries (the config's ``code``, "auto" by the lesson's convention), the events'
``line``, ``lines`` and ``scalars``, and a named convention that cannot say the
setting refused with field ``code`` (a 422 from the service)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

import convcore.trace.code as trace_code
from convcore.trace import SCHEMA, build_trace, trace_header
from convcore.trace.config import CHOICES, TraceConfigError, resolve_config
from convscope.app import create_app
from convscope.settings import Settings

NCHW = {"x": {"fill": "randint", "shape": [1, 2, 5, 5], "seed": 0}, "w": {"fill": "randint", "shape": [2, 2, 3, 3]}}


@pytest.mark.parametrize(
    ("settings", "convention"),
    [
        ({}, "cs231n"),
        ({"padding": 1, "stride": 2}, "cs231n"),
        ({"granularity": "mac", "backward": "separate"}, "cs231n"),
        ({"dilation": 2}, "torch"),
        ({"groups": 2, "w": {"fill": "randint", "shape": [2, 1, 3, 3]}}, "torch"),
        ({"stride": [2, 1]}, "torch"),
        ({"padding": [1, 0]}, "torch"),
        ({"padding": [1, 0, 1, 1]}, "torch"),  # padding (top, bottom, left, right)
        ({"padding": "same", "w": {"fill": "randint", "shape": [2, 2, 2, 2]}}, "torch"),
        ({"view": "transposed"}, "cs231n"),
        ({"view": "im2col", "padding": 1}, "cs231n"),
        ({"view": "transposed", "dilation": 2}, "torch"),
        ({"view": "im2col", "groups": 2, "w": {"fill": "randint", "shape": [2, 1, 3, 3]}}, "torch"),
        ({"layout": "NHWC", "x": None, "w": None, "view": "im2col"}, "layer"),
        ({"layout": "NHWC", "x": None, "w": None, "view": "transposed", "stride": [2, 1]}, "layer"),
        ({"layout": "NHWC", "x": None, "w": None, "padding": "same"}, "layer"),  # any padding
        ({"layout": "NHWC", "x": None, "w": None, "stride": [2, 1], "granularity": "mac"}, "layer"),
        ({"layout": "NHWC", "x": None, "w": None, "dilation": 2}, "torch"),  # the layer has none
    ],
)
def test_auto_picks_the_lessons_convention(settings, convention):
    header = trace_header({**NCHW, **settings})
    assert resolve_config({**NCHW, **settings}).code == convention
    if convention is None:
        assert header["code"] is None
    else:
        assert header["code"]["convention"] == convention
        assert header["code"]["lines"][0] == "import numpy as np"
        assert header["code"]["name"].startswith(
            {"cs231n": "cs231n/", "torch": "torch_style/", "layer": "layer/"}[convention]
        )


def test_the_schema_is_3_and_code_is_a_config_choice():
    assert SCHEMA == "convscope.trace/3"
    assert CHOICES["code"] == ("auto", "cs231n", "torch", "layer")


def test_a_named_convention_switches_the_listing():
    cs231n = build_trace({**NCHW, "padding": 1})
    torch = build_trace({**NCHW, "padding": 1, "code": "torch"})
    assert (cs231n["code"]["convention"], torch["code"]["convention"]) == ("cs231n", "torch")
    assert [e["phase"] for e in cs231n["events"]] == [e["phase"] for e in torch["events"]]
    for doc in (cs231n, torch):
        for event in doc["events"]:  # each line writes what the event writes
            for line, write in zip(event["lines"], event["writes"]):
                written = doc["code"]["lines"][line - 1].strip()
                assert written.startswith(write["tensor"] if write["tensor"] != "dx" else ("dx", "dxp")), written


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"code": "cs231n", "dilation": 2}, ["code 'cs231n'", "dilation [2, 2]"]),
        ({"code": "cs231n", "stride": [1, 2]}, ["stride [1, 2]", "per axis"]),
        ({"code": "cs231n", "padding": [1, 0, 1, 1]}, ["padding [1, 0, 1, 1]", "per side"]),
        ({"code": "layer", "groups": 2, "w": {"fill": "ones", "shape": [2, 1, 3, 3]}}, ["layer", "groups 2"]),
        ({"code": "fortran"}, ["'auto', 'cs231n', 'torch', 'layer'", "fortran"]),
    ],
)
def test_a_convention_that_cannot_say_the_setting_is_refused(settings, words):
    with pytest.raises(TraceConfigError) as caught:
        resolve_config({**NCHW, **settings})
    assert caught.value.field == "code"
    for word in words:
        assert word in str(caught.value)


def test_events_without_a_line_and_a_trace_without_code():
    relu = build_trace({**NCHW, "activation": "relu", "b": [1, 0]})
    lines = {e["phase"]: (e["line"], e["lines"]) for e in relu["events"]}
    assert lines["activation"] == lines["activation grad"] == (None, [])  # the listings compute conv only
    assert lines["backward"][1] == [37, 38, 39]  # db, dw, dxp


def test_a_trace_without_code(monkeypatch):
    """A setting with no listing (none today: every view has one in every convention, but a
    new layer may come without one) has code null and events without line keys."""
    monkeypatch.setattr(trace_code, "_find", lambda *args, **setting: (None, "no listing for this setting"))
    none = build_trace({**NCHW, "view": "im2col", "stride": [1, 2]})
    assert none["code"] is None and none["events"]
    assert not any({"line", "lines", "scalars"} & set(e) for e in none["events"])
    with pytest.raises(TraceConfigError, match="code 'torch' has no listing for this trace: no listing for this"):
        resolve_config({**NCHW, "code": "torch"})


def test_scalars_are_the_values_the_lines_read():
    doc = build_trace({**NCHW, "b": [1, -1], "granularity": "mac", "code": "cs231n", "dout": {"fill": "arange"}})
    forward = [e for e in doc["events"] if e["phase"] == "forward"]
    assert [e["scalars"]["bias"] for e in forward[:19]] == [1] + [0] * 17 + [1]  # b[f] at c = k = l = 0
    dout = doc["tensors"]["dout"]["data"]
    for event in (e for e in doc["events"] if e["phase"] == "backward"):
        n, f, i, j = (event["loop"][k] for k in "nfij")
        assert event["scalars"] == {"g": dout[((n * 2 + f) * 3 + i) * 3 + j]}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings()))


def test_the_service_refuses_with_field_code(client):
    r = client.post(
        "/api/trace", json={**NCHW, "w": {"fill": "ones", "shape": [2, 1, 3, 3]}, "code": "cs231n", "groups": 2}
    )
    assert r.status_code == 422, r.text
    (detail,) = r.json()["detail"]
    assert detail["loc"] == ["body", "code"] and "groups 2" in detail["msg"]
    r = client.post("/api/trace", json={**NCHW, "code": "torch", "dilation": 2})
    assert r.status_code == 200 and r.json()["code"]["convention"] == "torch"
    meta = client.get("/api/meta").json()
    assert [c["name"] for c in meta["choices"]["code"]] == ["auto", "cs231n", "torch", "layer"]
