"""Rebuild every tensor of a trace from its events alone.

The replay rule: a tensor with role "input" is taken from the header; every other
tensor starts at zero and each Write adds its ``delta`` (row-major over the Box's
cells) to the Box ``start:stop:step``, in event order. The result equals the header's
data for every tensor (the tests hold every view to this).

The same thing in ten lines, for a notebook::

    import numpy as np
    def replay(doc):
        t = {k: np.array(v["data"], float).reshape(v["shape"]) if v["role"] == "input"
             else np.zeros(v["shape"]) for k, v in doc["tensors"].items()}
        for event in doc["events"]:
            for wr in event["writes"]:
                box = tuple(slice(a, b, s) for a, b, s in zip(wr["start"], wr["stop"], wr["step"]))
                t[wr["tensor"]][box] += np.reshape(wr["delta"], t[wr["tensor"]][box].shape)
        return t
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

__all__ = ["TraceReplayError", "replay"]


class TraceReplayError(ValueError):
    """The trace is malformed (no header, an error line, a write out of range)."""


def _split(trace: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> tuple[Mapping, Iterator[Mapping]]:
    if isinstance(trace, Mapping):
        if "tensors" not in trace:
            raise TraceReplayError("a trace document needs 'tensors' and 'events'")
        return trace, iter(trace.get("events", ()))
    lines = iter(trace)
    header = next(lines, None)
    if not isinstance(header, Mapping) or header.get("type") != "header":
        raise TraceReplayError("a trace stream must start with a header line")

    def events() -> Iterator[Mapping]:
        for line in lines:
            kind = line.get("type")
            if kind == "event":
                yield line
            elif kind == "events":
                yield from line["events"]
            elif kind == "error":
                raise TraceReplayError(f"the trace stream reported an error: {line.get('detail')}")
            elif kind == "end":
                return

    return header, events()


def replay(trace: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """``{tensor name: ndarray}`` rebuilt from the events, shapes as in the header.

    ``trace`` is a document from ``build_trace`` or the items of ``iter_trace`` (or the
    parsed lines of the NDJSON stream, batched ``events`` lines included).
    """
    header, events = _split(trace)
    state: dict[str, np.ndarray] = {}
    for name, t in header["tensors"].items():
        if t["role"] == "input":
            state[name] = np.asarray(t["data"], dtype=np.float64).reshape(t["shape"])
        else:
            state[name] = np.zeros(t["shape"], dtype=np.float64)
    for k, event in enumerate(events):
        for wr in event["writes"]:
            target = state.get(wr["tensor"])
            if target is None:
                raise TraceReplayError(f"event {k} writes {wr['tensor']!r}, which the header does not have")
            box = tuple(slice(a, b, s) for a, b, s in zip(wr["start"], wr["stop"], wr["step"]))
            block = target[box]
            delta = np.asarray(wr["delta"], dtype=np.float64)
            if delta.size != block.size:
                raise TraceReplayError(
                    f"event {k} writes {delta.size} values to a Box of {block.size} cells of {wr['tensor']!r}"
                )
            block += delta.reshape(block.shape)
    return state
