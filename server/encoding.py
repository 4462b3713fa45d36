"""The JSON encoder of large response bodies (trace documents, stream lines, results).

orjson when installed (measured in bench/server.py against FastAPI's default path);
the standard library otherwise, so that a missing optional wheel slows the service down
but never breaks it. Both refuse nothing finite; inputs are checked to be finite at the
boundary, so no NaN reaches them.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

__all__ = ["ENCODER", "JSONBytesResponse", "encode_json"]

try:
    import orjson
except ImportError:  # pragma: no cover - exercised only without orjson
    orjson = None  # type: ignore[assignment]

if orjson is not None:
    ENCODER = "orjson"
    _OPTIONS = orjson.OPT_SERIALIZE_NUMPY

    def encode_json(value: Any) -> bytes:
        """``value`` (dicts, lists, numbers, strings, NumPy arrays) as compact JSON bytes."""
        return orjson.dumps(value, option=_OPTIONS)

else:  # pragma: no cover
    ENCODER = "json"

    def _default(value: Any) -> Any:
        if hasattr(value, "tolist"):
            return value.tolist()
        raise TypeError(f"{type(value).__name__} is not JSON serializable")

    def encode_json(value: Any) -> bytes:
        """``value`` (dicts, lists, numbers, strings, NumPy arrays) as compact JSON bytes."""
        return json.dumps(value, separators=(",", ":"), allow_nan=False, default=_default).encode()


class JSONBytesResponse(Response):
    """A JSON response whose body is already encoded, or is encoded with ``encode_json``."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        if isinstance(content, bytes):
            return content
        return encode_json(content)
