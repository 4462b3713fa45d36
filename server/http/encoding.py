"""The JSON encoder of large response bodies (trace documents, stream lines, results).

orjson, a dependency of the package (measured in bench/server.py against the standard
library and FastAPI's default path). It refuses nothing finite; inputs are checked to be
finite at the boundary, so no NaN reaches it.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

__all__ = ["ENCODER", "JSONBytesResponse", "encode_json"]

ENCODER = "orjson"
_OPTIONS = orjson.OPT_SERIALIZE_NUMPY


def encode_json(value: Any) -> bytes:
    """``value`` (dicts, lists, numbers, strings, NumPy arrays) as compact JSON bytes."""
    return orjson.dumps(value, option=_OPTIONS)


class JSONBytesResponse(Response):
    """A JSON response whose body is already encoded, or is encoded with ``encode_json``."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        if isinstance(content, bytes):
            return content
        return encode_json(content)
