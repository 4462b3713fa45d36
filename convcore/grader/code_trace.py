"""Trace your own code: a student's convolution code, every write it makes, on the stage
beside the truth, with the first write that cannot be right marked (issue 23).

The code runs (``code_runs.record_run``) on a *real* case, the geometry asked for with
distinct non-zero small integers (``Case(values="int")``), and on *basis* cases that
tell each write's terms apart exactly, whatever the loop order or vectorisation:

- dX, dW and db are linear in dout: the backward runs once per dout cell m with dout =
  e_m (x, w, b the real ones). A cell's true sum has one term per dout cell, with the
  factor ``g(cell, m)`` (a w tap for dx, an xp cell for dw, 1 for db; the activation's
  f'(z) folded in), which ``convention.expected`` of the same basis case gives.
- out is linear in x and b (identity activation): the forward runs once per x cell and
  per b cell. (With another activation the forward's writes are not judged.)

A write sets cells of a buffer; a cell that reaches an output (a whole buffer returned,
or a view of one: ``dx = dx_pad[..., 1:-1, 1:-1]``) holds, in basis run m, its factor of
term m so far. After a correct write every factor is 0 (not yet added) or the true
``g`` (added once): a write that leaves another factor adds a term the cell's sum does
not have (a wrong cell, tap or stride), or one twice; a write that takes a factor from
``g`` back to 0 throws away what was accumulated (``=`` where ``+=`` belongs). The
first such write is the trace's ``first_divergence``. Writes into cells that reach no
output (the padding of dx_pad, scratch arrays) are drawn but not judged; an output left
short of terms with no wrong write is said in the differences. Code whose writes
depend on the values (another sequence in a basis run) is judged by its results only,
and says so.

``trace_code(function_or_class, convention=..., case=...)`` (a notebook: the code runs
here) and ``code_trace_document(...)`` (the grader's ``--trace``: the runs come from
its child) return a trace document in the mistake trace's format (docs/trace-format.md
"Your code's trace"): the page plays it with every feature it has.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compare import compare_tensor
from ..layout import nchw_to_nhwc
from ..mistakes.case import Case
from ..mistakes.conventions import OUTPUTS, Subject, call_plainly, get_convention
from ..trace.axes import KINDS, TENSOR_KINDS
from ..trace.document import trace_header
from ..trace.drawing import DRAWINGS
from .code_runs import INPUT_NAMES, CodeRun, OutputSource, record_run

__all__ = ["Judged", "basis_cases", "code_trace_document", "judge", "trace_code"]

TOLERANCE = 1e-7  # relative: the cases' numbers are small integers, every sum exact
MAX_BASIS = 400  # basis runs per pass at most (a pass with more terms is judged by its results)
JUDGE_BUDGET = 1_000_000  # a pass's cells written × its basis runs at most (about 10 s of recording)
PASSES = ("forward", "backward")


@dataclass
class Judged:
    """The verdict on one pass or one write: ``event`` the write's index in the run's
    writes, ``output`` and ``index`` the output cell, ``did`` and ``should`` in words."""

    write: int
    output: str
    index: tuple[int, ...]
    did: str
    should: str
    at_output: bool = False  # judged whole, at the step that returns the output


# -- the cases -----------------------------------------------------------------------


def basis_cases(case: Case, passes: Sequence[str]) -> dict[str, list[tuple[str, Case]]]:
    """{pass: [(the term's name, its basis Case)]} (module notes); a pass with more than
    MAX_BASIS terms, or the forward with an activation, has none."""
    x, w, b, dout = case.arrays
    found: dict[str, list[tuple[str, Case]]] = {}
    terms = {p: _basis_terms(case, p) for p in passes}
    judged = {p for p, n in terms.items() if n is not None and n <= MAX_BASIS}
    if "backward" in judged:
        cases = []
        for m in range(dout.size):
            e = np.zeros(dout.size)
            e[m] = 1.0
            cases.append((f"dout{_index(m, dout.shape)}", _with(case, x, w, b, e.reshape(dout.shape))))
        found["backward"] = cases
    if "forward" in judged:
        cases = []
        for m in range(x.size):
            e = np.zeros(x.size)
            e[m] = 1.0
            cases.append((f"x{_index(m, x.shape)}", _with(case, e.reshape(x.shape), w, 0 * b, dout)))
        for f in range(b.size):
            e = np.zeros(b.size)
            e[f] = 1.0
            cases.append((f"b[{f}]", _with(case, 0 * x, w, e, dout)))
        found["forward"] = cases
    return found


def _basis_terms(case: Case, pass_name: str) -> int | None:
    """The terms ``pass_name`` of ``case`` sums (one basis run each): a dout cell each for
    the backward, an x and a b cell each for the forward; None for a forward that ends in
    an activation other than the identity (not a sum of terms)."""
    x, _, b, dout = case.arrays
    if pass_name == "backward":
        return dout.size
    return x.size + b.size if case.activation == "identity" else None


def _why_no_basis(case: Case, pass_name: str) -> str:
    """Why ``basis_cases`` gave ``pass_name`` of ``case`` no terms, with the numbers."""
    terms = _basis_terms(case, pass_name)
    if terms is None:
        return f"not judged write by write: the forward ends in {case.activation}, not a sum of terms"
    return (
        f"not judged write by write: {terms} terms to tell apart, more than the {MAX_BASIS} the recording "
        "judges (a smaller case is judged)"
    )


def _index(flat: int, shape: tuple[int, ...]) -> str:
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def _with(case: Case, x: np.ndarray, w: np.ndarray, b: np.ndarray, dout: np.ndarray) -> Case:
    return Case.with_inputs(case.spec, case.activation, x, w, b, dout)


def _term_name(term: str, convention: str) -> str:
    """``dout[0, 1, 0, 2]`` in the convention's own words (the layer: dLdY[n, i, j, f])."""
    name, index = term.split("[", 1)
    values = [int(v) for v in index.rstrip("]").split(",")]
    if convention == "layer" and len(values) == 4:
        n, c, h, w = values
        values = [n, h, w, c]
        name = {"dout": "dLdY", "x": "X"}.get(name, name)
    return f"{name}[{','.join(str(v) for v in values)}]"


# -- judging -------------------------------------------------------------------------


def _signature(run: CodeRun, pass_name: str) -> list[tuple[int, bytes]]:
    """The pass's writes as (its buffer, numbered by first use in the pass, its cells)."""
    order: dict[int, int] = {}
    return [(order.setdefault(w.root, len(order)), w.cells.tobytes()) for w in run.writes if w.pass_name == pass_name]


def _root_values(run: CodeRun) -> dict[int, np.ndarray]:
    """Each root's values after the run's writes kept (zeros where none wrote)."""
    values = {r["index"]: np.zeros(int(np.prod(r["shape"]))) for r in run.roots}
    for write in run.writes:
        values[write.root][write.cells] = write.after
    return values


@dataclass
class _Targets:
    """What a pass's writes are judged against: {root: [(the truth's tensor, {root cell:
    its cell, −1 none}, {root cell: whether its completeness is judged})]}, and the
    outputs judged whole at the step that returns them."""

    cells: dict[int, list[tuple[str, np.ndarray, np.ndarray]]]
    wholes: list[str]


def _targets(real: CodeRun, truth: Mapping[str, np.ndarray], outputs: Sequence[str]) -> _Targets:
    """An output that is a whole buffer is judged cell by cell. A view of a buffer of the
    padded input's shape (``dx = dx_pad[...]``) judges the buffer against the padded
    gradient dxp (its padding's cells too, their completeness not) and the view whole,
    where the crop is; another view judges the buffer through the view's cells. Values no
    recorded write made judge the buffer that holds the same values (``out =
    activation(z)`` with the identity: z) cell by cell, and the values whole."""
    found: dict[int, list[tuple[str, np.ndarray, np.ndarray]]] = {}
    wholes: list[str] = []
    values: dict[int, np.ndarray] | None = None
    for name in outputs:
        source = real.outputs.get(name)
        if source is None or source.failure is not None or name not in truth:
            continue
        if tuple(truth[name].shape) != tuple(source.shape):
            continue  # (another shape: said at its first write, not judged cell by cell)
        root = source.root
        if root is not None:
            shape = tuple(real.roots[root]["shape"])
            size = int(np.prod(shape))
            reach = np.full(size, -1, dtype=np.int64)
            reach[source.cells[::-1]] = np.arange(source.cells.size)[::-1]  # (a cell shown twice: its first place)
            if shape == tuple(source.shape) and np.array_equal(source.cells, np.arange(size)):
                found.setdefault(root, []).append((name, np.arange(size), np.ones(size, dtype=bool)))
                continue
            wholes.append(name)
            if name == "dx" and "dxp" in truth and tuple(truth["dxp"].shape) == shape:
                found.setdefault(root, []).append(("dxp", np.arange(size), reach >= 0))
            else:
                found.setdefault(root, []).append((name, reach, reach >= 0))
            continue
        wholes.append(name)
        values = values if values is not None else _root_values(real)
        twin = _twin(real, source, values)
        if twin is not None:
            size = int(np.prod(source.shape))
            found.setdefault(twin, []).append((name, np.arange(size), np.ones(size, dtype=bool)))
    return _Targets(found, wholes)


def _twin(real: CodeRun, source: OutputSource, values: Mapping[int, np.ndarray]) -> int | None:
    """The buffer the code wrote into (not only made with values: a padded copy of x may
    hold out's values by chance on a 1×1 case) whose values an output made as a whole
    holds (``out = activation(z)`` with the identity: z), or None."""
    if source.values is None:
        return None
    return next(
        (
            r["index"]
            for r in real.roots
            if tuple(r["shape"]) == tuple(source.shape)
            and not r.get("input")
            and any(w.root == r["index"] and w.how != "created" for w in real.writes)  # (a buffer it computed)
            and r["index"] in values
            and np.array_equal(values[r["index"]], source.values.ravel())
        ),
        None,
    )


def judge(
    real: CodeRun,
    pass_name: str,
    basis: Sequence[tuple[str, CodeRun, Mapping[str, np.ndarray]]],
    truth: Mapping[str, np.ndarray],
    convention: str,
) -> tuple[Judged | None, str]:
    """The first wrong write of ``pass_name`` in ``real`` (module notes) and a note on how
    it was judged. ``basis``: (term, its run, its true tensors) per basis case; ``truth``:
    the real case's true tensors (out, dx, dw, db, dxp: their shapes say which outputs
    are judged)."""
    if not basis:
        return None, "not judged write by write (too many terms, or an activation other than the identity)"
    want = _signature(real, pass_name)
    if any(_signature(run, pass_name) != want for _, run, _ in basis):
        return None, "not judged write by write: the code writes other cells when the numbers change"
    targets = _targets(real, truth, ("out",) if pass_name == "forward" else ("dx", "dw", "db"))
    indices = [k for k, w in enumerate(real.writes) if w.pass_name == pass_name]
    basis_writes = [[w for w in run.writes if w.pass_name == pass_name] for _, run, _ in basis]
    names = [_term_name(term, convention) for term, _, _ in basis]
    true = {name: np.array([t[name].ravel() for _, _, t in basis]) for name in truth}  # (terms, cells)
    last: dict[tuple[str, int], tuple[int, int, np.ndarray]] = {}  # cell: (position, column, its factors)
    for position, k in enumerate(indices):
        write = real.writes[k]
        for output, table, complete in targets.cells.get(write.root, ()):
            places = table[write.cells]
            for column in np.flatnonzero(places >= 0):
                flat = int(places[column])
                g = true[output][:, flat]
                after = np.array([ws[position].after[column] for ws in basis_writes])
                before = np.array([ws[position].before[column] for ws in basis_writes])
                verdict = _cell_verdict(g, before, after, names)
                if verdict is not None:
                    root = real.roots[write.root]
                    return _judged(k, output, flat, truth, verdict, write, column, root), "judged write by write"
                if complete[write.cells[column]]:
                    last[output, flat] = (k, column, after)
    # no write was wrong: the first write after which a cell is done but short of terms
    short = []
    for (output, flat), (k, column, after) in last.items():
        missing = np.flatnonzero(~_close(after, true[output][:, flat]))
        if missing.size:
            short.append((k, output, flat, column, missing))
    if short:
        k, output, flat, column, missing = min(short, key=lambda item: item[0])
        verdict = f"gets no more writes after this one, but its sum still lacks {_terms(missing, true[output][:, flat], names)}"
        root = real.roots[real.writes[k].root]
        return _judged(k, output, flat, truth, verdict, real.writes[k], column, root), "judged write by write"
    for name in targets.wholes:  # the outputs judged whole, at the step that returns them
        verdict = _whole_verdict(real, name, basis, truth, true[name], names)
        if verdict is not None:
            return verdict, "judged write by write"
    return None, "judged write by write"


def _whole_verdict(
    real: CodeRun,
    name: str,
    basis: Sequence[tuple[str, CodeRun, Mapping[str, np.ndarray]]],
    truth: Mapping[str, np.ndarray],
    true: np.ndarray,
    names: Sequence[str],
) -> Judged | None:
    """The first cell of output ``name`` returned without its whole sum, or None."""
    finals = [run.outputs.get(name) for _, run, _ in basis]
    if any(f is None or f.final is None or f.final.shape != truth[name].shape for f in finals):
        return None
    factors = np.array([f.final.ravel() for f in finals])  # (terms, cells)
    for flat in range(factors.shape[1]):
        g, after = true[:, flat], factors[:, flat]
        off = np.flatnonzero(~_close(after, g))
        if not off.size:
            continue
        extra = [m for m in off if abs(after[m]) > TOLERANCE]
        index = tuple(int(i) for i in np.unravel_index(flat, truth[name].shape))
        cell = f"{name}[{','.join(str(i) for i in index)}]"
        if extra:
            m = extra[0]
            why = f"is returned with {names[m]} at the factor {_num(after[m])} where its sum has {_num(g[m])}"
        else:
            why = f"is returned without {_terms(off, g, names)}"
        did = f"{cell} = {_num(real.outputs[name].final.ravel()[flat])} as the code returns it"
        return Judged(-1, name, index, did, f"{cell} {why}", at_output=True)
    return None


def _terms(missing: np.ndarray, g: np.ndarray, names: Sequence[str]) -> str:
    said = "; ".join(f"{names[m]} (factor {_num(g[m])})" for m in missing[:3])
    return said + (" …" if len(missing) > 3 else "")


def _judged(
    k: int,
    output: str,
    flat: int,
    truth: Mapping[str, np.ndarray],
    verdict: str,
    write: Any,
    column: int,
    root: Mapping,
) -> Judged:
    index = tuple(int(i) for i in np.unravel_index(flat, truth[output].shape))
    cell = f"{output}[{','.join(str(i) for i in index)}]"
    where = ",".join(str(int(i)) for i in np.unravel_index(int(write.cells[column]), root["shape"]))
    written = f"{root['name']}[{where}]"
    said = cell if written == cell else f"{written} (which is {cell})"
    return Judged(k, output, index, _did(write, column, said), f"{cell} {verdict}")


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a - b) <= TOLERANCE * (1 + np.abs(b))


def _cell_verdict(g: np.ndarray, before: np.ndarray, after: np.ndarray, names: Sequence[str]) -> str | None:
    """Why a cell's factors after a write cannot be right (module notes), or None."""
    zero, full = _close(after, 0 * after), _close(after, g)
    wrong = np.flatnonzero(~(zero | full))
    if wrong.size:
        said = []
        for m in wrong[:3]:
            true = "is not in its sum" if abs(g[m]) <= TOLERANCE else f"is in its sum with the factor {_num(g[m])}"
            said.append(f"{names[m]} {true}, but this write leaves it the factor {_num(after[m])}")
        more = f" (and {wrong.size - 3} more terms)" if wrong.size > 3 else ""
        return "sums one term per cell it depends on, each once: " + "; ".join(said) + more
    dropped = np.flatnonzero(_close(before, g) & (np.abs(g) > TOLERANCE) & zero)
    if dropped.size:
        lost = ", ".join(names[m] for m in dropped[:3]) + (" …" if dropped.size > 3 else "")
        return (
            f"had already received the terms of {lost}; this write throws them away "
            "(an assignment where the cell accumulates: = where += belongs)"
        )
    return None


def _num(value: float) -> str:
    return str(int(round(value))) if abs(value - round(value)) < 1e-9 else f"{value:.6g}"


def _did(write: Any, column: int, cell: str) -> str:
    before, after = write.before[column], write.after[column]
    where = f"line {write.line}: " if write.line is not None else ""
    return f"{where}{cell} went from {_num(before)} to {_num(after)} ({'+' if after >= before else '−'}{_num(abs(after - before))})"


# -- the document ----------------------------------------------------------------------


def _drawn_as(name: str) -> str:
    """The tensor a recorded array's name is drawn as: xp′ (the backward's own padded x)
    as xp."""
    return name.rstrip("′")


def _axis_facts(name: str, shape: tuple[int, ...], layout: str) -> dict[str, Any]:
    """The header's axes of a tensor: its kind's where its name and rank say one, else
    generic axes with the last two as the grid."""
    kind = KINDS.get(TENSOR_KINDS.get(_drawn_as(name), ""))
    if kind is not None and len(kind.axes) == len(shape):
        return kind.axis_facts(layout)
    axes = [f"d{k}" for k in range(len(shape))] or ["d0"]
    return {"axes": axes, "grid": axes[-2:] if len(axes) > 1 else [None, axes[-1]]}


def _tensor(name: str, values: np.ndarray, role: str, order: int, layout: str) -> dict[str, Any]:
    values = np.asarray(values, dtype=np.float64)
    shape = tuple(values.shape) or (1,)
    title, group, detail = DRAWINGS.get(
        _drawn_as(name), ("your array", "backward" if role != "input" else "inputs", "")
    )
    facts = {"title": title, "group": group, "order": order}
    if detail:
        facts["detail"] = detail
    return {
        "shape": list(shape),
        "data": values.ravel().tolist(),
        **_axis_facts(name, shape, layout),
        "role": role,
        **facts,
    }


def _boxes(cells: np.ndarray, shape: tuple[int, ...]) -> list[tuple[list[int], list[int], list[int], np.ndarray]]:
    """``cells`` (sorted flat indices) as boxes (start, stop, step, the positions of their
    cells in ``cells``, row-major): one box when they form one, else one per cell."""
    if cells.size == 0:
        return []
    if cells.size == 1:  # (most writes of a loop: one cell, one box of it)
        at = [int(v) for v in np.unravel_index(int(cells[0]), shape)]
        return [(at, [v + 1 for v in at], [1] * len(shape), np.arange(1))]
    index = np.array(np.unravel_index(cells, shape)).T  # (cells, axes)
    start, stop, step = [], [], []
    count = 1
    for axis in range(len(shape)):
        values = np.unique(index[:, axis])
        s = int(values[1] - values[0]) if values.size > 1 else 1
        if values.size > 1 and not np.array_equal(values, np.arange(values[0], values[-1] + 1, s)):
            break
        start.append(int(values[0]))
        stop.append(int(values[-1]) + 1)
        step.append(s)
        count *= values.size
    else:
        if count == cells.size:
            return [(start, stop, step, np.arange(cells.size))]
    return [(list(map(int, i)), [int(v) + 1 for v in i], [1] * len(shape), np.array([k])) for k, i in enumerate(index)]


def _read_boxes(cells: np.ndarray, shape: tuple[int, ...]) -> list[dict[str, list[int]]]:
    """The boxes (start, stop, step) of cells read, at most 64 (a window is one)."""
    return [{"start": a, "stop": b, "step": c} for a, b, c, _ in _boxes(np.unique(cells), shape)[:64]]


def _event(pass_name: str, tensor: str, shape: tuple[int, ...], cells, before, after, line, text) -> dict[str, Any]:
    writes = []
    for start, stop, step, at in _boxes(np.asarray(cells, dtype=np.int64), shape):
        writes.append(
            {
                "tensor": tensor,
                "start": start,
                "stop": stop,
                "step": step,
                "delta": (after[at] - before[at]).tolist(),
                "value": after[at].tolist(),
            }
        )
    event = {"phase": pass_name, "loop": {}, "reads": [], "writes": writes, "text": text}
    if line is not None:
        event.update(line=int(line), lines=[int(line)])
    else:
        event.update(line=None, lines=[])
    return event


def _write_text(name: str, shape: tuple[int, ...], write: Any) -> str:
    where = f"line {write.line}: " if write.line is not None else ""
    if write.how == "created":
        return f"{where}{name} made with its values ({write.cells.size} cells)"
    if write.cells.size == 1:
        index = ",".join(str(int(i)) for i in np.unravel_index(int(write.cells[0]), shape))
        b, a = write.before[0], write.after[0]
        return f"{where}{name}[{index}] = {_num(b)} → {_num(a)} ({'+' if a >= b else '−'}{_num(abs(a - b))})"
    return f"{where}{name}: {write.cells.size} cells written"


def code_trace_document(
    real: CodeRun,
    case: Case,
    convention: str,
    verdicts: Mapping[str, tuple[Judged | None, str]],
    *,
    target: str,
    source: Sequence[str],
    path: str,
) -> dict[str, Any]:
    """The trace document of a recorded run (module notes; docs/trace-format.md)."""
    conv = get_convention(convention)
    layout = conv.layout
    truth = conv.expected(case)
    header = trace_header(case.trace_config(layout))
    inputs = conv.inputs(case)
    keys = ("X", "W", "b", "dLdY") if convention == "layer" else INPUT_NAMES
    given = {name: inputs[key] for name, key in zip(INPUT_NAMES, keys)}
    reaching = {o.root for o in real.outputs.values() if o.root is not None}
    given_ = [r for r in real.roots if r.get("input")]  # (read, never drawn again: the header's x, w, b, dout)
    kept = [
        r for r in real.roots if not r.get("input") and (r["index"] in reaching or not r["name"].startswith("array"))
    ]
    names = {r["index"]: r["name"] for r in kept}
    values = {r["index"]: np.zeros(int(np.prod(r["shape"]))) for r in kept}
    shapes = {name: tuple(np.shape(given[name])) for name in INPUT_NAMES if given.get(name) is not None}
    readable = {**names, **{r["index"]: r["name"] for r in given_ if shapes.get(r["name"]) == tuple(r["shape"])}}
    events: list[dict[str, Any]] = []
    event_of: dict[int, int] = {}
    current: str | None = None
    flushed: set[str] = set()
    for k, write in enumerate(real.writes):
        if write.pass_name != current:
            if current is not None:
                events += _output_events(real, names, values, current)
                flushed.add(current)
            current = write.pass_name
        if write.root not in names:
            continue
        root = real.roots[write.root]
        values[write.root][write.cells] = write.after
        event_of[k] = len(events)
        text = _write_text(names[write.root], root["shape"], write)
        pass_name = write.pass_name or "forward"
        event = _event(
            pass_name, names[write.root], root["shape"], write.cells, write.before, write.after, write.line, text
        )
        event["reads"] = [
            {"tensor": readable[r], **box}
            for r, cells in write.reads
            if r in readable
            for box in _read_boxes(cells, real.roots[r]["shape"])
        ]
        events.append(event)
    for pass_name in ([current] if current else []) + list(real.passes):
        if pass_name not in flushed:
            events += _output_events(real, names, values, pass_name)
            flushed.add(pass_name)
    tensors: dict[str, Any] = {}
    order = 0
    for name in INPUT_NAMES:
        if given.get(name) is not None:
            tensors[name] = _tensor(name, given[name], "input", order, layout)
            order += 1
    for r in kept:
        role = "result" if r["name"] in OUTPUTS else "intermediate"
        tensors[r["name"]] = _tensor(r["name"], values[r["index"]].reshape(r["shape"]), role, order, layout)
        order += 1
    results: dict[str, np.ndarray] = {}
    failures: dict[str, Any] = {}
    for name, source_ in real.outputs.items():
        if source_.failure is not None:
            failures[name] = {"kind": source_.failure.split(":")[0], "message": source_.failure, "event": None}
            continue
        shown = _output_values(source_, values)  # (what the writes kept make: the stage's)
        results[name] = source_.final if source_.final is not None else shown
        if name not in tensors:
            tensors[name] = _tensor(name, shown, "result", order, layout)
            order += 1
    differences = {
        name: compare_tensor(name, truth[name], results[name]).to_dict() for name in results if name in truth
    }
    returned = {e["output"]: k for k, e in enumerate(events) if "output" in e and e["writes"]}
    candidates = [
        (returned[v.output] if v.at_output else event_of[v.write], False, v.did, v.should, v.output)
        for v, _ in verdicts.values()
        if v is not None and (v.write in event_of or v.output in returned)
    ]
    candidates += _shape_and_failure_candidates(real, names, events, truth)
    first = min(candidates, key=lambda c: c[0], default=None)
    divergence = None
    if first is not None:
        at, stopped, did, should, output = first
        divergence = {
            "event": at,
            "line": events[at]["line"] if not stopped else (real.outputs[output].line or events[at]["line"]),
            "stopped": stopped,
            "phase": events[at]["phase"],
            "did": did,
            "should": should,
            "wrong": should,
            "fix": (
                "make it run"
                if stopped
                else f"look at what line {events[at]['line']} writes into {output}"
                if events[at]["line"]
                else f"look at what writes into {output}"
            ),
        }
    capped = (
        f" The recording kept its first {len(real.writes)} writes; the {real.capped} it made after them are not"
        " on the stage (a wrong write among them is not found)."
        if real.capped
        else ""
    )
    if divergence:
        where = f", line {divergence['line']}" if divergence["line"] else ""
        wrong_words = f"Its first wrong write is step {divergence['event'] + 1}{where}: D goes there and says why."
    else:
        unjudged = [p for p, (_, note) in verdicts.items() if not note.startswith("judged")]
        wrong_words = "No write of this code is wrong" + (
            f" (its {' and '.join(unjudged)} pass is judged by its results only: see below)." if unjudged else "."
        )
    return {
        "schema": header["schema"],
        "spec": header["spec"],
        "tensors": tensors,
        "aliases": {},
        "loop_names": {},
        "phases": _phases(events),
        "code": {"convention": convention, "name": target, "lines": list(source), "changed": []},
        "mistake": {
            "id": "your-code",
            "title": f"Your code: {target}",
            "wrong": wrong_words + capped,
            "should": "",
            "source": path,
            "convention": convention,
            "student": True,
        },
        "recording": {
            "writes": len(real.writes),
            "capped": real.capped,
            "judged": {name: note for name, (_, note) in verdicts.items()},
        },
        "truth": {
            name: {"shape": list(t.shape), "data": t.ravel().tolist()}
            for name, t in truth.items()
            if name in real.outputs
        },
        "differences": differences,
        "failures": failures,
        "first_divergence": divergence["event"] if divergence else None,
        "divergence": divergence,
        "events": events,
        "total_events": len(events),
    }


def _shape_and_failure_candidates(
    run: CodeRun, names: Mapping[int, str], events: Sequence[Mapping[str, Any]], truth: Mapping[str, np.ndarray]
) -> list[tuple[int, bool, str, str, str]]:
    """(event, stopped, did, should, output) of each output of another shape than the
    truth's (its first write, or the step that returns it: a view's line) and of each
    pass that raised (its last step)."""
    found = []
    values: dict[int, np.ndarray] | None = None  # the run's buffers' final values, made once if needed
    for name, source in run.outputs.items():
        if name not in truth or not events:
            continue
        if source.failure is not None:
            raised = [k for k, e in enumerate(events) if e.get("output") == name]
            if raised:
                found.append((raised[0], True, events[raised[0]]["text"], f"{name} is computed", name))
            continue
        if tuple(source.shape) == tuple(truth[name].shape):
            continue
        whole = source.root is not None and names.get(source.root) == name
        values = values if values is not None else _root_values(run)
        twin = _twin(run, source, values)
        made = names.get(twin) if twin is not None else None  # (out = activation(z): z's first write)
        hits = [
            k
            for k, e in enumerate(events)
            if (whole and any(w["tensor"] == name for w in e["writes"]))
            or (made is not None and any(w["tensor"] == made for w in e["writes"]))
            or e.get("output") == name
        ]
        if hits:
            shape = "×".join(map(str, source.shape)) or "()"
            want = "×".join(map(str, truth[name].shape))
            found.append(
                (
                    hits[0],
                    False,
                    f"{events[hits[0]]['text']}: {name} has the shape {shape}",
                    f"{name} has the shape {want}",
                    name,
                )
            )
    return found


def _output_values(source: OutputSource, values: Mapping[int, np.ndarray]) -> np.ndarray:
    if source.values is not None:
        return source.values
    return values[source.root][source.cells].reshape(source.shape)


def _output_events(
    run: CodeRun, names: Mapping[int, str], values: Mapping[int, np.ndarray], pass_name: str | None
) -> list[dict[str, Any]]:
    """At a pass's end: each of its outputs that is not a whole buffer, as one write (a
    view's cells copied, or values made where the recording did not see)."""
    events = []
    mine = ("out",) if pass_name == "forward" else ("dx", "dw", "db")
    for name in mine:
        source = run.outputs.get(name)
        if source is None or source.failure is not None or (source.root is not None and names.get(source.root) == name):
            continue
        data = _output_values(source, values).ravel()
        cells = np.arange(data.size)
        shape = tuple(source.shape) or (1,)
        twin = _twin(run, source, values) if source.values is not None else None
        if source.root is not None:
            text = f"{name} = its cells of {names.get(source.root, 'an array')} (what the code returns)"
        elif twin is not None and twin in names:
            text = f"{name} = the values of {names[twin]} (what the code returns)"
        else:
            text = f"{name} computed as a whole (the recording saw no write making it)"
        event = _event(pass_name or "forward", name, shape, cells, np.zeros(data.size), data, source.line, text)
        events.append({**event, "output": name})
    for name in mine:  # a pass that raised: one step that says so, on the line that raised
        source = run.outputs.get(name)
        if source is not None and source.failure is not None:
            where = f"line {source.line}: " if source.line else ""
            said = (
                f"{name} is None as the code returns it"
                if source.failure.startswith("returned None")
                else f"the code raised {source.failure}"
            )
            event = _event(pass_name or "forward", name, (1,), [], np.zeros(0), np.zeros(0), source.line, "")
            events.append({**event, "text": f"{where}{said}", "output": name})
            break
    return events


def _phases(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    phases: list[dict[str, Any]] = []
    for k, event in enumerate(events):
        if not phases or phases[-1]["name"] != event["phase"]:
            phases.append({"name": event["phase"], "start": k, "stop": k + 1})
        else:
            phases[-1]["stop"] = k + 1
    return phases


# -- in a notebook ---------------------------------------------------------------------


def _subject(code: Any, convention: str, backward: Any = None) -> Subject:
    if convention == "layer":
        return Subject(layer=code)
    return Subject(forward=code, backward=backward)


def _true_tensors(conv: Any, case: Case) -> dict[str, np.ndarray]:
    """The true out, dx, dw, db in the convention's layout, and dxp (the padded input's
    gradient: a student's dx_pad is judged against it)."""
    found = dict(conv.expected(case))
    dxp = case.truth.dxp
    if dxp is not None:
        found["dxp"] = nchw_to_nhwc(dxp, "dx") if conv.layout == "NHWC" else dxp
    return found


def run_and_judge(
    subject: Subject,
    convention: str,
    case: Case,
    paths: list[str],
    call: Callable[..., Any] = call_plainly,
    runner: Callable[..., CodeRun] | None = None,
) -> tuple[CodeRun, dict[str, tuple[Judged | None, str]]]:
    """Record the real case and the basis cases, and judge each pass; ``runner(case,
    passes, reads)`` records a case, only those passes' writes, with the reads or not
    (default: here, ``record_run``)."""
    runner = runner or (lambda c, only, reads: record_run(convention, subject, c, paths, call, only=only, reads=reads))
    real = runner(case, PASSES, True)
    conv = get_convention(convention)
    truth = _true_tensors(conv, case)
    verdicts: dict[str, tuple[Judged | None, str]] = {}
    for pass_name, cases in basis_cases(case, [p for p in PASSES if p in real.passes]).items():
        cells = sum(w.cells.size for w in real.writes if w.pass_name == pass_name)
        if cells * len(cases) > JUDGE_BUDGET:
            verdicts[pass_name] = (
                None,
                f"not judged write by write: {cells} cells written, {len(cases)} terms to tell apart, more than the "
                f"{JUDGE_BUDGET} the recording judges (a smaller case is judged)",
            )
            continue
        basis = [(term, runner(c, (pass_name,), False), _true_tensors(conv, c)) for term, c in cases]
        verdicts[pass_name] = judge(real, pass_name, basis, truth, convention)
    for pass_name in real.passes:
        verdicts.setdefault(pass_name, (None, _why_no_basis(case, pass_name)))
    return real, verdicts


def _file_of(code: Any) -> str | None:
    """The file a function's code was compiled from; a class's: its forward's (or
    backward's), wherever in its bases it is defined."""
    if isinstance(code, type):
        for name in ("forward", "backward"):
            method = getattr(code, name, None)
            if hasattr(method, "__code__"):
                return method.__code__.co_filename
        return None
    function = getattr(code, "__func__", code)
    return function.__code__.co_filename if hasattr(function, "__code__") else None


def trace_code(
    code: Any,
    backward: Any = None,
    *,
    convention: str = "cs231n",
    case: Case | None = None,
    source: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The trace document of your own code on ``case`` (default: a small one), run here:
    ``trace_code(conv_forward_naive, conv_backward_naive)`` (CS231n), ``convention=
    "torch"`` for ``conv2d_forward`` / ``conv2d_backward``, ``convention="layer"`` with
    the layer class as ``code``. Either function may be None (that pass is left out).
    ``source``: the file's lines, where Python keeps none (code compiled from a string)."""
    case = case or Case(n=1, cg=2, fg=2, h=4, w=4, kh=3, kw=3, padding=(1, 1, 1, 1))
    subject = _subject(code, convention, backward)
    functions = [f for f in (code, backward) if f is not None]
    paths = sorted({p for p in map(_file_of, functions) if p})
    real, verdicts = run_and_judge(subject, convention, case, paths)
    path = paths[0] if paths else "<unknown>"
    lines = list(source) if source is not None else [line.rstrip("\n") for line in linecache.getlines(path)]
    target = ", ".join(getattr(f, "__qualname__", repr(f)) for f in functions)
    return code_trace_document(real, case, convention, verdicts, target=target, source=lines, path=path)
