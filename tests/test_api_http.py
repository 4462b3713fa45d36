"""HTTP details: OPTIONS answers with the route's real Allow, HEAD works where GET does,
every refusal (404, 405, 415 included) has the error shape and the security headers,
a body that is not UTF-8 JSON is refused naming what came, and /docs is served."""

from __future__ import annotations

import json

import pytest

from convscope.http.security import SECURITY_HEADERS

SECURITY = [name.decode() for name, _ in SECURITY_HEADERS]


def _is_refusal(response, status, kind):
    assert response.status_code == status, response.text[:300]
    detail = response.json()["detail"]
    assert isinstance(detail, list) and detail[0]["type"] == kind and detail[0]["msg"], detail
    for name in SECURITY:
        assert name in response.headers, name
    return detail[0]


def test_options_lists_the_routes_methods(api_client):
    paths = api_client.get("/openapi.json").json()["paths"]
    for path, operations in paths.items():
        url = path.replace("{name}", "cs231n")
        response = api_client.options(url)
        assert response.status_code == 204, (url, response.text)
        allow = {m.strip() for m in response.headers["allow"].split(",")}
        documented = {m.upper() for m in operations}
        assert allow - {"HEAD", "OPTIONS"} == documented, (url, allow)
        assert "OPTIONS" in allow and ("HEAD" in allow) == ("GET" in documented)


@pytest.mark.parametrize(
    "path", ["/", "/api/health", "/api/presets", "/api/presets/cs231n", "/openapi.json", "/js/main.js"]
)
def test_head_answers_as_get_without_the_body(api_client, path):
    get = api_client.get(path)
    head = api_client.head(path)
    assert get.status_code == head.status_code == 200, (path, head.status_code)
    assert head.content == b""
    assert head.headers.get("content-type") == get.headers.get("content-type")
    if "content-length" in get.headers:
        assert head.headers["content-length"] == get.headers["content-length"]


def test_404_and_405_have_the_error_shape_and_security_headers(api_client):
    detail = _is_refusal(api_client.get("/no/such/thing"), 404, "not_found")
    assert detail["loc"] == ["path"] and "/no/such/thing" in detail["msg"]
    response = api_client.delete("/api/health")
    detail = _is_refusal(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET, HEAD, OPTIONS" and "DELETE" in detail["msg"]
    response = api_client.post("/js/main.js", content=b"{}", headers={"content-type": "application/json"})
    _is_refusal(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET, HEAD, OPTIONS"


@pytest.mark.parametrize(
    ("content_type", "words"),
    [
        ("text/plain", ["Content-Type application/json", "text/plain"]),
        ("application/x-www-form-urlencoded", ["application/x-www-form-urlencoded"]),
        ("application/json; charset=utf-16", ["UTF-8", "utf-16"]),
        ("application/json; charset=latin-1", ["latin-1"]),
    ],
)
def test_a_body_that_is_not_json_is_refused_naming_the_content_type(api_client, content_type, words):
    response = api_client.post("/api/trace", content=b"{}", headers={"content-type": content_type})
    detail = _is_refusal(response, 415, "unsupported_media_type")
    assert detail["loc"] == ["header", "content-type"]
    for word in words:
        assert word in detail["msg"], detail["msg"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "utf-8-sig"])
def test_a_json_body_in_another_encoding_is_refused(api_client, encoding):
    body = json.dumps({"stride": 1}).encode(encoding)
    response = api_client.post("/api/conv", content=body, headers={"content-type": "application/json"})
    detail = _is_refusal(response, 415, "unsupported_media_type")
    assert "UTF-8" in detail["msg"]
    assert (
        api_client.post(
            "/api/conv",
            content=json.dumps({"stride": 1}).encode(),
            headers={"content-type": "application/json; charset=UTF-8"},
        ).status_code
        == 200
    )


def test_a_seed_past_32_bits_is_refused(api_client):
    body = {"x": {"fill": "normal", "shape": [1, 1, 5, 5], "seed": 2**200}}
    detail = _is_refusal(api_client.post("/api/trace", json=body), 422, "value_error")
    assert detail["loc"][:2] == ["body", "x"] and "4294967295" in detail["msg"]


def test_the_api_docs_are_served_from_this_server(api_client):
    page = api_client.get("/docs")
    assert page.status_code == 200 and "swagger-ui-bundle.js" in page.text
    assert "<script>" not in page.text  # no inline script: the page's CSP forbids it
    for url in ("/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css", "/docs/start.js"):
        assert api_client.get(url).status_code == 200, url
    assert "http" not in page.text.replace("http-equiv", "")  # nothing from elsewhere


def test_the_hosts_a_server_answers_to():
    from convscope.http.hosts import allowed_hosts, machine_names
    from convscope.settings import Settings

    local = allowed_hosts(Settings())
    assert {"127.0.0.1", "localhost", "::1"} <= local and "evil.example" not in local
    shared = allowed_hosts(Settings(bind_host="0.0.0.0", allowed_hosts=("Class.Example",)))
    assert machine_names() <= shared and "class.example" in shared
    assert allowed_hosts(Settings(bind_host="10.1.2.3")) == local | {"10.1.2.3"}


def test_the_host_check_refuses_a_name_it_does_not_know():
    import asyncio

    from convscope.http.security import HostCheck

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    def call(host):
        sent = []

        async def send(message):
            sent.append(message)

        async def receive():
            return {"type": "http.request", "body": b""}

        scope = {
            "type": "http",
            "method": "GET",
            "path": "/",
            "headers": [(b"host", host)],
            "client": ("192.0.2.7", 40000),
        }
        asyncio.run(HostCheck(app, frozenset({"127.0.0.1", "localhost", "::1"}))(scope, receive, send))
        return sent[0]["status"], sent[-1]["body"]

    assert call(b"127.0.0.1:8000")[0] == 200
    assert call(b"[::1]:8000")[0] == 200
    assert call(b"LOCALHOST")[0] == 200
    status, body = call(b"rebind.example:8000")
    assert status == 400 and b"rebind.example" in body and b'"host"' in body


def test_every_example_body_in_the_api_schema_is_answered_2xx(api_client):
    """/docs offers these bodies and its "Try it out" sends the first: each must work."""
    schema = api_client.get("/openapi.json").json()
    tried = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            examples = (
                operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("examples", {})
            )
            for name, example in examples.items():
                answer = api_client.request(method.upper(), path, json=example["value"])
                assert 200 <= answer.status_code < 300, (method, path, name, answer.text[:300])
                tried.append((path, name))
    assert {p for p, _ in tried} >= {"/api/trace", "/api/trace/stream", "/api/conv", "/api/lesson"}, tried
