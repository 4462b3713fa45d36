"""The page's files are kept by the browser (server/http/page_cache.py): a page loaded
again in the same browser asks the server for index.html (and the API) alone, and
Chromium takes every module, the style and the icon from its cache."""

from __future__ import annotations

import pytest
from test_browser_helpers import debug_url, require_chromium, wait_complete

pytestmark = pytest.mark.browser

require_chromium()

# each file the page loaded: (its path, bytes that came over the network: 0 from the cache)
RESOURCES_JS = """() => performance.getEntriesByType('resource')
  .filter((r) => new URL(r.name).pathname.startsWith('/v/'))
  .map((r) => [new URL(r.name).pathname, r.transferSize])"""
NAVIGATION_JS = "() => performance.getEntriesByType('navigation')[0].transferSize"


def test_a_page_loaded_again_asks_only_for_index_html(browser, base_url):
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        loads = []
        for _ in range(2):
            page = context.new_page()
            page.goto(debug_url(f"{base_url}/#s=0&l=cs231n"))
            wait_complete(page)
            loads.append((page.evaluate(NAVIGATION_JS), dict(page.evaluate(RESOURCES_JS))))
            page.close()
        (_, first), (again_page, again) = loads
        assert len(first) > 60 and {"/main.js", "/style.css", "/favicon.svg"} <= {p[p.index("/", 3) :] for p in first}
        # (the first load fetches each module; the icon, shown twice, comes once)
        assert all(size > 0 for path, size in first.items() if path.endswith((".js", ".css"))), first
        assert again.keys() == first.keys()
        fetched = {path: size for path, size in again.items() if size != 0}
        assert not fetched, f"asked for again: {fetched}"
        assert again_page > 0  # (index.html itself: asked for on every load)
    finally:
        context.close()
