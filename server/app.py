"""The FastAPI application: ``create_app(settings)``.

Routers: the page (``/``), ``/api/health``, ``/api/presets``, ``/api/trace``,
``/api/trace/stream``, ``/api/conv`` (and ``/api/debug/stats`` in debug mode). The
page's assets are served from the package's static folder only, under ``/static/``
and at the root (so that ``index.html`` may use relative paths). No endpoint reads or
writes a file named by a request; no user code runs.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from convcore import __version__

from .errors import install_error_handlers
from .follow.routes import router as follow_router
from .routes import debug, health, meta, pages, presets, trace
from .security import BodySizeLimit, SecurityHeaders
from .settings import Settings
from .static_files import find_static_dir
from .streaming import StreamStats
from .tracing import DocumentCache

__all__ = ["create_app", "create_app_from_env"]

DESCRIPTION = """\
ConvScope shows, step by step, how a 2-D convolution computes its output and how the
backward pass accumulates dW, dX and db. The trace endpoints return the steps as a JSON
document (schema `convscope.trace/1`) or as NDJSON lines; `/api/conv` returns the
numbers only. Tensors are nested lists of numbers or fill specs; parameters have
PyTorch's names. Bad input gets a 422 naming the field and the numbers; requests over
the limits (see `/api/health`) get a 413 naming the count and the limit.
"""


def create_app(settings: Settings | None = None, static_dir: Path | None = None) -> FastAPI:
    """A ConvScope application.

    settings : limits and switches (default: from the CONVSCOPE_* environment)
    static_dir : the page's folder (default: the installed or checked-out static/)
    """
    settings = settings if settings is not None else Settings.from_env()
    app = FastAPI(
        title="ConvScope",
        version=__version__,
        description=DESCRIPTION,
        docs_url=None,  # Swagger UI and ReDoc load scripts from a CDN: not here.
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.static_dir = static_dir if static_dir is not None else find_static_dir()
    app.state.stream_stats = StreamStats()
    app.state.cache = DocumentCache(settings.cache_entries)

    install_error_handlers(app)
    app.include_router(pages.router)
    app.include_router(health.router)
    app.include_router(meta.router)
    app.include_router(presets.router)
    app.include_router(trace.router)
    app.include_router(follow_router)
    if settings.debug:
        app.include_router(debug.router, include_in_schema=False)

    folder = app.state.static_dir
    if folder is not None:
        app.mount("/static", StaticFiles(directory=folder), name="static")
        app.mount("/", StaticFiles(directory=folder), name="assets")

    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["content-type"],
        )
    app.add_middleware(BodySizeLimit, limit=settings.max_body_bytes, timeout=settings.body_timeout)
    app.add_middleware(SecurityHeaders)
    return app


def create_app_from_env() -> FastAPI:
    """The application configured by CONVSCOPE_* variables (uvicorn's factory, used by
    ``convscope serve`` so that every worker builds the same app)."""
    return create_app(Settings.from_env())
