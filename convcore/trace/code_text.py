"""The code beside the step, for a terminal: the header's listing with a step's lines
marked (``convscope trace --code --step N``).

``code_text(header, event=None, step=None)`` -> the text: a title line (the listing's
name and convention), with an event the step's line (its index, phase, loop values and
scalars) and its text, then the listing, numbered, the line the step runs marked
``>>`` and the step's other lines (its earlier writes) ``> ``. ``header``: a trace
header with a ``code`` (docs/trace-format.md, "The code beside the step").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import format as fmt

__all__ = ["code_text"]


def _values(values: Mapping[str, Any]) -> str:
    return " ".join(f"{name}={fmt.number(value)}" for name, value in values.items())


def code_text(header: Mapping[str, Any], event: Mapping[str, Any] | None = None, step: int | None = None) -> str:
    """The listing of ``header`` with ``event``'s lines marked (module notes); ``step``:
    the event's number from 1, as the page shows it. Raises ValueError when the header
    has no code."""
    code = header.get("code")
    if not code:
        raise ValueError("this trace has no code beside its steps (header code is null: no listing for its setting)")
    out = [f"{code['name']} ({code['convention']})"]
    current, others = None, set()
    if event is not None:
        current, others = event.get("line"), set(event.get("lines") or ())
        where = [f"step {step} of {header['total_events']}" if step is not None else "step", event["phase"]]
        where += [part for part in (_values(event["loop"]), _values(event.get("scalars", {}))) if part]
        out += [" · ".join(where), event["text"]]
        if current is None:
            out.append("(the listing has no line for this step)")
    out.append("")
    width = len(str(len(code["lines"])))
    for number, line in enumerate(code["lines"], start=1):
        mark = ">>" if number == current else "> " if number in others else "  "
        out.append(f"{number:>{width}} {mark} {line}".rstrip())
    return "\n".join(out) + "\n"
