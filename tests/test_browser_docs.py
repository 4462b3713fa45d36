"""The API's documentation page (/docs, Swagger UI) works offline in a real Chromium:
it draws every operation, no request leaves the machine, and the page's
Content-Security-Policy reports no violation."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from test_browser_helpers import base_url, browser, require_chromium, wait_until  # noqa: F401

pytestmark = pytest.mark.browser

require_chromium()


def test_the_api_docs_page_works_with_nothing_from_elsewhere(browser, base_url):  # noqa: F811
    context = browser.new_context()
    requests, problems = [], []
    context.on("request", lambda request: requests.append(request.url))  # workers too
    page = context.new_page()
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    try:
        page.goto(base_url + "/docs")
        wait_until(page, "document.querySelectorAll('.opblock').length >= 6")
        assert "/api/trace" in page.inner_text("#swagger-ui")
    finally:
        context.close()
    ours = urlparse(base_url).netloc
    foreign = [url for url in requests if urlparse(url).netloc not in (ours, "") and not url.startswith("data:")]
    assert foreign == [], foreign
    assert any(url.endswith("/openapi.json") for url in requests)
    violations = [p for p in problems if "Content Security Policy" in p or "Refused" in p]
    assert violations == [], violations
