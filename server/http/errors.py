"""Errors for people, in FastAPI's shape: ``{"detail": [{"loc", "msg", "type"}]}``.

Every refusal of the service (400 foreign host, 404, 405, 408, 413 too large, 415
not JSON, 422 bad input, 503 busy) uses this shape, so a
client reads ``detail[0].msg`` whatever went wrong. The request-validation handler
drops pydantic's ``input`` echo: it may hold NaN (which is not JSON) or a whole tensor.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from .disconnect import ClientGone
from .methods import allow_header

__all__ = ["ApiError", "error_body", "install_error_handlers", "too_large", "unprocessable"]


def error_body(loc: Sequence[str | int], msg: str, kind: str) -> dict[str, Any]:
    return {"detail": [{"loc": list(loc), "msg": msg, "type": kind}]}


class ApiError(Exception):
    """A refusal with an HTTP status, a location (``["body", field]``) and a message."""

    def __init__(
        self, status_code: int, loc: Sequence[str | int], msg: str, kind: str, headers: dict[str, str] | None = None
    ):
        super().__init__(msg)
        self.headers = headers
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
    return JSONResponse(exc.body(), status_code=exc.status_code, headers=exc.headers)


MAX_DETAILS = 10  # problems listed in one answer: 70 000 unknown keys must not give 6 MB


async def _validation_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    detail = []
    for error in errors[:MAX_DETAILS]:
        msg = _clean_msg(error.get("msg", ""))
        given = error.get("input")
        if isinstance(given, float) and not math.isfinite(given):
            msg = f"{msg}, got {given}"
        detail.append(
            {"loc": _clean_loc(error.get("loc", ["body"])), "msg": msg, "type": str(error.get("type", "value_error"))}
        )
    if len(errors) > MAX_DETAILS:
        more = len(errors) - MAX_DETAILS
        detail.append({"loc": ["body"], "msg": f"and {more} more problems of the same kind", "type": "more_errors"})
    return JSONResponse({"detail": detail}, status_code=422)


def _unreadable_body(cause: BaseException | None) -> str:
    """Why FastAPI could not parse a body, from the exception behind its bare 400.

    Valid JSON can still be unreadable: nested deeper than the parser recurses (a
    RecursionError) or holding an integer longer than Python converts from text (a
    ValueError naming the digits). Anything else is not UTF-8 JSON text.
    """
    if isinstance(cause, RecursionError):
        return (
            "the body nests too deep (more than about "
            f"{sys.getrecursionlimit() - 50} levels of lists and objects); no config needs that"
        )
    if isinstance(cause, ValueError) and not isinstance(cause, UnicodeError) and "digits" in str(cause):
        found = re.search(r"value has (\d+) digits", str(cause))
        digits = f"{found.group(1)} digits" if found else "too many digits"
        return (
            f"a number in the body has {digits}; numbers of more than "
            f"{sys.get_int_max_str_digits()} digits are not read"
        )
    return "the body is not JSON text (it must be UTF-8 encoded JSON)"


_KINDS = {
    404: ("path", "not_found"),
    405: ("method", "method_not_allowed"),
    408: ("request", "timeout"),
    413: ("body", "too_large"),
    415: ("body", "unsupported_media_type"),
}


async def _http_error_handler(request: Request, exc: Exception) -> Response:
    """Every HTTP error in the service's shape. FastAPI answers a body it cannot parse
    (not UTF-8, nested too deep, a number of thousands of digits) with a bare 400; that
    becomes a 422 that says which, in the same shape as every other unreadable body. A
    404 names the path; a 405 from the static files names the methods they take."""
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400 and exc.detail == "There was an error parsing the body":
        return JSONResponse(
            error_body(["body"], _unreadable_body(exc.__cause__), "json_invalid"),
            status_code=422,
        )
    headers = dict(exc.headers or {})
    if isinstance(exc.detail, list):  # already the service's items (the body checks)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)
    where, kind = _KINDS.get(exc.status_code, ("request", "http_error"))
    path = request.url.path[:80]
    if exc.status_code == 404:
        msg = f"nothing here: {path} is neither a page file nor an API route (see /docs)"
    elif exc.status_code == 405:
        # the router names its route's methods; the page's files (StaticFiles) name none
        allow = headers.pop("Allow", headers.pop("allow", "GET"))
        headers["Allow"] = allow_header({m.strip() for m in allow.split(",")})
        msg = f"{request.method} is not allowed on {path}: the methods are {headers['Allow']}"
    else:
        msg = str(exc.detail)
    return JSONResponse(error_body([where], msg, kind), status_code=exc.status_code, headers=headers)


async def _client_gone_handler(request: Request, exc: Exception) -> Response:
    """The client left before its reply was ready: nobody reads this (499, as proxies log it)."""
    return Response(status_code=499)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _api_error_handler)
    app.add_exception_handler(RequestValidationError, _validation_handler)
    app.add_exception_handler(StarletteHTTPException, _http_error_handler)
    app.add_exception_handler(ClientGone, _client_gone_handler)
