"""The mistakes lab: the trace of a mistake's computation, step by step, beside the truth.

```python
from convcore.mistakes.lab import build_mistake_trace
doc = build_mistake_trace({**get_mistake("empty_crop").setup_config()}, "empty_crop")
doc["first_divergence"], doc["divergence"]["did"], doc["failures"]["dx"]["message"]
```

A mistake trace is a trace of the trace schema (``convcore.trace.SCHEMA``) whose events are the steps of
the mistaken code (the mistake's ``loops``: the plain loops with one step changed,
``convcore.mistakes.in_cs231n``, ``in_layer``, ``in_torch``), so that ``replay`` rebuilds what that code computes, tensors of the shapes it
made included. Its header adds (docs/trace-format.md, "Mistake traces"):

- ``mistake``: id, title, wrong, should, source, convention of the catalogue entry;
- ``truth``: the true out, dx, dw, db (``{shape, data}``, the request's layout);
- ``differences``: per output the code returned, its comparison with the truth
  (``convcore.compare``'s format: match, kind, the differing cells with both values);
- ``failures``: per output the code did not return (it raised, returned None or an
  empty array): kind, NumPy's message as the catalogue's code gives it, and the event
  where the trace stopped (None when it did not stop);
- ``first_divergence``: the index of the first event whose writes differ from those of
  the correct loops' trace at the same index (None when every write agrees), and
  ``divergence``: that step's phase, what the code did (its text) and what it should
  have done (the correct step's text), with the catalogue's sentences.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..compare import compare_tensor, values_equal
from ..layer import layer_results
from ..trace.axes import kind_of
from ..trace.code import TraceCode
from ..trace.config import resolve_config
from ..trace.document import trace_header
from ..trace.drawing import DRAWINGS, tensor_drawing
from ..trace.loops import LOOP_WORDS
from ..trace.model import event_lines, stream_line
from .case import Case
from .catalogue import Mistake
from .conventions import Failure
from .lab_config import check_lab_config, lab_mistake
from .listing import LAB_ALIASES, mistake_code, mistake_listing
from .plain_loops import RESULTS, PlainLoops, Run

__all__ = ["build_mistake_trace", "first_divergence", "iter_mistake_trace", "mistake_header"]


def _external(name: str, arr: np.ndarray, layout: str) -> np.ndarray:
    perm = kind_of(name).perm(layout)
    return arr.transpose(perm) if perm else arr


def _tensors(run: Run, rc: Any, true_shapes: Mapping[str, tuple]) -> dict[str, dict[str, Any]]:
    """The header's tensors: what the mistaken loops wrote, drawn as the engine draws
    them (a tensor of another shape than the truth's, ``true_shapes`` in the header's
    layout, has no marks: they describe the true geometry)."""
    tensors = {}
    order = list(DRAWINGS)
    for name in sorted(run.tensors, key=order.index):
        arr = run.tensors[name]
        ext = _external(name, arr, rc.layout)
        facts = tensor_drawing(name, rc.spec)
        if tuple(ext.shape) != true_shapes.get(name):
            facts.pop("marks", None)
        kind = kind_of(name)
        tensors[name] = {
            "shape": list(ext.shape),
            "data": ext.ravel().tolist(),
            **kind.axis_facts(rc.layout),
            "role": run.roles[name],
            **facts,
        }
    return tensors


def _cells(write: Mapping) -> tuple:
    """The rows and columns (per axis) a Write's Box covers (Boxes of other steps may
    cover the same cells: a one-cell axis)."""
    return (write["tensor"], *(tuple(range(a, b, s)) for a, b, s in zip(write["start"], write["stop"], write["step"])))


def _same_writes(a: Mapping, b: Mapping) -> bool:
    """Two events write the same values into the same cells."""
    if len(a["writes"]) != len(b["writes"]):
        return False
    for wa, wb in zip(a["writes"], b["writes"]):
        if _cells(wa) != _cells(wb):
            return False
        va, vb = np.asarray(wa["value"], dtype=np.float64), np.asarray(wb["value"], dtype=np.float64)
        if va.shape != vb.shape or not np.all(values_equal(vb, va)):
            return False
    return True


def first_divergence(mistaken: list, correct: Iterable) -> tuple[int | None, Mapping | None]:
    """The index of the first event of ``mistaken`` whose writes differ from those of the
    events ``correct`` at that index (one of the two ending there counts; None if none
    does), and that correct event (None if they had ended). ``correct`` is pulled only
    as far as that."""
    correct = iter(correct)
    for k, a in enumerate(mistaken):
        b = next(correct, None)
        if b is None or not _same_writes(a, b):
            return k, b
    b = next(correct, None)
    return (None, None) if b is None else (len(mistaken), b)


def _failures(run: Run, rc: Any, mistake: Mistake) -> dict[str, dict[str, Any]]:
    """Per output the code did not return: kind, message (the catalogue's code's, NumPy's
    words), the event where the trace stopped."""
    failures: dict[str, dict[str, Any]] = {}
    if run.raised or run.left_none:
        case = Case.with_inputs(rc.spec, rc.activation.name, rc.x, rc.w, rc.b, rc.dout)
        code = mistake.results(case)
    for part, (exc, event) in run.raised.items():
        names = ("out",) if part == "forward" else ("dx", "dw", "db")
        if part == "forward" and mistake.convention == "layer":
            names = RESULTS  # backward has no cache: it cannot run
        for name in names:
            said = code.get(name)
            kind, message = (said.kind, said.message) if isinstance(said, Failure) else (type(exc).__name__, str(exc))
            failures[name] = {"kind": kind, "message": message, "event": event}
    for name in run.left_none:
        if name not in failures:  # (a pass that raised says why first)
            said = code[name]
            failures[name] = {"kind": said.kind, "message": said.message, "event": None}
    for name in RESULTS:
        arr = run.tensors.get(name)
        if name not in failures and arr is not None and arr.size == 0:
            failures[name] = {
                "kind": "empty array",
                "event": None,
                "message": f"{name} is an empty array of shape {tuple(arr.shape)}",
            }
    return failures


def _diverging_line(event: Mapping | None, correct: Mapping | None, stopped: bool, mistake: Mistake) -> int | None:
    """The line (of the header's code) of the event's first write that differs from the
    correct step's; where the correct step writes a tensor there that this one does not
    (a write left out), the changed line standing for the correct code's line of that
    write; the event's line when neither is found (None without code)."""
    if event is None or "lines" not in event:
        return None
    if not stopped and correct is not None:
        writes = event["writes"]
        for k, b in enumerate(correct["writes"]):
            a = writes[k] if k < len(writes) else None
            if a is None or a["tensor"] != b["tensor"]:
                left_out = _changed_line_for(mistake, correct["phase"], b["tensor"])
                if left_out is not None:
                    return left_out
                if a is None:
                    break
            if not _same_writes({"writes": [a]}, {"writes": [b]}) and k < len(event["lines"]):
                return event["lines"][k]
    return event["line"]


def _changed_line_for(mistake: Mistake, phase: str, tensor: str) -> int | None:
    """The first changed line of the mistake's code that stands for the correct code's
    line where a step of ``phase`` writes ``tensor``, or None."""
    found = mistake_listing(mistake)
    if found is None:
        return None
    try:
        line = found.correct.line_of(phase, tensor, LAB_ALIASES[mistake.convention])
    except KeyError:
        return None
    return next((n for n, origin in zip(found.changed, found.correct_of) if origin == line), None)


def _divergence(k: int | None, run: Run, correct: Mapping | None, failures: Mapping, mistake: Mistake) -> dict | None:
    if k is None:
        return None
    events = run.events
    stopped = k >= len(events)
    at = min(k, len(events) - 1)
    did = events[k]["text"] if not stopped else "the code made no further step"
    raised = [f for f in failures.values() if f["event"] is not None and f["event"] <= k]
    if raised and (stopped or at == raised[0]["event"]):
        did = f"the code raised {raised[0]['kind']}: {raised[0]['message']}"
    should = correct["text"] if correct is not None else "no further step: the truth is complete"
    return {
        "event": at,
        "line": _diverging_line(events[at] if events else None, correct, stopped, mistake),
        "stopped": stopped,
        "phase": events[at]["phase"] if events else None,
        "did": did,
        "should": should,
        "wrong": mistake.wrong,
        "fix": mistake.should,
    }


def mistake_header(rc: Any, mistake: Mistake, run: Run) -> dict[str, Any]:
    """The header of the mistake trace of ``run`` (module notes)."""
    truth_doc = trace_header(rc)  # the schema and the resolved spec
    correct = PlainLoops(rc, mistake.convention)
    k, correct_event = first_divergence(run.events, correct.events())
    true = layer_results(rc.spec, rc.x, rc.w, rc.b, rc.activation, rc.dout)
    truth = {}
    for name in RESULTS:
        ext = _external(name, getattr(true, name), rc.layout)
        truth[name] = {"shape": list(ext.shape), "data": ext.ravel().tolist()}
    arrays = {"x": rc.x, "w": rc.w, "b": rc.b, "dout": rc.dout, **true._asdict()}
    true_shapes = {name: tuple(_external(name, arr, rc.layout).shape) for name, arr in arrays.items()}
    failures = _failures(run, rc, mistake)
    tensors = _tensors(run, rc, true_shapes)
    differences = {}
    for name in RESULTS:
        if name not in failures:
            expected = np.asarray(truth[name]["data"], dtype=np.float64).reshape(truth[name]["shape"])
            got = np.asarray(tensors[name]["data"], dtype=np.float64).reshape(tensors[name]["shape"])
            differences[name] = compare_tensor(name, expected, got).to_dict()
    divergence = _divergence(k, run, correct_event, failures, mistake)
    letters = set().union(*(event["loop"] for event in run.events))
    return {
        "schema": truth_doc["schema"],
        "spec": truth_doc["spec"],
        "tensors": tensors,
        "aliases": {},  # a mistake trace keeps every step of the code, copies included: mistakes live there
        "loop_names": {letter: words for letter, words in LOOP_WORDS.items() if letter in letters},
        "phases": run.phases,
        "code": mistake_code(mistake),
        "total_events": len(run.events),
        "mistake": {key: getattr(mistake, key) for key in ("id", "title", "wrong", "should", "source", "convention")},
        "truth": truth,
        "differences": differences,
        "failures": failures,
        "first_divergence": divergence["event"] if divergence else None,
        "divergence": divergence,
    }


def _runs(config: Any, mistake_id: Any) -> tuple[Any, Mistake, Run]:
    mistake = lab_mistake(mistake_id)
    rc = resolve_config(config)
    check_lab_config(rc, mistake)
    run = mistake.loops(rc, mistake.convention).run(record=True)
    found = mistake_listing(mistake)
    if found is not None:  # each step's line in the mistaken code (docs/trace-format.md)
        run.events[:] = TraceCode(rc, run.tensors, LAB_ALIASES[mistake.convention], found[0]).annotate(run.events)
    return rc, mistake, run


def build_mistake_trace(config: Any, mistake_id: Any) -> dict[str, Any]:
    """The whole mistake trace document: the header (module notes) and the events.
    Raises TraceConfigError for an unknown mistake or a config its code cannot take."""
    rc, mistake, run = _runs(config, mistake_id)
    doc = mistake_header(rc, mistake, run)
    total = doc.pop("total_events")
    return {**doc, "events": run.events, "total_events": total}


def iter_mistake_trace(config: Any, mistake_id: Any) -> Iterator[dict[str, Any]]:
    """The mistake trace as stream items (header, events, end), as ``iter_trace``'s;
    the runs are made (and errors raised) when this is called."""
    rc, mistake, run = _runs(config, mistake_id)
    header = mistake_header(rc, mistake, run)

    def stream() -> Iterator[dict[str, Any]]:
        yield stream_line("header", header)
        yield from event_lines(run.events)
        yield stream_line("end", {"total_events": header["total_events"]})

    return stream()
