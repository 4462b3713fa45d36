"""The FastAPI application: ``create_app(settings)``.

Routers: the page (``/``), ``/api/health``, ``/api/presets``, ``/api/trace``,
``/api/trace/stream``, ``/api/conv`` (and ``/api/debug/stats`` in debug mode). The
page's assets are the package's static folder: under ``/v/<version>/``, the paths
index.html links (kept by browsers: ``http/page_cache.py``), and as FastAPI's
low-priority frontend routes under ``/static/`` and at the root. No endpoint reads or
writes a file outside that folder named by a request; no user code runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from convcore import __version__

from .api import debug, health, lesson, meta, mistakes, pages, presets, questions, trace
from .follow.broker import BrokerDown
from .follow.question_routes import router as follow_question_router
from .follow.routes import broker_down
from .follow.routes import router as follow_router
from .http.api_docs import install_docs
from .http.errors import install_error_handlers
from .http.fair_share import ClientShares, FairShare
from .http.hosts import allowed_hosts
from .http.methods import MethodRules
from .http.page_cache import PageVersion
from .http.replies import Pace
from .http.security import HostCheck, RequestBody, SecurityHeaders
from .http.static_files import find_static_dir
from .settings import Settings
from .traces.build_slots import BuildGate
from .traces.prepare import DocumentCache
from .traces.shared_builds import SharedBuilds
from .traces.streaming import StreamStats

__all__ = ["create_app", "create_app_from_env"]

DESCRIPTION = """\
ConvScope shows, step by step, how a 2-D convolution computes its output and how the
backward pass accumulates dW, dX and db. The trace endpoints return the steps as a JSON
document (schema `convscope.trace/3`) or as NDJSON lines; `/api/conv` returns the
numbers only. Tensors are nested lists of numbers or fill specs; parameters have
PyTorch's names. Bad input gets a 422 naming the field and the numbers; requests over
the limits (see `/api/health`) get a 413 naming the measure, its value and the limit;
when every build slot of a worker stays taken, a 503 with `Retry-After`.
"""


# Builds run in threads and hold the GIL; the event loop (health, the page's files, every
# socket) needs it back after each wait. CPython hands it over every 5 ms by default, so
# with a few builds running a cheap request waited 100 ms and more; at 0.5 ms it waits a
# few ms (tests/test_server_hostile.py holds /api/health under 100 ms under load).
SWITCH_INTERVAL = 0.0005


def create_app(settings: Settings | None = None, static_dir: Path | None = None) -> FastAPI:
    """A ConvScope application.

    settings : limits and switches (default: from the CONVSCOPE_* environment)
    static_dir : the page's folder (default: the installed or checked-out static/)
    """
    settings = settings if settings is not None else Settings.from_env()
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
    app = FastAPI(
        title="ConvScope",
        version=__version__,
        description=DESCRIPTION,
        docs_url=None,  # FastAPI's pages load scripts from a CDN: convscope.http.api_docs serves local ones
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.static_dir = static_dir if static_dir is not None else find_static_dir()
    app.state.stream_stats = StreamStats()
    app.state.cache = DocumentCache(settings.cache_entries)
    app.state.gate = BuildGate(settings.max_builds, settings.queue_timeout, settings.buffer_bytes)
    app.state.builds = SharedBuilds(app.state.gate)
    app.state.pace = Pace(settings.send_grace, settings.min_send_rate)

    install_error_handlers(app)
    app.include_router(pages.router)
    app.include_router(health.router)
    app.include_router(meta.router)
    app.include_router(presets.router)
    app.include_router(mistakes.router)
    app.include_router(trace.router)
    app.include_router(questions.router)
    app.include_router(lesson.router)
    app.include_router(follow_router)
    app.include_router(follow_question_router)
    app.add_exception_handler(BrokerDown, broker_down)
    if settings.debug:
        app.include_router(debug.router, include_in_schema=False)
    install_docs(app)
    _document_body_refusals(app)

    folder = app.state.static_dir
    # the page's files under their version (api/pages.py), the version index.html links
    app.state.page_files = StaticFiles(directory=folder, check_dir=False) if folder is not None else None
    app.state.page_version = PageVersion(folder) if folder is not None else None
    if folder is not None:
        # FastAPI's low-priority frontend routes: tried only when no API route matches the
        # path, so a wrong method on an API path is the router's own 405
        app.frontend("/static", directory=folder, fallback=None, check_dir=False)
        app.frontend("/", directory=folder, fallback=None, check_dir=False)

    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["content-type"],
        )
    app.add_middleware(RequestBody, limit=settings.max_body_bytes)
    app.add_middleware(MethodRules, router_app=app, cors=bool(settings.cors_origins))
    app.state.shares = ClientShares(settings)
    app.add_middleware(FairShare, shares=app.state.shares)  # inside the Host check: a foreign Host is a 400 first
    app.add_middleware(HostCheck, hosts=allowed_hosts(settings))
    app.add_middleware(SecurityHeaders)  # outermost: every reply, refusals included
    return app


def _document_body_refusals(app: FastAPI) -> None:
    """Every operation with a request body may get the 415 of ``RequestBody`` (a body
    that is not UTF-8 JSON), and every API operation the 429 of ``FairShare`` (a client
    address past its share), whichever router it comes from: say so in the schema."""
    build = app.openapi
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = build()
            for path, operations in schema.get("paths", {}).items():
                for operation in operations.values():
                    if not isinstance(operation, dict):
                        continue
                    responses = operation.setdefault("responses", {})
                    if "requestBody" in operation:
                        responses.setdefault(
                            "415",
                            {
                                "description": "Not a JSON body: names the content type, charset or encoding sent.",
                                "content": error,
                            },
                        )
                    if path.startswith("/api/"):
                        responses.setdefault(
                            "429",
                            {
                                "description": "This client address is past one of its shares (server/http/fair_share.py): "
                                "names it and its numbers; see Retry-After.",
                                "content": error,
                                "headers": {
                                    "Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}
                                },
                            },
                        )
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def create_app_from_env() -> FastAPI:
    """The application configured by CONVSCOPE_* variables (uvicorn's factory, used by
    ``convscope serve`` so that every worker builds the same app)."""
    return create_app(Settings.from_env())
