"""Errors for people, in FastAPI's shape: ``{"detail": [{"loc", "msg", "type"}]}``.

Every refusal of the service (422 bad input, 413 too large) uses this shape, so a
client reads ``detail[0].msg`` whatever went wrong. The request-validation handler
drops pydantic's ``input`` echo: it may hold NaN (which is not JSON) or a whole tensor.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

__all__ = ["ApiError", "error_body", "install_error_handlers", "too_large", "unprocessable"]


def error_body(loc: Sequence[str | int], msg: str, kind: str) -> dict[str, Any]:
    return {"detail": [{"loc": list(loc), "msg": msg, "type": kind}]}


class ApiError(Exception):
    """A refusal with an HTTP status, a location (``["body", field]``) and a message."""

    def __init__(self, status_code: int, loc: Sequence[str | int], msg: str, kind: str):
        super().__init__(msg)
        self.status_code = status_code
        self.loc = list(loc)
        self.msg = msg
        self.kind = kind

    def body(self) -> dict[str, Any]:
        return error_body(self.loc, self.msg, self.kind)


def unprocessable(field: str | None, msg: str) -> ApiError:
    """422 for a bad value of ``field`` (a config key), or of the whole body."""
    loc = ["body", field] if field else ["body"]
    return ApiError(422, loc, msg, "value_error")


def too_large(field: str | None, msg: str) -> ApiError:
    """413 for a request that would exceed a limit."""
    loc = ["body", field] if field else ["body"]
    return ApiError(413, loc, msg, "too_large")


def _clean_loc(loc: Sequence[Any]) -> list[str | int]:
    """The location as strings and ints, a long key (an unknown key of 900 000
    characters) cut to a few dozen characters."""
    parts = [part if isinstance(part, (str, int)) and not isinstance(part, bool) else str(part) for part in loc]
    return [part[:39] + "…" if isinstance(part, str) and len(part) > 40 else part for part in parts]


def _clean_msg(msg: Any) -> str:
    text = str(msg)
    return text if text else "invalid value"


async def _api_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return JSONResponse(exc.body(), status_code=exc.status_code)


async def _validation_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    detail = []
    for error in exc.errors():
        msg = _clean_msg(error.get("msg", ""))
        given = error.get("input")
        if isinstance(given, float) and not math.isfinite(given):
            msg = f"{msg}, got {given}"
        detail.append({"loc": _clean_loc(error.get("loc", ["body"])), "msg": msg, "type": str(error.get("type", "value_error"))})
    return JSONResponse({"detail": detail}, status_code=422)


async def _http_error_handler(request: Request, exc: Exception) -> Response:
    """FastAPI answers a body it cannot decode (not UTF-8) with a bare 400; make it a
    422 in the same shape as every other unreadable body."""
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400 and exc.detail == "There was an error parsing the body":
        return JSONResponse(
            error_body(["body"], "the body is not JSON text (it must be UTF-8 encoded JSON)", "json_invalid"),
            status_code=422,
        )
    return await http_exception_handler(request, exc)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _api_error_handler)
    app.add_exception_handler(RequestValidationError, _validation_handler)
    app.add_exception_handler(StarletteHTTPException, _http_error_handler)
