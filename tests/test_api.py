"""Every endpoint through TestClient: the page, health, presets, trace, stream, conv."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

from convcore import __version__
from convcore.trace import build_trace, replay
from convscope.http.page_cache import PageVersion
from convscope.traces.presets import PRESETS


def ndjson(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line]


def tensor(doc: dict, name: str) -> np.ndarray:
    t = doc["tensors"][name]
    return np.asarray(t["data"], dtype=float).reshape(t["shape"])


# -- page and static files -----------------------------------------------------------


def _linked_version(client) -> str:
    """The version under which the page (GET /) links its module."""
    found = re.search(r'src="/v/([0-9a-f]{16})/js/main.js"', client.get("/").text)
    assert found, client.get("/").text
    return found.group(1)


def test_page_is_served_at_root_with_its_files_linked_under_their_version(api_client, page_dir):
    response = api_client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-cache"  # (asked for again on every load)
    version = PageVersion(page_dir).current()
    html = (page_dir / "index.html").read_text(encoding="utf-8")
    assert response.text == html.replace('src="js/main.js"', f'src="/v/{version}/js/main.js"')
    kept = api_client.get(f"/v/{version}/js/main.js")
    assert kept.status_code == 200
    assert kept.content == (page_dir / "js" / "main.js").read_bytes()
    assert "javascript" in kept.headers["content-type"]
    assert kept.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert api_client.get(f"/v/{version}/js/none.js").status_code == 404


def test_a_changed_file_makes_a_new_version_and_the_old_one_is_asked_for_again(api_client, page_dir):
    """A browser that kept the old version's files never runs them with a new page: a
    second after a file changes, the page links a new version, and the old version's
    paths are no longer kept, whether or not the page was asked for in between."""
    now = [0.0]
    api_client.app.state.page_version = PageVersion(page_dir, clock=lambda: now[0])
    old = _linked_version(api_client)
    assert api_client.get(f"/v/{old}/js/main.js").headers["cache-control"].endswith("immutable")
    (page_dir / "js" / "main.js").write_text("export const page = 'convscope, upgraded';\n", encoding="utf-8")
    now[0] = 0.5  # (the files are looked at once a second at most)
    assert api_client.get(f"/v/{old}/js/main.js").headers["cache-control"].endswith("immutable")
    now[0] = 1.0
    assert api_client.get(f"/v/{old}/js/main.js").headers["cache-control"] == "no-cache"
    new = _linked_version(api_client)
    assert new != old
    stale = api_client.get(f"/v/{old}/js/main.js")
    assert stale.status_code == 200 and "upgraded" in stale.text
    assert stale.headers["cache-control"] == "no-cache"
    assert api_client.get(f"/v/{new}/js/main.js").headers["cache-control"].endswith("immutable")


def test_the_version_names_the_files_contents_not_their_times(page_dir):
    """Two workers, or two installs, of the same files name them the same; a release
    that keeps the files' times and sizes (a same-size edit) gets a new version."""
    main = page_dir / "js" / "main.js"
    before = PageVersion(page_dir).current()
    for path in page_dir.rglob("*"):
        os.utime(path, ns=(10**18, 10**18))
    assert PageVersion(page_dir).current() == before
    times = main.stat()
    main.write_text(main.read_text(encoding="utf-8").replace("convscope", "CONVSCOPE"), encoding="utf-8")
    os.utime(main, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert main.stat().st_size == times.st_size
    assert PageVersion(page_dir).current() != before


@pytest.mark.parametrize("path", ["/js/main.js", "/static/js/main.js"])
def test_assets_are_served_relative_and_under_static(api_client, path):
    response = api_client.get(path)
    assert response.status_code == 200
    assert "convscope" in response.text
    assert "javascript" in response.headers["content-type"]


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/static/../secret.txt",
        "/%2e%2e/secret.txt",
        "/static/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/static/..%2f..%2fsecret.txt",
        "/etc/passwd",
        "/static//etc/passwd",
        "/v/0/%2e%2e/secret.txt",
        "/v/0/..%2fsecret.txt",
        "/v/0/%2e%2e%2f%2e%2e%2fsecret.txt",
        "/v/0//etc/passwd",
        "/v/..%2f/secret.txt",
    ],
)
def test_no_path_leaves_the_static_folder(api_client, path):
    response = api_client.get(path)
    assert response.status_code == 404
    assert "not for the web" not in response.text


def test_missing_page_is_a_clear_404(api_settings, tmp_path):
    from fastapi.testclient import TestClient

    from convscope.app import create_app

    with TestClient(create_app(api_settings, static_dir=tmp_path)) as client:
        response = client.get("/")
    assert response.status_code == 404
    assert "index.html" in response.json()["detail"][0]["msg"]


def test_the_checkout_page_folder_is_found():
    from convscope.http.static_files import find_static_dir

    folder = find_static_dir()
    assert folder is not None and folder.name == "static" and folder.is_dir()


# -- security headers and CORS -------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/", None),
        ("GET", "/js/main.js", None),
        ("GET", "/api/health", None),
        ("POST", "/api/trace", {"stride": 0}),
        ("POST", "/api/trace/stream", {}),
        ("GET", "/nothing", None),
    ],
)
def test_security_headers_on_every_response(api_client, method, path, body):
    response = api_client.request(method, path, json=body)
    csp = response.headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"  # no inline scripts
    assert directives["connect-src"] == "'self'"
    assert directives["img-src"] == "'self' data: blob:"
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_cors_is_off_by_default(api_client):
    response = api_client.get("/api/health", headers={"origin": "https://elsewhere.example"})
    assert "access-control-allow-origin" not in response.headers
    preflight = api_client.options(
        "/api/trace", headers={"origin": "https://elsewhere.example", "access-control-request-method": "POST"}
    )
    assert "access-control-allow-origin" not in preflight.headers


def test_cors_allows_only_configured_origins(page_dir):
    from fastapi.testclient import TestClient

    from convscope.app import create_app
    from convscope.settings import Settings

    app = create_app(Settings(cors_origins=("https://class.example",)), static_dir=page_dir)
    with TestClient(app) as client:
        ok = client.get("/api/health", headers={"origin": "https://class.example"})
        other = client.get("/api/health", headers={"origin": "https://elsewhere.example"})
    assert ok.headers["access-control-allow-origin"] == "https://class.example"
    assert "access-control-allow-origin" not in other.headers


# -- health and settings -------------------------------------------------------------


def test_health_reports_version_and_limits(api_client, api_settings):
    body = api_client.get("/api/health").json()
    assert body["status"] == "ok"
    assert body["version"] == __version__
    assert body["trace_schema"] == "convscope.trace/3"
    assert body["encoder"] in ("orjson", "json")
    assert body["limits"] == {
        "max_tensor_elements": api_settings.max_tensor_elements,
        "max_events": api_settings.max_events,
        "max_trace_bytes": api_settings.max_trace_bytes,
        "max_work": api_settings.max_work,
        "max_body_bytes": api_settings.max_body_bytes,
        "max_abs_value": api_settings.max_abs_value,
        "max_builds": api_settings.max_builds,
        "queue_timeout": api_settings.queue_timeout,
        "request_timeout": api_settings.request_timeout,
        "idle_timeout": api_settings.idle_timeout,
        "min_send_rate": api_settings.min_send_rate,
        "send_grace": api_settings.send_grace,
    }


def test_settings_come_from_the_environment():
    from convscope.settings import Settings, SettingsError

    settings = Settings.from_env(
        {
            "CONVSCOPE_MAX_EVENTS": "123",
            "CONVSCOPE_MAX_TENSOR_ELEMENTS": "77",
            "CONVSCOPE_CORS_ORIGINS": "https://a.example, https://b.example",
            "CONVSCOPE_DEBUG": "yes",
        }
    )
    assert settings.max_events == 123 and settings.max_tensor_elements == 77
    assert settings.cors_origins == ("https://a.example", "https://b.example")
    assert settings.debug is True
    assert Settings.from_env(settings.to_env()) == settings
    with pytest.raises(SettingsError, match="CONVSCOPE_MAX_EVENTS='many'"):
        Settings.from_env({"CONVSCOPE_MAX_EVENTS": "many"})
    with pytest.raises(
        SettingsError, match="CONVSCOPE_MAX_EVENTS=.0. is not valid: Input should be greater than or equal to 1"
    ):
        Settings.from_env({"CONVSCOPE_MAX_EVENTS": "0"})


def test_openapi_documents_every_endpoint(api_client):
    schema = api_client.get("/openapi.json").json()
    paths = schema["paths"]
    for path, method in [
        ("/", "get"),
        ("/api/health", "get"),
        ("/api/presets", "get"),
        ("/api/presets/{name}", "get"),
        ("/api/trace", "post"),
        ("/api/trace/stream", "post"),
        ("/api/conv", "post"),
    ]:
        assert method in paths[path], path
    stream = paths["/api/trace/stream"]["post"]["responses"]["200"]["content"]
    assert list(stream) == ["application/x-ndjson"]
    for path in ("/api/trace", "/api/trace/stream", "/api/conv"):
        responses = paths[path]["post"]["responses"]
        assert {"413", "422"} <= set(responses)
    assert "/api/debug/stats" not in paths


# -- the gradient check in the header ---------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {},
        {
            "layout": "NHWC",
            "x": {"fill": "randint", "shape": [1, 5, 5, 3], "seed": 3},
            "w": {"fill": "normal", "shape": [3, 3, 3, 2]},
            "b": [1, -2],
            "activation": "relu",
            "stride": 2,
            "padding": "same",
            "dout": {"fill": "normal", "shape": [1, 3, 3, 2]},
        },
        {
            "view": "transposed",
            "groups": 2,
            "x": {"fill": "normal", "shape": [1, 2, 5, 5]},
            "w": {"fill": "normal", "shape": [2, 1, 3, 3]},
            "b": [0.5, 1],
            "dilation": 2,
            "padding": 1,
        },
    ],
    ids=["default", "nhwc-relu-same-stride2", "transposed-groups-dilation"],
)
def test_traces_carry_a_gradient_check(api_client, body):
    doc = api_client.post("/api/trace", json=body).json()
    check = doc["check"]
    assert check["directions"] == 4 and "directional derivatives" in check["method"]
    assert 0 <= check["max_rel_error"] < 1e-8
    with api_client.stream("POST", "/api/trace/stream", json=body) as response:
        header = json.loads(next(response.iter_lines()))
    assert header["type"] == "header" and header["check"] == check


def test_forward_only_traces_have_no_gradient_check(api_client):
    assert api_client.post("/api/trace", json={"phases": "forward"}).json()["check"] is None


def test_the_gradient_check_catches_a_wrong_gradient(api_settings):
    from convscope.traces.prepare import gradient_check, prepare

    config = {
        "x": {"fill": "normal", "shape": [1, 2, 6, 6]},
        "w": {"fill": "normal", "shape": [3, 2, 3, 3]},
        "stride": 2,
        "dout": {"fill": "normal", "shape": [1, 3, 2, 2]},
    }
    prepared = prepare(config, api_settings)
    doc = build_trace(prepared.resolved)
    assert gradient_check(prepared, doc)["max_rel_error"] < 1e-8
    dw = doc["tensors"]["dw"]
    dw["data"] = dw["data"][::-1]  # a flipped kernel gradient
    assert gradient_check(prepared, doc)["max_rel_error"] > 1e-3


# -- presets ---------------------------------------------------------------------------


def test_presets_list_names_titles_and_lessons(api_client):
    presets = api_client.get("/api/presets").json()["presets"]
    assert [p["name"] for p in presets] == list(PRESETS)
    assert {"cs231n", "d2l", "edge", "stride2", "dilation2", "depthwise", "same_even", "nhwc_relu", "batch2"} <= set(
        PRESETS
    )
    for p in presets:
        assert p["title"] and p["teaches"].endswith(".") and p["dout"]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_traces_and_replays(api_client, name):
    preset = api_client.get(f"/api/presets/{name}").json()
    assert preset["name"] == name
    response = api_client.post("/api/trace", json=preset["config"])
    assert response.status_code == 200, response.text[:300]
    doc = response.json()
    assert doc["total_events"] == len(doc["events"]) > 0
    state = replay(doc)
    for tensor_name, data in state.items():
        np.testing.assert_allclose(data, tensor(doc, tensor_name), atol=1e-9, err_msg=tensor_name)
    backward_lesson = "dout" in preset["config"]
    assert ("random" in preset["dout"]) == backward_lesson
    if backward_lesson:  # a random upstream gradient, not ones (a transposed layer's dy)
        upstream = "dy" if preset["config"].get("layer") == "conv_transpose2d" else "dout"
        assert len(set(tensor(doc, upstream).ravel())) > 1


def preset_doc(client, name):
    return client.post("/api/trace", json=PRESETS[name].config).json()


def test_preset_d2l_gives_19_25_37_43(api_client):
    np.testing.assert_array_equal(tensor(preset_doc(api_client, "d2l"), "out").ravel(), [19, 25, 37, 43])


def test_preset_edge_marks_both_edges(api_client):
    out = tensor(preset_doc(api_client, "edge"), "out")[0, 0]
    assert out.shape == (6, 7)
    np.testing.assert_array_equal(out[:, 1], 1)
    np.testing.assert_array_equal(out[:, 5], -1)
    assert np.count_nonzero(out) == 12


def test_preset_cs231n_geometry(api_client):
    spec = preset_doc(api_client, "cs231n")["spec"]
    assert spec["x_shape"] == [1, 3, 5, 5] and spec["w_shape"] == [2, 3, 3, 3]
    assert spec["stride"] == [2, 2] and spec["padding"] == [1, 1, 1, 1] and spec["out_shape"] == [1, 2, 3, 3]


def test_preset_stride2_leaves_gaps_in_dx(api_client):
    dx = tensor(preset_doc(api_client, "stride2"), "dx")[0, 0]
    assert np.all(dx[4, :] == 0) and np.all(dx[:, 4] == 0)
    assert np.count_nonzero(dx[:4, :4]) > 0


def test_preset_dilation2_reads_with_step_2(api_client):
    doc = preset_doc(api_client, "dilation2")
    assert doc["spec"]["kernel_extent"] == [5, 5]
    reads = [
        r for e in doc["events"] if e["phase"] == "forward" for r in e["reads"] if r["tensor"] == "x"
    ]  # no padding
    assert reads and all(r["step"][2:] == [2, 2] for r in reads)


def test_preset_depthwise_has_one_channel_per_filter(api_client):
    spec = preset_doc(api_client, "depthwise")["spec"]
    assert spec["groups"] == 3 and spec["w_shape"][1] == 1


def test_preset_same_even_pads_bottom_and_right(api_client):
    doc = preset_doc(api_client, "same_even")
    assert doc["spec"]["padding"] == [0, 1, 0, 1]
    assert doc["spec"]["out_shape"] == doc["spec"]["x_shape"]


def test_preset_nhwc_relu_has_dead_units_that_stop_gradients(api_client):
    doc = preset_doc(api_client, "nhwc_relu")
    assert doc["spec"]["layout"] == "NHWC"
    z, dz, dout = tensor(doc, "z"), tensor(doc, "dz"), tensor(doc, "dout")
    dead = z <= 0
    assert dead.any() and (~dead).any()
    assert np.all(dz[dead] == 0)
    assert np.any(dout[dead] != 0)  # the gradient arrived and was stopped


def test_preset_batch2(api_client):
    spec = preset_doc(api_client, "batch2")["spec"]
    assert spec["x_shape"][0] == 2 and spec["w_shape"][0] == 2


def test_unknown_preset_is_a_404_naming_the_presets(api_client):
    response = api_client.get("/api/presets/lenet")
    assert response.status_code == 404
    assert "'lenet'" in response.json()["detail"][0]["msg"] and "cs231n" in response.json()["detail"][0]["msg"]


# -- trace, stream -----------------------------------------------------------------------

CONFIG = {
    "x": {"fill": "randint", "shape": [1, 2, 5, 5], "low": -3, "high": 3, "seed": 5},
    "w": {"fill": "randint", "shape": [2, 2, 3, 3], "low": -2, "high": 2, "seed": 6},
    "b": [1, -1],
    "dout": {"fill": "normal", "shape": [1, 2, 3, 2], "seed": 7},
    "stride": 2,
    "padding": [1, 0],
    "activation": "tanh",
}


def test_trace_document_equals_convcore_build_trace(api_client):
    response = api_client.post("/api/trace", json=CONFIG)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    served = response.json()
    assert served.pop("check")["max_rel_error"] < 1e-8  # the server's addition
    assert served == json.loads(json.dumps(build_trace(CONFIG)))


def _counting_builds(monkeypatch) -> list[int]:
    """Count the documents the trace route builds (cache misses)."""
    from convscope.api import trace as trace_routes

    builds: list[int] = []
    real = trace_routes.document_bytes

    def counted(prepared, cancel=None):
        builds.append(1)
        return real(prepared, cancel)

    monkeypatch.setattr(trace_routes, "document_bytes", counted)
    return builds


def test_repeated_trace_requests_give_the_same_bytes(page_dir, monkeypatch):
    # without the cache: two documents built from scratch are byte-identical
    from fastapi.testclient import TestClient

    from convscope.app import create_app
    from convscope.settings import Settings

    builds = _counting_builds(monkeypatch)
    with TestClient(create_app(Settings(cache_entries=0), static_dir=page_dir)) as client:
        first = client.post("/api/trace", json=CONFIG)
        second = client.post("/api/trace", json=CONFIG)
    assert len(builds) == 2
    assert first.status_code == 200 and first.content == second.content


def test_the_document_cache_returns_the_same_bytes_without_building(api_client, monkeypatch):
    builds = _counting_builds(monkeypatch)
    first = api_client.post("/api/trace", json=CONFIG)
    second = api_client.post("/api/trace", json=CONFIG)
    assert len(builds) == 1  # the second answer came from the cache
    assert first.status_code == 200 and first.content == second.content


def test_stream_is_header_events_end_and_matches_the_document(api_client):
    response = api_client.post("/api/trace/stream", json=CONFIG)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = ndjson(response.text)
    doc = api_client.post("/api/trace", json=CONFIG).json()
    header, events, end = lines[0], lines[1:-1], lines[-1]
    assert header["type"] == "header"
    assert {k: v for k, v in header.items() if k != "type"} == {k: v for k, v in doc.items() if k != "events"}
    assert all(e.pop("type") == "event" for e in events)
    assert events == doc["events"]
    assert end == {"type": "end", "total_events": len(doc["events"])}


def test_an_error_after_the_header_is_an_error_line(api_client, monkeypatch):
    from convscope.traces import prepare as tracing

    real = tracing.stream_lines

    def failing(prepared):
        lines = real(prepared)
        yield next(lines)
        yield next(lines)
        raise ValueError("the trace engine failed at event 1")

    monkeypatch.setattr(tracing, "stream_lines", failing)
    from convscope.api import trace as trace_routes

    monkeypatch.setattr(trace_routes, "stream_lines", failing)
    lines = ndjson(api_client.post("/api/trace/stream", json=CONFIG).text)
    assert [line["type"] for line in lines] == ["header", "event", "error"]
    assert lines[-1]["detail"][0]["msg"] == "the trace engine failed at event 1"


# -- conv ------------------------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv_matches_torch(api_client, layout):
    from oracle import torch_layer

    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, size=(2, 3, 5, 6)).astype(float)
    w = rng.integers(-2, 3, size=(4, 3, 3, 2)).astype(float)
    b = rng.normal(size=4)
    dout = rng.normal(size=(2, 4, 2, 5))
    nhwc = layout == "NHWC"
    body = {
        "layout": layout,
        "x": (x.transpose(0, 2, 3, 1) if nhwc else x).tolist(),
        "w": (w.transpose(2, 3, 1, 0) if nhwc else w).tolist(),
        "b": b.tolist(),
        "dout": (dout.transpose(0, 2, 3, 1) if nhwc else dout).tolist(),
        "stride": [2, 1],
        "padding": [1, 0, 0, 0],
        "activation": "relu",
    }
    response = api_client.post("/api/conv", json=body)
    assert response.status_code == 200, response.text[:300]
    got = response.json()
    expected = torch_layer(x, w, b, dout, stride=(2, 1), padding=(1, 0, 0, 0), activation="relu")
    z, out, dx, dw, db = expected.z, expected.out, expected.dx, expected.dw, expected.db
    to_layout = (lambda a: a.transpose(0, 2, 3, 1)) if nhwc else (lambda a: a)
    np.testing.assert_allclose(got["z"], to_layout(z), atol=1e-10)
    np.testing.assert_allclose(got["out"], to_layout(out), atol=1e-10)
    np.testing.assert_allclose(got["dx"], to_layout(dx), atol=1e-10)
    np.testing.assert_allclose(got["dw"], dw.transpose(2, 3, 1, 0) if nhwc else dw, atol=1e-10)
    np.testing.assert_allclose(got["db"], db, atol=1e-10)
    assert got["layout"] == layout and got["activation"] == "relu"
    assert got["spec"]["padding"] == [1, 0, 0, 0] and got["spec"]["out_shape"] == [2, 4, 2, 5]


def test_a_dout_fill_spec_without_shape_takes_the_output_shape(api_client):
    """The page picks a generator for dout without knowing the output size."""
    body = {
        "layout": "NHWC",
        "x": {"fill": "normal", "shape": [1, 6, 6, 2]},
        "w": {"fill": "normal", "shape": [3, 3, 2, 3]},
        "stride": 2,
        "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 5},
    }
    doc = api_client.post("/api/trace", json=body).json()
    with_shape = dict(body, dout=dict(body["dout"], shape=[1, 2, 2, 3]))
    assert doc["tensors"]["dout"] == api_client.post("/api/trace", json=with_shape).json()["tensors"]["dout"]
    assert doc["spec"]["dout"] == "given" and doc["tensors"]["dout"]["shape"] == [1, 2, 2, 3]
    assert api_client.post("/api/conv", json=body).json()["dout"] == tensor(doc, "dout").tolist()
    with api_client.stream("POST", "/api/trace/stream", json=body) as response:
        assert json.loads(next(response.iter_lines()))["tensors"]["dout"] == doc["tensors"]["dout"]
    schema = api_client.get("/openapi.json").json()["components"]["schemas"]["TraceConfig"]["properties"]["dout"]
    assert any(option.get("required") == ["fill"] for option in schema["anyOf"])
    # a wrong shape is still refused, naming dout and both shapes
    wrong = api_client.post("/api/trace", json=dict(body, dout=dict(body["dout"], shape=[1, 3, 3, 3])))
    assert wrong.status_code == 422 and wrong.json()["detail"][0]["loc"] == ["body", "dout"]
    assert "(1, 3, 3, 3)" in wrong.json()["detail"][0]["msg"] and "(1, 2, 2, 3)" in wrong.json()["detail"][0]["msg"]


def test_conv_without_dout_uses_ones_and_gives_db_without_bias(api_client):
    got = api_client.post(
        "/api/conv", json={"x": [[[[0, 1, 2], [3, 4, 5], [6, 7, 8]]]], "w": [[[[0, 1], [2, 3]]]]}
    ).json()
    assert got["out"] == [[[[19, 25], [37, 43]]]]
    assert got["dout"] == [[[[1, 1], [1, 1]]]]
    assert got["dw"] == [[[[8, 12], [20, 24]]]]  # sums of each kernel tap's four inputs
    assert got["db"] == [4]


def test_whole_documents_are_built_a_few_at_a_time(page_dir, monkeypatch):
    # a burst of large requests queues for a build slot instead of multiplying memory
    import threading
    import time

    from fastapi.testclient import TestClient

    import convscope.traces.prepare as tracing
    from convscope.app import create_app
    from convscope.settings import Settings

    running, peak, lock = 0, 0, threading.Lock()
    real_iter = tracing.iter_trace

    def counting_iter(config, **options):
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.05)
        try:
            yield from real_iter(config, **options)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(tracing, "iter_trace", counting_iter)
    # (8 at once from one address: its share of replies in flight is raised to 8)
    app = create_app(
        Settings(max_builds=2, cache_entries=0, queue_timeout=30, client_max_replies=8), static_dir=page_dir
    )
    with TestClient(app) as client:
        bodies = [{**CONFIG, "x": {"fill": "normal", "shape": [1, 2, 5, 5], "seed": k}} for k in range(8)]
        statuses: list[int] = []
        threads = [
            threading.Thread(target=lambda body=body: statuses.append(client.post("/api/trace", json=body).status_code))
            for body in bodies
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert statuses == [200] * 8 and peak == 2


@pytest.mark.parametrize("path", ["/api/trace", "/api/trace/stream", "/api/conv"])
@pytest.mark.parametrize("method", ["GET", "HEAD", "PUT", "DELETE"])
def test_other_methods_on_post_routes_are_405_with_allow_post(api_client, path, method):
    response = api_client.request(method, path)
    assert response.status_code == 405, response.text[:200]
    assert response.headers["allow"] == "POST, OPTIONS"
    if method != "HEAD":
        assert response.json()["detail"][0]["type"] == "method_not_allowed"
    # the page and its assets are still served by GET
    assert api_client.get("/").status_code == 200
    assert api_client.get("/js/main.js").status_code == 200


def test_the_405_routes_are_not_in_the_schema(api_client):
    paths = api_client.get("/openapi.json").json()["paths"]
    for path in ("/api/trace", "/api/trace/stream", "/api/conv"):
        assert set(paths[path]) == {"post"}


@pytest.mark.parametrize(
    "config",
    [
        CONFIG,
        {
            **CONFIG,
            "layout": "NHWC",
            "x": {"fill": "normal", "shape": [1, 5, 5, 2]},
            "w": {"fill": "normal", "shape": [3, 3, 2, 2]},
            "view": "im2col",
            "dout": {"fill": "normal", "seed": 4},
        },
        {**CONFIG, "phases": "forward", "granularity": "mac"},
    ],
)
def test_the_document_is_encoded_in_chunks_to_the_same_bytes(api_settings, config):
    # document_bytes encodes the events a chunk at a time: the bytes are those of the
    # whole document encoded at once
    from convcore.trace import build_trace
    from convscope.http.encoding import encode_json
    from convscope.traces import prepare as tracing

    prepared = tracing.prepare(config, api_settings)
    doc = build_trace(prepared.resolved, arrays=True)
    doc["check"] = tracing.gradient_check(prepared, doc)
    assert tracing.document_bytes(prepared) == encode_json(doc)
