"""Compare your numbers: the tensors a trace request carries under ``compare`` (your own
out, dx, dw, db) against the trace's, cell by cell (``convcore.compare``).

The response's ``comparison`` holds, per tensor sent, whether it matches and, when it
does not, its shape or every differing cell with the expected and the received value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from convcore.compare import compare_tensors
from convcore.spec import ConvSpecError
from convcore.tensor_input import to_array

from ..http.errors import ApiError

__all__ = ["COMPARABLE", "TRANSPOSED_COMPARABLE", "comparison"]

COMPARABLE = ("out", "dx", "dw", "db")
TRANSPOSED_COMPARABLE = ("y", "dx", "dw", "db")  # a transposed layer's: its output is y


def _refuse(loc: list[str], msg: str) -> ApiError:
    return ApiError(422, ["body", "compare", *loc], msg, "value_error")


def _empty(value: Any) -> bool:
    """Rectangular nested lists holding no number: [[[]]]."""
    try:
        return isinstance(value, list) and np.asarray(value, dtype=np.float64).size == 0
    except (TypeError, ValueError):
        return False


def comparison(header: Mapping[str, Any], student: Any) -> dict[str, Any]:
    """Per tensor of ``student`` (a {name: nested lists} object), its comparison with the
    trace header's tensor of that name, in the header's (the request's) layout."""
    if not isinstance(student, Mapping):
        raise _refuse([], f'compare must be an object like {{"dx": [...]}}, got a {type(student).__name__}')
    tensors = header["tensors"]
    comparable = TRANSPOSED_COMPARABLE if header["spec"].get("layer") == "conv_transpose2d" else COMPARABLE
    expected = {}
    for name in student:
        if name not in comparable:
            raise _refuse([str(name)[:40]], f"compare can hold {', '.join(comparable)}; got {str(name)[:40]!r}")
        if name not in tensors:
            why = "the layer has no bias (send b)" if name == "db" else "its phases do not compute it"
            raise _refuse([name], f"{name} is not in this trace: {why}")
        if isinstance(student[name], Mapping):
            raise _refuse([name], f"compare.{name} must be nested lists of numbers, not an object")
        if student[name] is not None:  # (None: nothing returned, compared as such)
            try:  # typed numbers are checked as inputs are: a word, a gap or NaN names its cell
                to_array(student[name], f"compare.{name}")
            except ConvSpecError as exc:
                if not _empty(student[name]):  # an empty result (a crop of [pad:-pad] at pad 0) is a shape
                    raise _refuse([name], str(exc)) from exc
        t = tensors[name]
        expected[name] = np.asarray(t["data"], dtype=np.float64).reshape(t["shape"])
    return compare_tensors(expected, student)
