"""GET / (the page). Its assets are the frontend routes of app.py."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from ..http.errors import ApiError

router = APIRouter(tags=["page"])


@router.get(
    "/",
    response_class=FileResponse,
    summary="The ConvScope page",
    responses={
        200: {"content": {"text/html": {}}, "description": "index.html"},
        404: {"description": "The page is not installed."},
    },
)
def index(request: Request) -> FileResponse:
    folder = request.app.state.static_dir
    page = folder / "index.html" if folder is not None else None
    if page is None or not page.is_file():
        raise ApiError(404, ["path"], "the page is not installed: static/index.html is missing", "not_found")
    return FileResponse(page, media_type="text/html")
