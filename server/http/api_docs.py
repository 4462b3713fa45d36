"""The API's own documentation page, offline: ``/docs`` (Swagger UI).

FastAPI's built-in pages load Swagger UI and ReDoc from a CDN and start them with an
inline script, which the page's Content-Security-Policy (``script-src 'self'``)
forbids. Here the scripts and styles come from the fastapi-offline package's copies
(served under ``/docs/assets/``) and the page starts it with a script of ours
(``/docs/start.js``), so nothing leaves the machine and the CSP stays. ReDoc is left
out: it styles itself with inline styles, which the CSP (``style-src 'self'``) blocks.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse, Response

__all__ = ["ASSETS", "install_docs"]

try:
    import fastapi_offline

    ASSETS: Path | None = Path(fastapi_offline.__file__).parent / "static"
except ImportError:  # pragma: no cover - the dependency is declared; without it no /docs
    ASSETS = None

_SWAGGER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} – API</title>
<link rel="icon" href="/docs/assets/favicon.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/start.js"></script></body></html>
"""

# validatorUrl null: Swagger UI would otherwise ask an outside validator about the schema
_START = """\
window.ui = SwaggerUIBundle({url: "/openapi.json", dom_id: "#swagger-ui", validatorUrl: null,
  deepLinking: true, presets: [SwaggerUIBundle.presets.apis], layout: "BaseLayout"});
"""


def install_docs(app: FastAPI) -> None:
    """Mount /docs, /docs/start.js and /docs/assets/ (when the assets are installed)."""
    if ASSETS is None or not ASSETS.is_dir():
        return
    title = app.title

    @app.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        return HTMLResponse(_SWAGGER.format(title=title))

    @app.get("/docs/start.js", include_in_schema=False)
    async def start() -> Response:
        return Response(_START, media_type="text/javascript")

    app.mount("/docs/assets", StaticFiles(directory=ASSETS), name="docs-assets")
