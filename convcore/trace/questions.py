"""Questions a trace can answer exactly about one of its steps, asked before the step is
shown (predict, then reveal), and the judging of an answer.

``step_questions(document, step)`` gives, for event ``step`` of a trace document:

- ``value``: what a cell the step writes holds after it (one per written tensor: its
  first cell the step changes, else its first cell); the answer is a number, right to
  the trace's precision (six significant digits, as every text prints it): ``accept``
  is the closed interval of the numbers judged right, so that a page judges as
  ``judge`` does without a rule of its own;
- ``reads``: which cells of a tensor the step reads (its largest read box: the window
  on the input, or the dz cell); the answer is the set of their indices;
- ``writes``: which cells the step writes, of every tensor;
- (``reads`` and ``writes`` are asked of at most ``MAX_CLICK_CELLS`` cells: the answer
  is clicked cell by cell, and a step that copies a whole tensor is no such question);
- ``shape``: the output's shape, asked at the forward's first step, explained by the
  shape rule with the spec's numbers;
- ``changes``: whether the step changes anything at all, asked at the activation
  steps (a dead ReLU's step changes nothing).

Each question is ``{kind, prompt, answer, explanation}``; an index is in the header's
axis order (the trace's layout), a cell is ``{tensor, index}``. The explanation says
what the answer is made of, then (all but ``shape``, which is the spec's) the step's own
text. Pure: the document in, plain data out (``POST /api/questions`` serves it).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from itertools import product
from typing import Any

from . import format as fmt

__all__ = ["KINDS", "MAX_CLICK_CELLS", "accepted", "judge", "step_questions"]

KINDS = ("value", "reads", "writes", "shape", "changes")
SIGNIFICANT = 6  # digits a trace's text prints (format.number): the precision of a number answered
ACTIVATION_PHASES = ("activation", "activation grad")
MAX_CLICK_CELLS = 64  # cells a reads or writes question may ask to be clicked


def _cells(box: Mapping[str, Any]) -> Iterator[tuple[int, ...]]:
    """The indices of a Box's cells, row-major (the order of its delta and value)."""
    return product(*(range(a, b, s) for a, b, s in zip(box["start"], box["stop"], box["step"])))


def _value_question(event: Mapping[str, Any], write: Mapping[str, Any]) -> dict[str, Any]:
    cells = list(_cells(write))
    deltas, values = list(write["delta"]), list(write["value"])
    k = next((i for i, d in enumerate(deltas) if d != 0), 0)
    cell = fmt.cell(write["tensor"], cells[k])
    before = values[k] - deltas[k]
    return {
        "kind": "value",
        "prompt": f"After this step, what does {cell} hold?",
        "answer": float(values[k]),
        "accept": list(accepted(float(values[k]))),
        "explanation": (
            f"{cell} held {fmt.number(before)}; this step adds {fmt.number(deltas[k])}, so it holds "
            f"{fmt.number(values[k])}. {event['text']}"
        ),
        "cell": {"tensor": write["tensor"], "index": list(cells[k])},
    }


def _reads_question(event: Mapping[str, Any]) -> dict[str, Any] | None:
    if not event["reads"]:
        return None
    sizes = [
        math.prod(len(range(a, b, s)) for a, b, s in zip(r["start"], r["stop"], r["step"])) for r in event["reads"]
    ]
    box = event["reads"][max(range(len(sizes)), key=lambda i: sizes[i])]
    if max(sizes) > MAX_CLICK_CELLS:
        return None
    cells = sorted(list(c) for c in _cells(box))
    return {
        "kind": "reads",
        "prompt": f"Which cells of {box['tensor']} does this step read? (click them)",
        "answer": {"tensor": box["tensor"], "cells": cells},
        "explanation": f"It reads {len(cells)} cell{'s' if len(cells) != 1 else ''} of {box['tensor']}. {event['text']}",
    }


def _writes_question(event: Mapping[str, Any]) -> dict[str, Any] | None:
    cells = [{"tensor": w["tensor"], "index": list(c)} for w in event["writes"] for c in _cells(w)]
    if len(cells) > MAX_CLICK_CELLS:
        return None
    tensors = ", ".join(dict.fromkeys(w["tensor"] for w in event["writes"]))
    return {
        "kind": "writes",
        "prompt": "Which cells does this step write? (click them)",
        "answer": cells,
        "explanation": f"It writes {len(cells)} cell{'s' if len(cells) != 1 else ''} of {tensors}. {event['text']}",
    }


def _axes(layout: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (H, W) axes of x and out, and the (KH, KW) axes of w, in ``layout``; a
    sequence's (L,) and (K,)."""
    return {"NHWC": ((1, 2), (0, 1)), "NCL": ((2,), (2,)), "NLC": ((1,), (0,))}.get(layout, ((2, 3), (2, 3)))


def _shape_rules(spec: Mapping[str, Any]) -> list[str]:
    """The output-size rule per axis with the spec's numbers (a sequence's: one axis)."""
    x_shape, w_shape = spec["x_shape"], spec["w_shape"]
    sizes, kernels = _axes(spec["layout"])
    if len(sizes) == 1:  # (a Conv1d's padding is (left, right))
        sides, axes = [spec["padding"]], [("position", "Lo")]
    else:
        top, bottom, left, right = spec["padding"]
        sides, axes = [(top, bottom), (left, right)], [("row", "Ho"), ("column", "Wo")]
    rules = []
    for a, ((axis, out), (before, after)) in enumerate(zip(axes, sides)):
        size, k, stride, dilation = x_shape[sizes[a]], w_shape[kernels[a]], spec["stride"][a], spec["dilation"][a]
        n = (size + before + after - dilation * (k - 1) - 1) // stride + 1
        said = f"{out} = ⌊({size} + {before} + {after} − {dilation}·({k} − 1) − 1) / {stride}⌋ + 1 = {n} {axis}"
        rules.append(said + ("s" if n != 1 else ""))
    return rules


def _shape_question(document: Mapping[str, Any]) -> dict[str, Any]:
    spec = document["spec"]
    rules = _shape_rules(spec)
    shape = list(document["tensors"]["out"]["shape"])
    return {
        "kind": "shape",
        "prompt": "What is the shape of out?",
        "answer": shape,
        "explanation": (
            f"out is {'×'.join(map(str, shape))} ({spec['layout']}): "
            + "; ".join(rules)
            + " (input + padding − the kernel's reach, over the stride, plus one)."
        ),
    }


def _changes_question(event: Mapping[str, Any], activation: str) -> dict[str, Any]:
    changed = [fmt.cell(w["tensor"], c) for w in event["writes"] for c, d in zip(_cells(w), w["delta"]) if d != 0]
    said = (
        f"It changes {len(changed)} cell{'s' if len(changed) != 1 else ''} ({', '.join(changed[: fmt.LIST_LIMIT])}"
        f"{', …' if len(changed) > fmt.LIST_LIMIT else ''})."
        if changed
        else "It adds 0 to every cell it writes: nothing changes"
        + (" (relu passes nothing where z ≤ 0)." if activation == "relu" else ".")
    )
    return {
        "kind": "changes",
        "prompt": "Does this step change anything?",
        "answer": bool(changed),
        "explanation": f"{said} {event['text']}",
    }


def step_questions(document: Mapping[str, Any], step: int) -> list[dict[str, Any]]:
    """The questions of event ``step`` (0-based) of a trace ``document`` (module notes).
    IndexError for a step the trace does not have."""
    events = document["events"]
    if not 0 <= step < len(events):
        raise IndexError(f"step {step}: this trace has steps 0 to {len(events) - 1}")
    event = events[step]
    questions = [_value_question(event, w) for w in event["writes"]]
    questions += [q for q in (_reads_question(event), _writes_question(event)) if q is not None]
    forward = next((p for p in document["phases"] if p["name"] == "forward" and p["stop"] > p["start"]), None)
    if forward is not None and step == forward["start"]:
        questions.append(_shape_question(document))
    if event["phase"] in ACTIVATION_PHASES:
        questions.append(_changes_question(event, document["spec"]["activation"]))
    return questions


def accepted(answer: float) -> tuple[float, float]:
    """The numbers that are ``answer`` to six significant digits: within half a unit of
    the sixth (of 0: below half a unit of the sixth decimal), as a closed interval."""
    if answer == 0:
        half = 0.5 * 10.0 ** (-SIGNIFICANT)
    else:
        half = 0.5 * 10.0 ** (math.floor(math.log10(abs(answer))) - (SIGNIFICANT - 1)) * (1 + 1e-9)
    return answer - half, answer + half


def judge(question: Mapping[str, Any], given: Any) -> bool:
    """Whether ``given`` answers ``question``: a number to the trace's precision (six
    significant digits), the same set of cells, the same shape, the same yes or no."""
    kind, answer = question["kind"], question["answer"]
    try:
        if kind == "value":
            low, high = question["accept"]
            return not isinstance(given, bool) and low <= float(given) <= high
        if kind == "reads":
            return {tuple(c) for c in given} == {tuple(c) for c in answer["cells"]}
        if kind == "writes":
            return {(c["tensor"], tuple(c["index"])) for c in given} == {
                (c["tensor"], tuple(c["index"])) for c in answer
            }
        if kind == "shape":
            return [int(v) for v in given] == answer
        if kind == "changes":
            return isinstance(given, bool) and given == answer
    except (TypeError, ValueError, KeyError):
        return False
    raise ValueError(f"kind {kind!r}: a question is one of {', '.join(KINDS)}")
