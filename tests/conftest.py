"""Shared fixtures.

Browser fixtures (``test_browser_helpers``): ``base_url`` (a live server of the real
app), ``browser`` (Debian's Chromium), ``kept_contexts`` and ``open_page``, each module its
own.

API fixtures (server helper): ``api_settings`` (default limits), ``api_app`` and
``api_client`` (a TestClient over a fresh app), ``page_dir`` (a small stand-in page
folder, so the API tests do not depend on the real page's files).
"""

from __future__ import annotations

import os
import stat

import pytest
from hypothesis import settings

# the browser tests' fixtures, one server and one Chromium per test module
from test_browser_helpers import base_url, browser, kept_contexts, open_page  # noqa: F401

# Hypothesis profiles: "ci", the example counts as each test states them (make test, CI);
# "dev", a quarter of them for a developer's loop (make check sets HYPOTHESIS_PROFILE=dev).
# strategies.examples() reads the loaded profile's max_examples.
settings.register_profile("ci", max_examples=100)
settings.register_profile("dev", max_examples=25)
settings.load_profile("ci" if os.environ.get("CI") == "true" else os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    # Starlette's TestClient prefers the httpx2 package and warns with plain httpx.
    config.addinivalue_line("filterwarnings", "ignore:.*httpx2.*")


@pytest.fixture
def api_settings():
    from convscope.settings import Settings

    return Settings()


@pytest.fixture
def page_dir(tmp_path):
    """A page folder: index.html, js/main.js and a file beside the folder that must
    never be served."""
    folder = tmp_path / "static"
    (folder / "js").mkdir(parents=True)
    (folder / "index.html").write_text(
        '<!doctype html><title>ConvScope</title><script type="module" src="js/main.js"></script>\n',
        encoding="utf-8",
    )
    (folder / "js" / "main.js").write_text("export const page = 'convscope';\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("not for the web\n", encoding="utf-8")
    return folder


@pytest.fixture
def api_app(api_settings, page_dir):
    from convscope.app import create_app

    return create_app(api_settings, static_dir=page_dir)


@pytest.fixture
def api_client(api_app):
    from fastapi.testclient import TestClient

    with TestClient(api_app) as client:
        yield client


@pytest.fixture
def marking_browser(tmp_path, monkeypatch):
    """CONVSCOPE_CHROMIUM set to a program that only leaves a mark: the mark says a
    browser was started."""
    mark = tmp_path / "started"
    program = tmp_path / "fake-chromium"
    program.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("CONVSCOPE_CHROMIUM", str(program))
    return mark
