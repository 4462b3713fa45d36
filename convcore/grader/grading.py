"""Grade a subject and write its report; the notebook entry point ``check``.

``check(forward=..., backward=..., convention="cs231n")`` (or ``check(layer=Conv2D,
convention="layer")``) grades callables in this process, with a time limit per call
when it runs in the main thread, and returns a Report: ``print(report)`` reads it, a
notebook shows it, ``report.data`` is the JSON. ``convscope check`` runs the same in a
subprocess with memory and time limits (``convcore.grader.sandbox``).
"""

from __future__ import annotations

import inspect
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..mistakes import Failure, Subject
from ..mistakes.conventions import call_plainly, get_convention
from ..mistakes.layer_conventions import torch_layer_of
from .defaults import CALL_SECONDS, DEFAULT_EXAMPLES
from .facts import facts, stride_fact
from .report import PAGE, SCHEMA, Report, counterexample_data
from .search import FatalError, Grader

__all__ = ["CallTimeout", "LimitExceeded", "check", "grade", "subject_of", "timed_call"]


class LimitExceeded(BaseException):
    """The checked code exceeded a limit; the message says which (a BaseException, so
    that the checked code's own ``except Exception`` cannot swallow it)."""


class CallTimeout(LimitExceeded):
    """A call of the checked code ran past its time limit."""


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise CallTimeout(f"did not return within the time limit of {seconds:g} s for one call (does it loop forever?)")

    previous = signal.signal(signal.SIGALRM, ring)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer > 0:  # someone else's alarm (pytest-timeout, a notebook's) keeps its time left
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 1e-3))


def _memory_checked(result: Any) -> Any:
    if isinstance(result, Failure) and result.kind == "MemoryError":
        raise LimitExceeded(f"needs more memory than it may use ({result})")
    return result


def timed_call(seconds: float | None) -> Callable[..., Any]:
    """A ``call`` for the Grader that stops a call after ``seconds`` (main thread only;
    elsewhere, or with None, calls run unlimited) and stops the grading at a MemoryError."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        return lambda function, *args, **kwargs: _memory_checked(call_plainly(function, *args, **kwargs))

    def call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with _alarm(seconds):
            return _memory_checked(call_plainly(function, *args, **kwargs))

    return call


def _name(function: Any) -> str:
    return getattr(function, "__qualname__", None) or getattr(function, "__name__", repr(function))


def grade(
    convention: str,
    subject: Subject,
    *,
    target: str,
    seed: int = 0,
    examples: int = DEFAULT_EXAMPLES,
    call: Callable[..., Any] = call_plainly,
    page: str = PAGE,
    run: Callable[[Any], dict[str, Any]] | None = None,
) -> Report:
    """Search, shrink and name: the Report of ``subject`` in ``convention``; the
    counterexamples link to the page at ``page``. ``run``: see Grader."""
    grader = Grader(convention, subject, seed=seed, examples=examples, call=call, run=run)
    try:
        found = grader.grade()
    except (FatalError, LimitExceeded) as exc:
        site = getattr(exc, "site", None)
        return Report.fatal(target, convention, f"{target} {exc}", seed=seed, **({"site": site} if site else {}))
    outputs: dict[str, Any] = {}
    try:
        for name in grader.graded:
            first = found["first_failure"][name]
            if first is None:
                outputs[name] = {"status": "pass", "checked": len(found["tried"])}
                continue
            smallest = grader.shrink(first, name)
            got = grader.outcomes(smallest)[name]
            outputs[name] = {
                "status": "fail",
                "checked": len(found["tried"]),
                "counterexample": counterexample_data(convention, smallest, name, got, page),
                "facts": _facts(grader, name, first, smallest),
                "likely_mistakes": grader.likely_mistakes(name, smallest),
                "look_alikes": grader.look_alikes(name, smallest),
            }
    except LimitExceeded as exc:
        return Report.fatal(target, convention, f"{target} {exc} (while a failing case was shrunk)", seed=seed)
    return Report(
        {
            "schema": SCHEMA,
            "target": target,
            "convention": convention,
            "status": "fail" if any(o["status"] == "fail" for o in outputs.values()) else "pass",
            "error": None,
            "seed": seed,
            "cases": len(grader.runs),
            "outputs": outputs,
        }
    )


def _facts(grader: Grader, name: str, first: Any, smallest: Any) -> list[str]:
    """The plain facts about output ``name`` at the counterexample ``smallest`` (or, when
    one cell cannot show one, at the first failing case), then whether it is the same
    for another stride (the code run again there)."""
    convention = grader.convention.name
    got = grader.outcomes(smallest)[name]
    said = facts(convention, smallest, name, got) or [
        f"on the first failing case ({first.describe()}): {fact}"
        for fact in (facts(convention, first, name, grader.outcomes(first)[name]) if first != smallest else [])
    ]
    return said + stride_fact(convention, smallest, name, got, lambda case: grader.outcomes(case)[name])


def subject_of(
    convention: str,
    functions: tuple[Callable[..., Any], ...],
    forward: Any = None,
    backward: Any = None,
    layer: Any = None,
) -> Subject:
    """A Subject from keyword callables, or from positional ones recognised by their
    names (``forward`` / ``backward`` in it) or, for CS231n, by their parameter count
    (2: ``(dout, cache)``, 4: ``(x, w, b, conv_param)``); a class is a layer."""
    for function in functions:
        name = getattr(function, "__name__", "").lower()
        if inspect.isclass(function):
            layer = function
        elif "backward" in name:
            backward = function
        elif "forward" in name:
            forward = function
        elif convention == "cs231n" and len(inspect.signature(function).parameters) == 2:
            backward = function
        else:
            forward = function
    return Subject(forward=forward, backward=backward, layer=layer)


def check(
    *functions: Callable[..., Any],
    convention: str = "cs231n",
    forward: Any = None,
    backward: Any = None,
    layer: Any = None,
    seed: int = 0,
    examples: int = DEFAULT_EXAMPLES,
    call_seconds: float | None = CALL_SECONDS,
) -> Report:
    """Grade your conv layer from Python (a notebook): ``check(conv_forward_naive,
    conv_backward_naive)``, ``check(conv2d_forward, conv2d_backward, convention="torch")``
    or ``check(Conv2D, convention="layer")``. Returns a Report; ``print`` it. With
    ``torch``, functions named ``conv_transpose2d_*`` (``conv1d_*``) are graded as a
    ConvTranspose2d (a Conv1d): ``torch-transposed`` (``torch-conv1d``).

    The code runs in this process (use ``convscope check`` for memory limits and a
    separate process); each call may take ``call_seconds`` (in the main thread).
    """
    get_convention(convention)
    subject = subject_of(convention, functions, forward, backward, layer)
    if convention == "torch":  # the layer whose PyTorch-named functions these are
        convention = torch_layer_of(getattr(p, "__name__", "") for p in (subject.forward, subject.backward))
    parts = [p for p in (subject.forward, subject.backward, subject.layer) if p is not None]
    if not parts:
        raise ValueError("check needs the code to grade: forward=, backward= (cs231n, torch) or layer= (layer)")
    if convention == "layer" and subject.layer is None:
        raise ValueError("the layer convention grades a class: check(Conv2D, convention='layer')")
    target = " and ".join(_name(p) for p in parts)
    return grade(convention, subject, target=target, seed=seed, examples=examples, call=timed_call(call_seconds))
