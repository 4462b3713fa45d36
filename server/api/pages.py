"""GET / (the page) and GET /v/<version>/<path> (its files under a version: see
``http/page_cache.py``). The unversioned paths of its files are the frontend routes of
app.py."""

from __future__ import annotations

import os

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from ..http.errors import ApiError
from ..http.page_cache import ASK_AGAIN, KEEP, VERSIONED, linked_index

router = APIRouter(tags=["page"])


@router.get(
    "/",
    response_class=HTMLResponse,
    summary="The ConvScope page",
    responses={
        200: {"content": {"text/html": {}}, "description": "index.html, its files linked under their version"},
        404: {"description": "The page is not installed."},
    },
)
def index(request: Request) -> HTMLResponse:
    folder = request.app.state.static_dir
    page = folder / "index.html" if folder is not None else None
    if page is None or not page.is_file():
        raise ApiError(404, ["path"], "the page is not installed: static/index.html is missing", "not_found")
    html = linked_index(page.read_text(encoding="utf-8"), folder, request.app.state.page_version.current())
    return HTMLResponse(html, headers={"cache-control": ASK_AGAIN})


@router.get(VERSIONED + "{version}/{path:path}", include_in_schema=False)
async def page_file(version: str, path: str, request: Request) -> Response:
    """A file of the page's folder, by Starlette's StaticFiles (which keeps every path
    inside the folder): kept for good under the files' current version, asked for again
    under any other."""
    files = request.app.state.page_files
    if files is None:
        raise ApiError(404, ["path"], "the page is not installed", "not_found")
    response = await files.get_response(os.path.normpath(os.path.join(*path.split("/"))), request.scope)
    if response.status_code in (200, 304):
        response.headers["cache-control"] = KEEP if version == request.app.state.page_version.current() else ASK_AGAIN
    return response
