"""Arbitrary JSON values in every config key: a clear 4xx or a 200, never a 500.

Only ConvSpecError counts as bad input (the server maps nothing else to 422), so any
other exception convcore raises for a strange value shows up here as a 500.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from live_server import ONE_ADDRESS_CROWD
from strategies import examples

KEYS = [
    "x",
    "w",
    "b",
    "dout",
    "layout",
    "stride",
    "padding",
    "dilation",
    "groups",
    "activation",
    "view",
    "granularity",
    "loop_order",
    "dx_loop_order",
    "backward",
    "phases",
]
CONV_KEYS = KEYS[:10]

SIZES = st.integers(1, 4)
HUGE_INTS = st.sampled_from([0, -1, 2**31, 2**62, 2**63 - 1, 2**63, 2**64, -(2**63), 10**30, 10**400])
NUMBERS = st.one_of(st.integers(-5, 5), HUGE_INTS, st.floats(allow_nan=True, allow_infinity=True))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    NUMBERS,
    st.text(max_size=6),
    st.sampled_from(["same", "valid", "NHWC", "im2col", "transposed", "mac", "separate", "nfij", "relu"]),
)
FILLS = st.fixed_dictionaries(
    {"fill": st.sampled_from(["randint", "normal", "uniform", "arange", "linspace", "zeros", "ones", "constant"])},
    optional={
        "shape": st.one_of(st.lists(SIZES, min_size=0, max_size=6), st.lists(NUMBERS, max_size=4), SCALARS),
        "seed": st.one_of(st.integers(0, 2**32), HUGE_INTS, SCALARS),
        "low": NUMBERS,
        "high": NUMBERS,
        "mean": NUMBERS,
        "std": NUMBERS,
        "start": NUMBERS,
        "step": NUMBERS,
        "stop": NUMBERS,
        "value": NUMBERS,
    },
)


def _nested(depth: int, leaf):
    return (
        st.lists(leaf, min_size=1, max_size=3)
        if depth == 1
        else st.lists(_nested(depth - 1, leaf), min_size=1, max_size=3)
    )


TENSORS = st.one_of(
    FILLS,
    st.integers(1, 6).flatmap(lambda d: _nested(d, NUMBERS)),
    st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3), max_leaves=8),
)
VALUES = st.one_of(
    SCALARS, st.lists(NUMBERS, max_size=5), TENSORS, st.dictionaries(st.text(max_size=3), SCALARS, max_size=2)
)
GEOMETRY = st.one_of(
    HUGE_INTS, st.integers(1, 3), st.lists(st.one_of(HUGE_INTS, st.integers(0, 3)), min_size=2, max_size=4)
)
SMALL_TENSORS = st.one_of(
    st.none(), st.builds(lambda *s: {"fill": "ones", "shape": list(s)}, SIZES, SIZES, SIZES, SIZES)
)


def configs(keys: list[str]):
    """Bodies that set a few keys: geometry keys often huge, tensors often small and valid."""
    geometry = {"stride", "padding", "dilation", "groups"}
    return st.fixed_dictionaries(
        {},
        optional={
            k: st.one_of(GEOMETRY, VALUES)
            if k in geometry
            else st.one_of(SMALL_TENSORS, VALUES)
            if k in ("x", "w")
            else VALUES
            for k in keys
        },
    ).map(lambda body: {k: v for k, v in body.items() if v is not None})


@pytest.fixture(scope="module")
def fuzz_client():
    from fastapi.testclient import TestClient

    from convscope.app import create_app
    from convscope.settings import Settings

    app = create_app(
        Settings(max_tensor_elements=256, max_events=500, cache_entries=0, **ONE_ADDRESS_CROWD), static_dir=None
    )
    with TestClient(app) as client:  # a 500 raises here, with its traceback
        yield client


def _check(client, path, body):
    raw = json.dumps(body)  # Python ints of any size, as a JSON client may send them
    response = client.post(path, content=raw, headers={"content-type": "application/json"})
    assert response.status_code in (200, 413, 422), (path, raw[:300], response.text[:300])
    if response.status_code != 200:
        assert len(response.content) < 4000, (path, raw[:300], response.text[:300])


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(configs(KEYS))
def test_any_values_in_a_trace_config_get_a_clear_answer(fuzz_client, body):
    _check(fuzz_client, "/api/trace", body)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=list(HealthCheck))
@given(configs(CONV_KEYS))
def test_any_values_in_a_conv_config_get_a_clear_answer(fuzz_client, body):
    _check(fuzz_client, "/api/conv", body)


def _ones(*shape):
    return {"fill": "ones", "shape": list(shape)}


GEOMETRY_BODIES = st.fixed_dictionaries(
    {
        "x": st.builds(_ones, SIZES, st.just(1), st.integers(1, 6), st.integers(1, 6)),
        "w": st.builds(_ones, SIZES, st.just(1), st.integers(1, 3), st.integers(1, 3)),
    },
    optional={
        "stride": GEOMETRY,
        "padding": st.one_of(GEOMETRY, st.sampled_from(["same", "valid"])),
        "dilation": GEOMETRY,
        "groups": HUGE_INTS,
        "view": st.sampled_from(["direct", "im2col", "transposed"]),
    },
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(GEOMETRY_BODIES, st.sampled_from(["/api/trace", "/api/trace/stream", "/api/conv"]))
def test_any_geometry_gets_a_clear_answer(fuzz_client, body, path):
    if path == "/api/conv":
        body.pop("view", None)
    _check(fuzz_client, path, body)
