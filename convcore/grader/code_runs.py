"""Run a student's convolution code on cases with every write recorded (the code's side of
``convcore.grader.code_trace``; in the grader's child process, or in a notebook's own).

``record_run(convention, subject, case, paths, call)`` runs the Subject once as the
convention calls it (``convcore.mistakes.conventions``), inside a ``Recording``
(``convcore.grader.recording``), and returns a ``CodeRun``: the buffers its writes
landed in (``roots``, named by the code's own variables), the writes in order, each
tagged with its pass ("forward" / "backward"), and where each output came from: a
buffer's cells (``dx = dx_pad[:, :, 1:-1, 1:-1]``: the output's cells in that buffer),
or values the recording did not see being written (an output computed as a whole
outside the recorded functions: one write at the end, on the pass's ``return`` line).

A CodeRun is plain data (``to_dict`` / ``from_dict``: lists and numbers) so that the
grader's child can send it to the parent, which judges it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..mistakes.conventions import OUTPUTS, Failure, Subject, call_plainly, get_convention
from .recording import Recording, Write, recorded

__all__ = ["CodeRun", "OutputSource", "record_run"]

INPUT_NAMES = ("x", "w", "b", "dout")
# the stage's names of each pass's array arguments, in order, by convention
ARGUMENTS = {
    ("cs231n", "forward"): ("x", "w", "b"),
    ("cs231n", "backward"): ("dout",),
    ("torch", "forward"): ("x", "w", "b"),
    ("torch", "backward"): ("dout", "x", "w"),
    ("layer", "forward"): ("x",),
    ("layer", "backward"): ("dout",),
}
TAKEN = (*INPUT_NAMES, *OUTPUTS)  # names a student's buffer cannot have on the stage


@dataclass
class OutputSource:
    """Where an output came from: ``root`` and ``cells`` (the buffer and, in the output's
    C order, each cell's flat index in it), or ``values`` no recorded write made (``line``
    the pass's return line); ``shape`` the output's; ``failure`` when it is no array."""

    shape: tuple[int, ...] = ()
    root: int | None = None
    cells: np.ndarray | None = None
    values: np.ndarray | None = None
    line: int | None = None
    failure: str | None = None
    final: np.ndarray | None = None  # its values as returned (the writes kept may stop at a cap)


@dataclass
class CodeRun:
    """One recorded run (module notes). ``roots``: [{index, name, shape, line, pass}];
    ``writes``: the Writes in order; ``outputs``: {out/dx/dw/db: OutputSource};
    ``capped``: writes made past the recording's cap; ``pass_lines``: {pass: the line of
    its function's definition}."""

    roots: list[dict[str, Any]]
    writes: list[Write]
    outputs: dict[str, OutputSource]
    capped: int = 0
    passes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "roots": self.roots,
            "writes": [
                [
                    w.root,
                    w.cells.tolist(),
                    w.before.tolist(),
                    w.after.tolist(),
                    w.line,
                    w.pass_name,
                    w.how,
                    [[root, cells.tolist()] for root, cells in w.reads],
                ]
                for w in self.writes
            ],
            "outputs": {
                name: {
                    "shape": list(o.shape),
                    "root": o.root,
                    "cells": None if o.cells is None else o.cells.tolist(),
                    "values": None if o.values is None else o.values.ravel().tolist(),
                    "line": o.line,
                    "failure": o.failure,
                    "final": None if o.final is None else o.final.ravel().tolist(),
                }
                for name, o in self.outputs.items()
            },
            "capped": self.capped,
            "passes": self.passes,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CodeRun:
        writes = [
            Write(
                int(r),
                np.asarray(c, dtype=np.int64),
                np.asarray(b, float),
                np.asarray(a, float),
                line,
                p,
                how,
                [(int(root), np.asarray(cells, dtype=np.int64)) for root, cells in reads],
            )
            for r, c, b, a, line, p, how, reads in data["writes"]
        ]
        outputs = {}
        for name, o in data["outputs"].items():
            shape = tuple(int(n) for n in o["shape"])
            outputs[name] = OutputSource(
                shape=shape,
                root=o["root"],
                cells=None if o["cells"] is None else np.asarray(o["cells"], dtype=np.int64),
                values=None if o["values"] is None else np.asarray(o["values"], dtype=float).reshape(shape),
                line=o["line"],
                failure=o["failure"],
                final=None if o.get("final") is None else np.asarray(o["final"], dtype=float).reshape(shape),
            )
        roots = [dict(r, shape=tuple(r["shape"])) for r in data["roots"]]
        return cls(roots, writes, outputs, int(data["capped"]), list(data["passes"]))


def _pass_of(subject: Subject, function: Any) -> str | None:
    """The pass a call of ``function`` runs: the forward, the backward, or neither (a
    class's constructor, its parameters' setup)."""
    if function is subject.forward or function is subject.cache_from:
        return "forward"
    if function is subject.backward:
        return "backward"
    name = getattr(function, "__name__", "")
    if getattr(function, "__self__", None) is not None and name in ("forward", "backward"):
        return name
    return None


def _raw_outputs(convention: str, pass_name: str, returned: Any, function: Any) -> dict[str, Any]:
    """The objects a pass returned, by output name, as the convention reads them."""
    if isinstance(returned, Failure):
        return {name: returned for name in (("out",) if pass_name == "forward" else ("dx", "dw", "db"))}
    if pass_name == "forward":
        if convention == "cs231n":
            ok = isinstance(returned, (tuple, list)) and len(returned) == 2
            return {"out": returned[0] if ok else Failure("wrong return", "not (out, cache)")}
        return {"out": returned}
    if convention == "layer":
        gradients = getattr(getattr(function, "__self__", None), "gradients", None)
        got = gradients if isinstance(gradients, Mapping) else {}
        missing = Failure("missing", "layer.gradients is not set by backward")
        return {"dx": returned, "dw": got.get("W", missing), "db": got.get("b", missing)}
    if isinstance(returned, (tuple, list)) and len(returned) == 3:
        return dict(zip(("dx", "dw", "db"), returned))
    return {name: Failure("wrong return", "not (dx, dw, db)") for name in ("dx", "dw", "db")}


def _source(recording: Recording, value: Any, line: int | None) -> OutputSource:
    if value is None:
        return OutputSource(failure="returned None: the output is None")
    if isinstance(value, Failure):
        site = value.site or {}
        return OutputSource(failure=str(value), line=site.get("line") if site.get("file") else None)
    found = recording.locate(value) if isinstance(value, np.ndarray) else None
    if found is not None:
        root, cells = found
        made = getattr(value, "_line", None)  # (the view's line: dx = dx_pad[...])
        final = np.array(value, dtype=np.float64)
        cells = cells.ravel().astype(np.int64)
        return OutputSource(shape=tuple(value.shape), root=root.index, cells=cells, line=made, final=final)
    try:
        values = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return OutputSource(failure=f"not an array: {exc}")
    made = getattr(value, "_line", None) or line
    return OutputSource(shape=tuple(values.shape), values=values, line=made, final=values)


def record_run(
    convention: str,
    subject: Subject,
    case: Any,
    paths: list[str],
    call: Callable[..., Any] = call_plainly,
    max_writes: int = 50_000,
    only: tuple[str, ...] = ("forward", "backward"),
    reads: bool = True,
) -> CodeRun:
    """Run ``subject`` on ``case`` with its writes recorded (module notes); ``paths``:
    the code's files, ``call``: how each of its functions is called (the grader's
    limits); ``only``: the passes recorded (the others run unrecorded); ``reads``: the
    cells each write's code indexed since the last write too (the stage's reads)."""
    recording = Recording(paths, max_writes)
    recording.reading = reads
    raw: dict[str, Any] = {}
    return_lines: dict[str, int | None] = {}
    passes: list[str] = []

    def recorded_call(function: Any, *args: Any, **kwargs: Any) -> Any:
        pass_name = _pass_of(subject, function)
        if pass_name not in only:
            return call(function, *args, **kwargs)
        recording.pass_name = pass_name
        args = tuple(recorded(a) if isinstance(a, np.ndarray) else a for a in args)
        for name, arg in zip(ARGUMENTS[convention, pass_name], args):
            if isinstance(arg, np.ndarray):
                recording.register(arg, name)  # (its reads are the stage's x, w, b, dout)
        with recording:
            returned = call(function, *args, **kwargs)
        passes.append(pass_name)
        code = getattr(getattr(function, "__func__", function), "__code__", None)
        frame = recording.frames.get(code)
        return_lines[pass_name] = frame.f_lineno if frame is not None else None
        if function is not subject.cache_from:
            raw.update(_raw_outputs(convention, pass_name, returned, function))
        return returned

    get_convention(convention).run(subject, case, recorded_call)
    outputs = {name: _source(recording, value, None) for name, value in raw.items()}
    for name, source in outputs.items():
        if (source.values is not None or source.failure is not None) and source.line is None:
            source.line = return_lines.get("forward" if name == "out" else "backward")
    _name(recording, outputs)
    roots = [
        {
            "index": r.index,
            "name": r.name,
            "shape": tuple(r.array.shape),
            "line": r.line,
            "pass": r.pass_name,
            "input": r.given,
        }
        for r in recording.roots
    ]
    return CodeRun(roots, recording.writes, outputs, recording.capped, passes)


def _name(recording: Recording, outputs: Mapping[str, OutputSource]) -> None:
    """Name the roots: an output that is a whole buffer gives it its name (the student's
    ``dW`` is the stage's ``dw``), the others the code's variable names."""
    for name, source in outputs.items():
        if source.root is None:
            continue
        root = recording.roots[source.root]
        whole = source.shape == tuple(root.array.shape) and np.array_equal(source.cells, np.arange(root.array.size))
        if whole and root.name is None:
            root.name = name
    recording.name_roots(TAKEN)
