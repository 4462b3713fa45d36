"""The browser tests' kept contexts (test_browser_helpers.KeptContexts): a module's tests
open their pages in contexts kept from test to test, to load pages at half the cost; what
one test leaves in the server's origin's storage must not reach the next."""

from __future__ import annotations

import pytest
from test_browser_helpers import require_chromium

pytestmark = pytest.mark.browser

require_chromium()

LEAVE_STORAGE_JS = """async () => {
  localStorage.setItem('left', 'by the last test');
  document.cookie = 'left=1; path=/';
  await new Promise((done) => { const r = indexedDB.open('left', 1); r.onupgradeneeded = () => r.result.createObjectStore('s'); r.onsuccess = () => { r.result.close(); done(); }; });
}"""
STORAGE_JS = """async () => ({
  local: localStorage.length,
  cookie: document.cookie,
  databases: (await indexedDB.databases()).map((d) => d.name),
})"""
EMPTY = {"local": 0, "cookie": "", "databases": []}


def test_a_kept_context_starts_a_test_without_the_last_test_s_storage(kept_contexts, open_page, base_url):
    first = open_page("/#s=0&l=d2l", viewport=(1366, 768)).page
    context = first.context
    first.evaluate(LEAVE_STORAGE_JS)
    assert first.evaluate(STORAGE_JS) != EMPTY
    # the same test's second page: a context of its own, with storage of its own
    second = open_page("/#s=0&l=d2l", viewport=(1366, 768)).page
    assert second.context is not context
    assert second.evaluate(STORAGE_JS) == EMPTY
    # what the next test gets: the first context again, its pages closed, storage gone
    kept_contexts.end_test()
    assert first.is_closed() and second.is_closed()
    again = kept_contexts.page(0, {"accept_downloads": True})
    assert again.context is context
    again.goto(base_url + "/?debug#s=0&l=d2l")
    assert again.evaluate(STORAGE_JS) == EMPTY
    # a context a test closed is replaced, not handed out closed
    context.close()
    fresh = kept_contexts.page(0, {"accept_downloads": True})
    assert fresh.context is not context and not fresh.is_closed()
