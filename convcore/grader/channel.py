"""The grader's channel between the parent, which never runs a student's code, and the
child that does: length-prefixed JSON frames over a pipe, arrays as float64 bytes.

The child's replies are data, never code: nothing is unpickled, every field is
checked, and a frame that is not one of the replies the parent asked for (the
student's code writing to the pipe it found among its descriptors) breaks the check
instead of being believed. A well-formed forged reply is no more than a return value:
the parent compares it with its own truth, as it would the student's.
"""

from __future__ import annotations

import base64
import json
import os
import select
import struct
import time
from typing import Any

import numpy as np

from ..mistakes import Failure

__all__ = [
    "ChannelBroken",
    "ChannelClosed",
    "ChannelTimeout",
    "MAX_FRAME_BYTES",
    "decode_array",
    "decode_results",
    "encode_array",
    "encode_results",
    "read_frame",
    "write_frame",
]

MAX_FRAME_BYTES = 64 * 2**20  # a reply of the largest case the search draws is under 100 kB
MAX_TEXT = 2000  # characters of a failure's kind or message kept
_HEADER = struct.Struct(">Q")


class ChannelBroken(Exception):
    """The other end closed the pipe, or wrote something that is not a frame."""


class ChannelClosed(ChannelBroken):
    """The other end closed the pipe (the child ended, or the parent is done)."""


class ChannelTimeout(Exception):
    """No whole frame arrived before the deadline."""


def write_frame(fd: int, message: dict[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    data = _HEADER.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


def _read_exactly(fd: int, count: int, deadline: float) -> bytes:
    parts: list[bytes] = []
    while count:
        left = None if deadline == float("inf") else deadline - time.monotonic()
        if left is not None and (left <= 0 or not select.select([fd], [], [], left)[0]):
            raise ChannelTimeout()
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            raise ChannelClosed("the pipe was closed")
        parts.append(chunk)
        count -= len(chunk)
    return b"".join(parts)


def read_frame(fd: int, deadline: float = float("inf")) -> dict[str, Any]:
    """The next frame's message (a JSON object), waiting until ``deadline``
    (time.monotonic); ChannelTimeout, or ChannelBroken on a closed or garbled pipe."""
    (length,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size, deadline))
    if length > MAX_FRAME_BYTES:
        raise ChannelBroken(f"a frame of {length} bytes (at most {MAX_FRAME_BYTES})")
    try:
        message = json.loads(_read_exactly(fd, length, deadline))
    except ValueError as exc:
        raise ChannelBroken(f"a frame that is not JSON ({exc})") from None
    if not isinstance(message, dict):
        raise ChannelBroken("a frame that is not a JSON object")
    return message


def encode_array(array: np.ndarray) -> dict[str, Any]:
    array = np.ascontiguousarray(array, dtype="<f8")
    return {"shape": list(array.shape), "data": base64.b64encode(array.tobytes()).decode("ascii")}


def decode_array(value: Any) -> np.ndarray:
    """The float64 array ``encode_array`` wrote; ChannelBroken if it is not one."""
    if not isinstance(value, dict) or set(value) != {"shape", "data"}:
        raise ChannelBroken("an array field that is not {shape, data}")
    shape, data = value["shape"], value["data"]
    if not isinstance(shape, list) or len(shape) > 8 or not all(type(n) is int and n >= 0 for n in shape):
        raise ChannelBroken(f"an array shape that is not a list of sizes: {str(shape)[:80]}")
    if not isinstance(data, str):
        raise ChannelBroken("array data that is not base64 text")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        raise ChannelBroken("array data that is not base64") from None
    if len(raw) != 8 * int(np.prod(shape, dtype=np.int64)):
        raise ChannelBroken(f"{len(raw)} bytes of data for shape {tuple(shape)}")
    return np.frombuffer(raw, dtype="<f8").reshape(shape).astype(np.float64)


def encode_results(results: dict[str, Any]) -> dict[str, Any]:
    """A convention's results (arrays or Failures, by output name) as JSON data."""
    encoded: dict[str, Any] = {}
    for name, value in results.items():
        if isinstance(value, Failure):
            encoded[name] = {"failure": [str(value.kind)[:MAX_TEXT], str(value.message)[:MAX_TEXT]]}
            if value.site is not None:
                encoded[name]["site"] = value.site
        elif isinstance(value, np.ndarray):
            encoded[name] = {"array": encode_array(value)}
        else:
            encoded[name] = {"failure": ["not an array", f"{name} is a {type(value).__name__}"]}
    return encoded


def decode_results(value: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The results of ``names`` from a reply; ChannelBroken unless it holds exactly them."""
    if not isinstance(value, dict) or set(value) != set(names):
        raise ChannelBroken(
            f"results for {sorted(value) if isinstance(value, dict) else value!r:.80}, not for {list(names)}"
        )
    results: dict[str, Any] = {}
    for name in names:
        entry = value[name]
        if isinstance(entry, dict) and set(entry) == {"array"}:
            results[name] = decode_array(entry["array"])
        elif (
            isinstance(entry, dict)
            and set(entry) in ({"failure"}, {"failure", "site"})
            and isinstance(entry["failure"], list)
            and len(entry["failure"]) == 2
            and all(isinstance(t, str) for t in entry["failure"])
        ):
            kind, message = entry["failure"]
            results[name] = Failure(kind[:MAX_TEXT], message[:MAX_TEXT], _site(entry.get("site")))
        else:
            raise ChannelBroken(f"a result for {name} that is neither an array nor a failure")
    return results


def _site(value: Any) -> dict[str, Any] | None:
    """A crash site (``convcore.mistakes.crash_site``) as the child sent it, checked:
    {file, line, source, values: {name: text}}, every text bounded."""
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or set(value) != {"file", "line", "source", "values"}
        or not isinstance(value["file"], str)
        or type(value["line"]) is not int
        or not isinstance(value["source"], str)
        or not isinstance(value["values"], dict)
        or len(value["values"]) > 16
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in value["values"].items())
    ):
        raise ChannelBroken("a crash site that is not {file, line, source, values}")
    return {
        "file": value["file"][:200],
        "line": value["line"],
        "source": value["source"][:400],
        "values": {k[:60]: v[:200] for k, v in value["values"].items()},
    }
