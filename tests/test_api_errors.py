"""Bad input gets a clear answer, never a 500: each case asserts the status, the
location and a message that names the field and the numbers."""

from __future__ import annotations

import pytest

ONES_1x1x5x5 = {"fill": "ones", "shape": [1, 1, 5, 5]}


def fill(*shape):
    return {"fill": "ones", "shape": list(shape)}


# (id, body (dict, or raw JSON text), status, loc, words the message must contain)
CASES = [
    ("ragged", {"x": [[[[1, 2, 3], [4, 5]]]]}, 422, ["body", "x"], ["x[0][0][1]", "2 items", "3"]),
    ("not a number", {"x": [[[[1, "a", 3]]]]}, 422, ["body", "x"], ["x[0][0][0][1]", "'a'", "not a number"]),
    ("boolean", {"x": [[[[1, True]]]]}, 422, ["body", "x"], ["x[0][0][0][1]", "not a number"]),
    ("null in a tensor", {"w": [[[[1, None]]]]}, 422, ["body", "w"], ["w[0][0][0][1]", "not a number"]),
    ("NaN", '{"x": [[[[1, NaN, 3]]]], "w": [[[[1]]]]}', 422, ["body", "x"], ["x[0][0][0][1]", "NaN", "finite"]),
    ("Infinity", '{"x": [[[[1, 2, -Infinity]]]], "w": [[[[1]]]]}', 422, ["body", "x"], ["x[0][0][0][2]", "Infinity"]),
    ("1e400 overflows", '{"w": [[[[1, 1e400]]]]}', 422, ["body", "w"], ["w[0][0][0][1]", "Infinity"]),
    (
        "beyond 1e6",
        {"x": [[[[1, -2000000.5]]]], "w": [[[[1]]]]},
        422,
        ["body", "x"],
        ["x[0][0][0][1]", "2e+06", "1000000"],
    ),
    (
        "fill beyond 1e6",
        {"x": {"fill": "constant", "shape": [1, 1, 3, 3], "value": 3e6}},
        422,
        ["body", "x"],
        ["3000000", "1000000"],
    ),
    ("x ndim", {"x": [[1, 2, 3]]}, 422, ["body", "x"], ["4 dimensions", "got 2", "(1, 3)"]),
    ("w ndim", {"w": fill(3, 3)}, 422, ["body", "w"], ["4 dimensions", "got 2"]),
    ("stride 0", {"stride": 0}, 422, ["body", "stride"], ["at least 1", "0"]),
    ("stride negative", {"stride": [1, -2]}, 422, ["body", "stride"], ["at least 1", "-2"]),
    ("stride not an int", {"stride": 1.5}, 422, ["body", "stride"], ["stride", "1.5"]),
    ("dilation 0", {"dilation": 0}, 422, ["body", "dilation"], ["at least 1", "0"]),
    ("dilation negative", {"dilation": [-1, 1]}, 422, ["body", "dilation"], ["at least 1", "-1"]),
    ("padding negative", {"padding": [0, -1]}, 422, ["body", "padding"], ["negative", "-1"]),
    ("padding string", {"padding": "full"}, 422, ["body", "padding"], ["'same'", "'valid'", "'full'"]),
    ("padding 3 ints", {"padding": [1, 1, 1]}, 422, ["body", "padding"], ["padding", "3"]),
    (
        "groups vs C",
        {"x": fill(1, 3, 5, 5), "w": fill(2, 1, 3, 3), "groups": 2},
        422,
        ["body", "groups"],
        ["groups=2", "C=3"],
    ),
    (
        "groups vs F",
        {"x": fill(1, 2, 5, 5), "w": fill(3, 1, 3, 3), "groups": 2},
        422,
        ["body", "groups"],
        ["groups=2", "F=3"],
    ),
    ("groups 0", {"groups": 0}, 422, ["body", "groups"], ["groups", "0"]),
    ("w channels", {"x": fill(1, 3, 5, 5), "w": fill(2, 2, 3, 3)}, 422, ["body", "w"], ["2 input channels", "3/1 = 3"]),
    (
        "kernel too large",
        {"x": fill(1, 1, 3, 3), "w": fill(1, 1, 3, 3), "dilation": 2},
        422,
        ["body", "w"],
        ["spans 5 rows", "dilation 2", "has 3"],
    ),
    (
        "kernel wider than padded",
        {"x": fill(1, 1, 5, 2), "w": fill(1, 1, 1, 4), "padding": [1, 0]},
        422,
        ["body", "w"],
        ["spans 4 columns", "has 2"],
    ),
    ("b shape", {"b": [1, 2]}, 422, ["body", "b"], ["(2,)", "(1,)"]),
    ("dout shape", {"dout": fill(1, 1, 2, 2)}, 422, ["body", "dout"], ["(1, 1, 2, 2)", "(1, 1, 3, 3)"]),
    ("view", {"view": "spiral"}, 422, ["body", "view"], ["view", "'direct'", "'spiral'"]),
    ("granularity", {"granularity": "pixel"}, 422, ["body", "granularity"], ["'window'", "'mac'", "'pixel'"]),
    ("activation", {"activation": "softmax"}, 422, ["body", "activation"], ["'relu'", "'softmax'"]),
    ("loop order", {"loop_order": "nfi"}, 422, ["body", "loop_order"], ["'nfij'", "'nfi'"]),
    ("layout", {"layout": "CHWN"}, 422, ["body", "layout"], ["'NCHW'", "'NHWC'", "'CHWN'"]),
    ("unknown fill", {"x": {"fill": "gaussian", "shape": [1, 1, 3, 3]}}, 422, ["body", "x"], ["randint", "'gaussian'"]),
    ("unknown key", {"strides": 2}, 422, ["body", "strides"], ["not permitted"]),
    ("not an object", "[1, 2, 3]", 422, ["body"], []),
    ("broken JSON", '{"x": [1, 2', 422, ["body"], ["JSON"]),
    ("not UTF-8", b'{"x": "\xff\xfe"}', 422, ["body"], ["UTF-8"]),
    # too large: decided before computing, with the count and the limit
    ("fill spec of 10^12 elements", {"x": fill(1000, 1000, 1000, 1000)}, 413, ["body", "x"], ["1000000000000", "4096"]),
    ("literal tensor over the limit", {"w": [[[[0] * 70] * 70]]}, 413, ["body", "w"], ["4900", "4096"]),
    ("padding makes xp too large", {"padding": 1000000}, 413, ["body", "padding"], ["4000020000025", "4096"]),
    # the padding modes and the flip (issue 24)
    (
        "padding_mode unknown",
        {"padding": 1, "padding_mode": "mirror"},
        422,
        ["body", "padding_mode"],
        ["'zeros', 'reflect', 'replicate', 'circular'", "'mirror'"],
    ),
    (
        "reflect padding as wide as the input",
        {"padding": [5, 1], "padding_mode": "reflect"},
        422,
        ["body", "padding"],
        ["reflect", "top padding 5", "H = 5", "4 cells"],
    ),
    (
        "circular padding wider than the input",
        {"padding": [1, 6], "padding_mode": "circular"},
        422,
        ["body", "padding"],
        ["circular", "left padding 6", "W = 5"],
    ),
    ("flip not a boolean", {"flip": "yes"}, 422, ["body", "flip"], ["True (convolution)", "'yes'"]),
    (
        "a listing that pads with zeros",
        {"padding": 1, "padding_mode": "replicate", "code": "cs231n"},
        422,
        ["body", "code"],
        ["'cs231n'", "padding_mode 'replicate'", "code 'auto'"],
    ),
    (
        "too many events",
        {"x": fill(1, 4, 30, 30), "w": fill(4, 4, 3, 3), "granularity": "mac"},
        413,
        ["body"],
        ["events", "20000"],
    ),
]


def _post(client, path, body):
    if isinstance(body, (str, bytes)):
        raw = body.encode() if isinstance(body, str) else body
        return client.post(path, content=raw, headers={"content-type": "application/json"})
    return client.post(path, json=body)


@pytest.mark.parametrize("path", ["/api/trace", "/api/trace/stream"])
@pytest.mark.parametrize(("case", "body", "status", "loc", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_clearly(api_client, path, case, body, status, loc, words):
    response = _post(api_client, path, body)
    assert response.status_code == status, response.text[:400]
    assert response.headers["content-type"].startswith("application/json")
    detail = response.json()["detail"]
    assert isinstance(detail, list) and detail
    first = detail[0]
    assert first["loc"][: len(loc)] == loc
    assert set(first) >= {"loc", "msg", "type"}
    for word in words:
        assert word in first["msg"], f"{word!r} not in {first['msg']!r}"


TRACE_ONLY_KEYS = {"view", "granularity", "loop_order", "dx_loop_order", "backward", "phases", "code"}
# every case whose keys /api/conv takes, except the event count (/api/conv makes no events)
CONV_CASES = [
    c for c in CASES if not (isinstance(c[1], dict) and set(c[1]) & TRACE_ONLY_KEYS) and c[0] != "too many events"
]


@pytest.mark.parametrize(("case", "body", "status", "loc", "words"), CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_conv_refuses_bad_input_the_same_way(api_client, case, body, status, loc, words):
    response = _post(api_client, "/api/conv", body)
    assert response.status_code == status, response.text[:400]
    first = response.json()["detail"][0]
    assert first["loc"][: len(loc)] == loc
    for word in words:
        assert word in first["msg"], f"{word!r} not in {first['msg']!r}"


def test_conv_cases_cover_every_case_conv_can_take():
    left_out = [c[0] for c in CASES if c not in CONV_CASES]
    assert left_out == ["view", "granularity", "loop order", "a listing that pads with zeros", "too many events"]


VIEW_MATRIX_CASES = [
    # inputs, padded input and output within the limit; the view's own matrix is not
    (
        "im2col cols",
        {"x": fill(1, 4, 16, 16), "w": fill(1, 4, 3, 3), "view": "im2col"},
        ["im2col view's cols", "7056", "4096"],
    ),
    (
        "transposed dz_dilated",
        {"x": fill(1, 1, 40, 40), "w": fill(3, 1, 9, 9), "view": "transposed"},
        ["transposed view's dz_dilated", "6912", "4096"],
    ),
]


@pytest.mark.parametrize(("case", "body", "words"), VIEW_MATRIX_CASES, ids=[c[0] for c in VIEW_MATRIX_CASES])
def test_a_views_intermediate_over_the_limit_is_refused_before_computing(api_client, case, body, words):
    response = _post(api_client, "/api/trace", body)
    assert response.status_code == 413, response.text
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["body", "view"]
    for word in words:
        assert word in detail["msg"], detail["msg"]
    # the same inputs with the direct view are fine
    assert _post(api_client, "/api/trace", {**body, "view": "direct"}).status_code == 200


def test_conv_refuses_trace_only_keys(api_client):
    response = api_client.post("/api/conv", json={"view": "direct"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "view"]


def test_body_over_the_limit_is_refused_with_both_numbers(api_client, api_settings):
    size = api_settings.max_body_bytes + 10
    body = b'{"x": [' + b" " * (size - 9) + b"]}"
    response = api_client.post("/api/trace", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 413
    msg = response.json()["detail"][0]["msg"]
    assert str(len(body)) in msg and str(api_settings.max_body_bytes) in msg


def test_chunked_body_over_the_limit_is_refused(api_client, api_settings):
    def chunks():
        yield b'{"x": ['
        for _ in range(api_settings.max_body_bytes // 1000 + 2):
            yield b" " * 1000
        yield b"]}"

    response = api_client.post("/api/trace", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert str(api_settings.max_body_bytes) in response.json()["detail"][0]["msg"]


def test_limits_follow_the_settings(page_dir):
    from fastapi.testclient import TestClient

    from convscope.app import create_app
    from convscope.settings import Settings

    app = create_app(Settings(max_tensor_elements=20, max_events=5), static_dir=page_dir)
    with TestClient(app) as client:
        big = client.post("/api/trace", json={"x": {"fill": "ones", "shape": [1, 1, 5, 5]}})
        assert big.status_code == 413 and "25 elements" in big.json()["detail"][0]["msg"]
        many = client.post("/api/trace", json={"x": {"fill": "ones", "shape": [1, 1, 4, 4]}})
        assert many.status_code == 413
        assert "limit is 5" in many.json()["detail"][0]["msg"]


LONG = 900_000
LONG_VALUE_CASES = [
    # (id, body, field, words): a person's value is shown cut, never echoed whole
    ("long view", {"view": "v" * LONG}, "view", ["view must be one of", "'vvvv", "…"]),
    ("long loop order", {"loop_order": "n" * LONG}, "loop_order", ["permutation", "'nnnn", "…"]),
    ("long dx loop order", {"dx_loop_order": "n" * LONG}, "dx_loop_order", ["permutation", "'nnnn", "…"]),
    ("long string in a tensor", {"x": [[[["s" * LONG]]]]}, "x", ["x[0][0][0][0]", "'ssss", "…", "not a number"]),
    ("long fill name", {"x": {"fill": "f" * LONG, "shape": [1, 1, 5, 5]}}, "x", ["x.fill", "'ffff", "…"]),
    (
        "long fill parameter",
        {"x": {"fill": "ones", "shape": [1, 1, 5, 5], "p" * LONG: 1}},
        "x",
        ["not a parameter", "ppp…"],
    ),
    ("long stride list", {"stride": list(range(100_000))}, "stride", ["stride", "[0, 1, 2"]),
    ("long padding list", {"padding": list(range(100_000))}, "padding", ["padding", "100000"]),
    ("401-digit groups", {"groups": 10**400}, "groups", ["groups=", "(401 digits)"]),
    ("401-digit stride", {"stride": -(10**400)}, "stride", ["at least 1", "(401 digits)"]),
    ("long activation", {"activation": "a" * LONG}, "activation", ["activation must be one of", "…"]),
    ("long unknown key", {"k" * LONG: 1}, "k" * 39 + "…", ["not permitted"]),
]


LONG_VALUE_PARAMS = [
    pytest.param(path, *case, id=f"{case[0]}-{path}")
    for case in LONG_VALUE_CASES
    for path in ("/api/trace", "/api/trace/stream", "/api/conv")
    if path != "/api/conv" or not set(case[1]) & TRACE_ONLY_KEYS
]


@pytest.mark.parametrize(("path", "case", "body", "field", "words"), LONG_VALUE_PARAMS)
def test_a_long_value_is_not_echoed_back(api_client, path, case, body, field, words):
    response = _post(api_client, path, body)
    assert response.status_code == 422, response.text[:400]
    assert len(response.content) < 2000, response.text[:400]
    first = response.json()["detail"][0]
    assert first["loc"] == ["body", field]
    for word in words:
        assert word in first["msg"], f"{word!r} not in {first['msg']!r}"


def nested(depth, leaf=1):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


DEEP_CASES = [
    # lists nested deeper than NumPy iterates (32) are refused by their depth, before NumPy
    ("x 33 deep", {"x": nested(33)}, "x", ["x must have 4 dimensions (N, C, H, W), got 33"]),
    ("x 40 deep", {"x": nested(40)}, "x", ["x must have 4 dimensions (N, C, H, W), got 40"]),
    ("x 500 deep", {"x": nested(500)}, "x", ["got 500"]),
    ("x 40 deep ending empty", {"x": nested(39, [])}, "x", ["got 40"]),
    (
        "w 33 deep, NHWC",
        {"layout": "NHWC", "w": nested(33)},
        "w",
        ["w must have 4 dimensions (KH, KW, C/groups, F), got 33"],
    ),
    ("b 33 deep", {"b": nested(33)}, "b", ["b must have 1 dimensions", "got 33"]),
    ("dout 33 deep", {"dout": nested(33)}, "dout", ["dout must have 4 dimensions", "got 33"]),
    (
        "fill spec of 70 dimensions",
        {"x": {"fill": "ones", "shape": [1] * 70}},
        "x",
        ["x.shape has 70 dimensions", "32"],
    ),
    ("fill spec of 8 dimensions", {"x": {"fill": "ones", "shape": [1] * 8}}, "x", ["4 dimensions", "got 8"]),
]


HUGE = 2**62
ONE_BY_ONE = {"fill": "ones", "shape": [1, 1, 1, 1]}
# a stride or dilation of 2^62 is legal when it gives one window (one tap) on that axis
HUGE_GEOMETRY_CASES = [
    ("stride 2^62", {"stride": HUGE}, {"stride": 3}),
    ("stride [1, 2^62]", {"stride": [1, HUGE]}, {"stride": [1, 3]}),
    ("same, stride 2^62", {"padding": "same", "stride": HUGE}, {"padding": "same", "stride": 5}),
    ("1x1 kernel, dilation 2^62", {"w": ONE_BY_ONE, "dilation": HUGE}, {"w": ONE_BY_ONE}),
    ("1x3 kernel, dilation [2^62, 1]", {"w": fill(1, 1, 1, 3), "dilation": [HUGE, 1]}, {"w": fill(1, 1, 1, 3)}),
    ("stride 2^63 - 1", {"stride": 2**63 - 1}, {"stride": 3}),
]
GRADIENTS = ("z", "out", "dz", "dx", "dw", "db")


@pytest.mark.parametrize(("case", "body", "same_as"), HUGE_GEOMETRY_CASES, ids=[c[0] for c in HUGE_GEOMETRY_CASES])
def test_a_huge_stride_or_dilation_on_a_one_window_axis_works(api_client, case, body, same_as):
    config = {"x": {"fill": "randint", "shape": [1, 1, 5, 5], "seed": 3}, "dout": {"fill": "normal", "seed": 4}}
    got = _post(api_client, "/api/conv", {**config, **body})
    assert got.status_code == 200, got.text[:400]
    expected = _post(api_client, "/api/conv", {**config, **same_as}).json()
    assert {k: got.json()[k] for k in GRADIENTS} == {k: expected[k] for k in GRADIENTS}
    for view in ("direct", "im2col", "transposed"):
        doc = _post(api_client, "/api/trace", {**config, **body, "view": view})
        assert doc.status_code == 200, (view, doc.text[:400])
        assert doc.json()["check"]["max_rel_error"] < 1e-8
        stream = _post(api_client, "/api/trace/stream", {**config, **body, "view": view})
        assert stream.status_code == 200, (view, stream.text[:400])
        assert stream.text.rstrip("\n").rsplit("\n", 1)[-1].startswith('{"type":"end"')


UNREPRESENTABLE_CASES = [
    ("stride 2^63", {"stride": 2**63}, "stride", ["stride must be at most 2^63 − 1", "9223372036854775808"]),
    ("stride 10^400", {"stride": [1, 10**400]}, "stride", ["at most 2^63 − 1", "(401 digits)"]),
    ("dilation 10^30", {"w": ONE_BY_ONE, "dilation": 10**30}, "dilation", ["at most 2^63 − 1", str(10**30)]),
    ("padding 2^62", {"padding": HUGE}, "padding", ["padded input", str(2 * HUGE + 5), "2^63 − 1 bytes"]),
    ("padding 2^63", {"padding": [0, 2**63, 0, 0]}, "padding", ["at most 2^63 − 1", str(2**63)]),
    ("padding 10^400", {"padding": 10**400}, "padding", ["at most 2^63 − 1", "(401 digits)"]),
]


def test_every_route_maps_an_input_error_the_same_way(api_client, monkeypatch):
    """A ConvSpecError raised while computing (here from the forward pass that the
    result and the gradient check share) is a 422 at its field on all three routes."""
    from convcore.spec import ConvSpecError
    from convscope.traces import prepare as tracing

    def refuse(*args, **kwargs):
        raise ConvSpecError("stride 7 cannot be used here", "stride")

    import convcore.trace.document

    monkeypatch.setattr(tracing, "layer_results", refuse)  # /api/conv
    monkeypatch.setattr(convcore.trace.document, "layer_results", refuse)  # the trace's reference arrays
    for path in ("/api/trace", "/api/trace/stream", "/api/conv"):
        response = _post(api_client, path, {"stride": 1})
        assert response.status_code == 422, (path, response.text[:400])
        assert response.json()["detail"][0] == {
            "loc": ["body", "stride"],
            "msg": "stride 7 cannot be used here",
            "type": "value_error",
        }


def test_an_error_before_the_stream_header_is_a_422(api_client, monkeypatch):
    from convcore.spec import ConvSpecError
    from convscope.traces import prepare as tracing

    def refusing_trace(resolved, **options):
        raise ConvSpecError("dilation 9 cannot be used here", "dilation")
        yield  # a generator, as iter_trace

    monkeypatch.setattr(tracing, "iter_trace", refusing_trace)
    response = _post(api_client, "/api/trace/stream", {})
    assert response.status_code == 422, response.text[:400]
    assert response.json()["detail"][0]["loc"] == ["body", "dilation"]


FILL_NUMBER_CASES = [
    (
        "normal mean 10^400",
        {"x": {"fill": "normal", "shape": [1, 1, 5, 5], "mean": 10**400}},
        "x",
        ["x.mean", "finite number", "(401 digits)"],
    ),
    (
        "uniform range overflows",
        {"x": {"fill": "uniform", "shape": [1, 1, 5, 5], "low": -1.7e308, "high": 1.7e308}},
        "x",
        ["x.high", "overflows float64", "−1.7e+308", "1.7e+308"],
    ),
    (
        "w constant -10^400",
        {"w": {"fill": "constant", "shape": [1, 1, 3, 3], "value": -(10**400)}},
        "w",
        ["w.value", "finite number", "(401 digits)"],
    ),
]


NUMBER_CASES = DEEP_CASES + UNREPRESENTABLE_CASES + FILL_NUMBER_CASES


@pytest.mark.parametrize("path", ["/api/trace", "/api/trace/stream", "/api/conv"])
@pytest.mark.parametrize(("case", "body", "field", "words"), NUMBER_CASES, ids=[c[0] for c in NUMBER_CASES])
def test_inputs_numpy_cannot_hold_are_refused_naming_the_field(api_client, path, case, body, field, words):
    """Tensors nested too deep, geometries NumPy cannot index, and fill parameters
    float64 cannot hold: a 422 at the field, with the numbers."""
    response = _post(api_client, path, body)
    assert response.status_code == 422, response.text[:400]
    first = response.json()["detail"][0]
    assert first["loc"] == ["body", field]
    for word in words:
        assert word in first["msg"], f"{word!r} not in {first['msg']!r}"


def test_an_unexpected_error_is_a_500_not_a_422(page_dir, monkeypatch):
    """Only ConvSpecError is bad input; any other exception is a bug and must show as one."""
    from fastapi.testclient import TestClient

    from convscope.app import create_app
    from convscope.settings import Settings
    from convscope.traces import prepare as tracing

    def broken(*args, **kwargs):
        raise ValueError("a bug, not the caller's input")

    monkeypatch.setattr(tracing, "resolve_config", broken)
    app = create_app(Settings(), static_dir=page_dir)
    with TestClient(app, raise_server_exceptions=False) as client:
        for path in ("/api/trace", "/api/trace/stream", "/api/conv"):
            assert _post(client, path, {}).status_code == 500, path


UNREADABLE_BODY_CASES = [
    ("nested 10000 levels", '{"x": ' + "[" * 10_000 + "1" + "]" * 10_000 + "}", ["nests too deep", "levels"]),
    ("a 5000-digit integer", '{"groups": ' + "7" * 5000 + "}", ["5000 digits", "4300"]),
    ("not UTF-8", b'{"x": "\xff\xfe"}', ["not JSON text", "UTF-8"]),
]


@pytest.mark.parametrize("path", ["/api/trace", "/api/trace/stream", "/api/conv"])
@pytest.mark.parametrize(("case", "body", "words"), UNREADABLE_BODY_CASES, ids=[c[0] for c in UNREADABLE_BODY_CASES])
def test_valid_json_the_parser_cannot_read_says_why(api_client, path, case, body, words):
    response = _post(api_client, path, body)
    assert response.status_code == 422, response.text[:400]
    first = response.json()["detail"][0]
    assert first["loc"] == ["body"]
    for word in words:
        assert word in first["msg"], f"{word!r} not in {first['msg']!r}"


DX_LOOP_ORDER_CASES = [
    ("im2col", {"view": "im2col", "dx_loop_order": "jifn"}, ["view 'im2col'"]),
    ("transposed", {"view": "transposed", "dx_loop_order": "jifn"}, ["view 'transposed'"]),
    ("direct, fused", {"dx_loop_order": "jifn"}, ["backward 'fused'"]),
    (
        "direct mac, fused",
        {"granularity": "mac", "backward": "fused", "dx_loop_order": "nijklfc"},
        ["backward 'fused'"],
    ),
]


@pytest.mark.parametrize("path", ["/api/trace", "/api/trace/stream"])
@pytest.mark.parametrize(("case", "body", "words"), DX_LOOP_ORDER_CASES, ids=[c[0] for c in DX_LOOP_ORDER_CASES])
def test_dx_loop_order_where_it_does_not_apply_is_refused(api_client, path, case, body, words):
    response = _post(api_client, path, body)
    assert response.status_code == 422, response.text[:400]
    first = response.json()["detail"][0]
    assert first["loc"] == ["body", "dx_loop_order"]
    for word in ["view 'direct'", "backward 'separate'", *words]:
        assert word in first["msg"], f"{word!r} not in {first['msg']!r}"


def test_dx_loop_order_applies_to_the_separate_dx_phase(api_client):
    body = {"backward": "separate", "loop_order": "nfij", "dx_loop_order": "jifn"}
    doc = _post(api_client, "/api/trace", body).json()
    assert doc["spec"]["dx_loop_order"] == "jifn"
    dx_loops = [e["loop"] for e in doc["events"] if e["phase"] == "dx"]
    assert dx_loops[:2] == [{"n": 0, "f": 0, "i": 0, "j": 0}, {"n": 0, "f": 0, "i": 1, "j": 0}]


def test_many_problems_are_listed_up_to_a_few(api_client):
    body = {f"k{i}": 1 for i in range(50_000)}  # 50 000 unknown keys in a 0.5 MB body
    response = _post(api_client, "/api/trace", body)
    assert response.status_code == 422
    assert len(response.content) < 4000
    detail = response.json()["detail"]
    assert detail[0]["loc"] == ["body", "k0"] and detail[0]["type"] == "extra_forbidden"
    assert detail[-1]["msg"] == "and 49990 more problems of the same kind"
