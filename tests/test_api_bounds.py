"""The OpenAPI document says what the service does: every enum is convcore's registry,
every bound in the trace config's schema is accepted at the bound and refused past it,
and every loop order the page can offer is accepted where it has an effect."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from convcore.activations import ACTIVATIONS
from convcore.fill import FILLS
from convcore.trace.config import CHOICES
from convcore.trace.views import get_view, view_names
from convscope.app import create_app
from convscope.settings import Settings

ONE = {"fill": "ones", "shape": [1, 1, 1, 1]}


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Settings(), static_dir=None)) as c:
        yield c


@pytest.fixture(scope="module")
def props(client):
    return client.get("/openapi.json").json()["components"]["schemas"]["TraceConfig"]["properties"]


def _bounds(schema, path=()):
    """Every (path, keyword, value) bound in a JSON schema."""
    found = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("minimum", "maximum", "exclusiveMaximum", "minItems", "maxItems"):
                found.append((path, key, value))
            else:
                found += _bounds(value, (*path, key))
    elif isinstance(schema, list):
        for k, item in enumerate(schema):
            found += _bounds(item, (*path, k))
    return found


def test_enums_are_convcores_registries(props):
    def enum(name):
        return props[name]["enum"]

    assert enum("activation") == list(ACTIVATIONS)
    assert enum("view") == view_names()
    assert set(enum("granularity")) == {g for v in view_names() for g in get_view(v).granularities}
    for name in ("layout", "backward", "phases"):
        assert enum(name) == list(CHOICES[name])
    fill = props["x"]["anyOf"][1]["properties"]
    assert fill["fill"]["enum"] == list(FILLS)
    assert set(fill) - {"fill", "shape", "seed"} == {p for f in FILLS.values() for p in f.defaults}


def _integer_bound(props, field, key):
    values = {int(v) for path, k, v in _bounds(props[field]) if k == key and "items" not in path[-1:]}
    assert len(values) == 1, (field, key, values)
    return values.pop()


# field -> the other keys of a config where any value of the field up to the bound is valid
GEOMETRY = {
    "stride": {"x": ONE, "w": ONE},
    "dilation": {"x": ONE, "w": ONE},
    "padding": {"x": ONE, "w": ONE},
    "groups": {"x": ONE, "w": ONE},
}


def _status(client, body):
    response = client.post("/api/trace", json=body)
    return response.status_code, response.json()["detail"][0] if response.status_code != 200 else None


@pytest.mark.parametrize("field", sorted(GEOMETRY))
def test_geometry_bounds_are_enforced_at_the_bound(client, props, field):
    base = GEOMETRY[field]
    low = _integer_bound(props, field, "minimum")
    assert _status(client, {**base, field: low})[0] == 200
    status, detail = _status(client, {**base, field: low - 1})
    assert status == 422 and detail["loc"] == ["body", field], detail
    bounds = [v for _, k, v in _bounds(props[field]) if k == "exclusiveMaximum"]
    if not bounds:
        return
    top = int(bounds[0])
    status, detail = _status(client, {**base, field: top - 1})
    if field == "padding":  # valid as a number; the padded input it makes is refused for its size
        assert status in (413, 422) and "at most" not in detail["msg"] and "padded input" in detail["msg"], detail
    else:
        assert status == 200, detail
    status, detail = _status(client, {**base, field: top})
    assert status == 422 and detail["loc"] == ["body", field] and str(top) in detail["msg"], detail


def test_fill_spec_bounds_are_enforced(client, props):
    fill = props["x"]["anyOf"][1]["properties"]
    seed_max = int(fill["seed"]["maximum"])
    assert _status(client, {"w": ONE, "x": {"fill": "normal", "shape": [1, 1, 2, 2], "seed": seed_max}})[0] == 200
    status, detail = _status(client, {"x": {"fill": "normal", "shape": [1, 1, 2, 2], "seed": seed_max + 1}})
    assert status == 422 and detail["loc"][:2] == ["body", "x"] and "seed" in detail["msg"], detail
    assert _status(client, {"x": {"fill": "normal", "shape": [1, 1, 2, 2], "seed": -1}})[0] == 422
    shape = fill["shape"]
    assert _status(client, {"b": {"fill": "ones", "shape": [1] * shape["minItems"]}})[0] == 200
    assert _status(client, {"b": {"fill": "ones", "shape": []}})[0] == 422
    assert _status(client, {"w": ONE, "x": {"fill": "ones", "shape": [1] * shape["maxItems"]}})[0] == 200
    assert _status(client, {"x": {"fill": "ones", "shape": [1] * (shape["maxItems"] + 1)}})[0] == 422
    assert _status(client, {"x": {"fill": "ones", "shape": [1, 1, 1, shape["items"]["minimum"] - 1]}})[0] == 422
    nested = props["x"]["anyOf"][0]
    assert _status(client, {"b": [0.5] * nested["minItems"]})[0] == 200
    assert _status(client, {"b": []})[0] == 422


def test_compare_tensor_bounds_are_enforced(client, props):
    """A compared tensor may have any shape, an empty one included (a student's crop of
    [pad:-pad] at padding 0), or be null (nothing returned): each is compared and
    said; what is not numbers is refused naming the cell."""
    schema = props["compare"]["properties"]["dx"]["anyOf"]
    assert [s["type"] for s in schema] == ["array", "null"]
    x = [[[[0.0, 1.0], [2.0, 3.0]]]]
    for sent, kind in (([], "wrong shape"), ([[[]]], "wrong shape"), (None, "not numbers")):
        answer = client.post("/api/trace", json={"x": x, "w": ONE, "compare": {"dx": sent}})
        assert answer.status_code == 200 and answer.json()["comparison"]["dx"]["kind"] == kind, answer.text
    status, detail = _status(client, {"x": x, "w": ONE, "compare": {"dx": [[["a"]]]}})
    assert status == 422 and detail["loc"][:3] == ["body", "compare", "dx"] and "'a'" in detail["msg"], detail


def test_output_padding_bounds_are_enforced(client, props):
    """output_padding (the transposed layer's): 0 upwards as the schema says, and below
    the stride as PyTorch requires, each refusal naming the field and the numbers."""
    base = {"layer": "conv_transpose2d", "x": ONE, "w": ONE, "stride": 3}
    low = _integer_bound(props, "output_padding", "minimum")
    assert _status(client, {**base, "output_padding": low})[0] == 200
    assert _status(client, {**base, "output_padding": [2, 1]})[0] == 200
    for value, words in ((low - 1, "at least 0"), (3, "output_padding 3, stride 3"), ([1, 5], "output_padding 5")):
        status, detail = _status(client, {**base, "output_padding": value})
        assert status == 422 and detail["loc"] == ["body", "output_padding"] and words in detail["msg"], detail
    top = int(next(v for _, k, v in _bounds(props["output_padding"]) if k == "exclusiveMaximum"))
    status, detail = _status(client, {**base, "output_padding": top})
    assert status == 422 and detail["loc"] == ["body", "output_padding"] and str(top) in detail["msg"], detail


def test_every_bound_in_the_config_schema_is_tested(props):
    tested = {
        "output_padding",  # test_output_padding_bounds_are_enforced
        "stride",
        "dilation",
        "padding",
        "groups",  # test_geometry_bounds_are_enforced_at_the_bound
        "x",
        "w",
        "b",
        "dout",  # test_fill_spec_bounds_are_enforced (the same tensor schema)
        "compare",  # test_compare_tensor_bounds_are_enforced (the nested-list schema)
    }
    assert {field for field in props if _bounds(props[field])} <= tested


@pytest.mark.parametrize("view", view_names())
def test_every_loop_order_is_accepted_where_it_orders_something(client, view):
    for granularity in get_view(view).granularities:
        letters = get_view(view).loop_letters(granularity)
        body = {"view": view, "granularity": granularity, "loop_order": letters[::-1]}
        assert _status(client, body)[0] == 200, body
        if view == "direct":
            separate = {**body, "backward": "separate", "dx_loop_order": letters[1:] + letters[0]}
            assert _status(client, separate)[0] == 200, separate
