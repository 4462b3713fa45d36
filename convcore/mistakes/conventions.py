"""How code written in each seed convention is called, and what it must return.

- ``cs231n``: ``conv_forward_naive(x, w, b, conv_param) -> (out, cache)`` and
  ``conv_backward_naive(dout, cache) -> (dx, dw, db)``, NCHW, one stride and one
  symmetric padding ``conv_param = {'stride': s, 'pad': p}`` (seed 004). As the course's
  notebook does it, the backward receives the cache the forward returned, or
  ``(x, w, b, conv_param)`` when there is no forward.
- ``layer``: an NHWC layer class like ``convcore.compat.layer.Conv2D`` (seed 001):
  ``Cls(n_out, kernel_shape, stride=s, pad=p, activation=act)``, parameters set as
  ``layer.parameters = {"W": (KH, KW, C, F), "b": (1, F)}`` (and ``layer.n_in = C``),
  ``Y = layer.forward(X)``, ``dX = layer.backward(dLdY)``, then
  ``layer.gradients["W"]`` and ``["b"]`` (when backward raises, dw and db are its
  failure). ``pad`` is an int, or (top, bottom, left,
  right) when the sides differ; ``act`` is a ``convcore.activations.Activation`` (it can
  be called, and has ``forward(z)`` and ``backward(z, dY)``).
- ``torch``: PyTorch-named functions like ``convcore.functional`` (the other layers'
  ``torch-transposed`` and ``torch-conv1d`` are in ``convcore.mistakes.layer_conventions``):
  ``conv2d_forward(x, w, b, stride=, padding=, dilation=, groups=) -> out`` and
  ``conv2d_backward(dout, x, w, stride=, padding=, dilation=, groups=) -> (dx, dw, db)``,
  NCHW / OIHW, ``padding`` an int or (ph, pw) (symmetric per axis, as PyTorch's).

``run(subject, case, call)`` calls a Subject (someone's functions or class) on a Case and
returns each output (out, dx, dw, db) as an array or as a Failure; ``expected(case)`` gives
the true outputs in the convention's own layout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..activations import get_activation
from ..layout import nchw_to_nhwc, oihw_to_hwio
from .case import Case
from .crash_site import crash_site

__all__ = [
    "CONVENTIONS",
    "Convention",
    "Failure",
    "NamedFunctions",
    "OUTPUTS",
    "Subject",
    "call_plainly",
    "get_convention",
    "register_convention",
]

OUTPUTS = ("out", "dx", "dw", "db")


@dataclass(frozen=True)
class Failure:
    """An output that is not an array: the call raised, or returned something else.

    ``kind`` is the exception's type name (``IndexError``) or what came back
    (``returned None``); ``message`` is NumPy's (or Python's) message.
    """

    kind: str
    message: str
    # where the checked code raised (``crash_site``): not part of what makes two
    # Failures the same, which is their kind
    site: dict[str, Any] | None = field(default=None, compare=False, hash=False)

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}" if self.message else self.kind


Call = Callable[..., Any]  # call(function, *args, **kwargs) -> result or Failure


def call_plainly(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``function``; an exception (SystemExit included) becomes a Failure."""
    try:
        return function(*args, **kwargs)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any error of the checked code is a result
        return Failure(type(exc).__name__, _message(exc), crash_site(exc))


def _message(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, SystemExit):
        return f"the code called sys.exit({exc.code!r})"
    return text if len(text) <= 300 else text[:299] + "…"


@dataclass(frozen=True)
class Subject:
    """The code being run: functions for cs231n and torch, a class for layer.
    ``cache_from``: a forward run only to make the cache a CS231n backward graded alone
    is given (the file's own, whose cache may not be ``(x, w, b, conv_param)``)."""

    forward: Callable[..., Any] | None = None
    backward: Callable[..., Any] | None = None
    layer: type | Callable[..., Any] | None = None
    cache_from: Callable[..., Any] | None = None


def _array(value: Any, what: str) -> Any:
    """``value`` as a float64 array, or a Failure saying what it was."""
    if isinstance(value, Failure):
        return value
    if value is None:
        return Failure("returned None", f"{what} is None")
    try:
        return np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return Failure("not an array", f"{what} is a {type(value).__name__}: {exc}")


def _unpack(result: Any, names: tuple[str, ...], function: str) -> dict[str, Any]:
    """The parts of a returned tuple by name, or the same Failure for each."""
    if isinstance(result, Failure):
        return {name: result for name in names}
    if not isinstance(result, (tuple, list)) or len(result) != len(names):
        got = f"a {type(result).__name__}" + (f" of {len(result)}" if isinstance(result, (tuple, list)) else "")
        failure = Failure("wrong return", f"{function} returned {got}, expected ({', '.join(names)})")
        return {name: failure for name in names}
    return {name: _array(value, f"{function}'s {name}") for name, value in zip(names, result)}


def _int_or_pair(values: tuple[int, ...]) -> int | tuple[int, ...]:
    return values[0] if len(set(values)) == 1 else values


class Convention:
    """One calling convention: its parameters (the knobs a search may turn) and its calls."""

    name = ""
    layout = "NCHW"
    title = ""
    knobs: tuple[str, ...] = ()
    layer = "Conv2d"  # the layer its code computes, as PyTorch names it
    case_type: type = Case  # the cases it is graded on (``layer_cases`` for the other layers)
    functions: tuple[str, ...] = ()  # the forward's and the backward's names, where they are functions
    # whether the mistakes lab, the lesson files and the traces of your code know its
    # layer (Conv2d's plain loops): its mistakes are lessons; its counterexamples link to
    # the page where ``page_config`` gives a trace config
    on_the_page = True
    # the trace's tensor of each graded output, where it has another name (a transposed
    # layer's out is its y): what a counterexample's page compares
    traced_names: dict[str, str] = {}

    def page_config(self, case: Any) -> dict[str, Any] | None:
        """The trace config that shows ``case`` on the page (its tensors in this
        convention's layout), or None where the page does not trace the layer."""
        return case.trace_config(self.layout) if self.on_the_page else None

    def graded(self, subject: Subject) -> tuple[str, ...]:
        """The outputs ``subject`` produces: out from a forward, dx, dw, db from a backward."""
        return (("out",) if subject.forward else ()) + (("dx", "dw", "db") if subject.backward else ())

    def expected(self, case: Case) -> dict[str, np.ndarray]:
        """The true out, dx, dw, db of ``case`` in this convention's layout."""
        t = case.truth
        return {"out": t.out, "dx": t.dx, "dw": t.dw, "db": t.db}

    def run(self, subject: Subject, case: Case, call: Call = call_plainly) -> dict[str, Any]:
        raise NotImplementedError

    def returned_by(self, name: str) -> str | None:
        """The function whose result output ``name`` is, where the convention's code is
        functions that return each output as it is (None otherwise)."""
        return None

    def inputs(self, case: Case) -> dict[str, Any]:
        """The inputs as this convention passes them (arrays in its layout, parameters)."""
        x, w, b, dout = case.arrays
        return {"x": x, "w": w, "b": b, "dout": dout}


class Cs231n(Convention):
    name = "cs231n"
    title = "CS231n conv_forward_naive / conv_backward_naive"
    functions = ("conv_forward_naive", "conv_backward_naive")
    knobs = ("n", "cg", "fg", "h", "w", "kh", "kw", "stride", "pad", "values")

    def inputs(self, case: Case) -> dict[str, Any]:
        data = super().inputs(case)
        data["conv_param"] = {"stride": case.stride[0], "pad": case.padding[0]}
        return data

    def run(self, subject: Subject, case: Case, call: Call = call_plainly) -> dict[str, Any]:
        x, w, b, dout = case.arrays
        conv_param = self.inputs(case)["conv_param"]
        results: dict[str, Any] = {}
        cache: Any = (x.copy(), w.copy(), b.copy(), dict(conv_param))
        if subject.forward is not None:
            returned = call(subject.forward, x.copy(), w.copy(), b.copy(), dict(conv_param))
            if isinstance(returned, (tuple, list)) and len(returned) == 2:
                results["out"] = _array(returned[0], "conv_forward_naive's out")
                cache = returned[1]  # whatever the forward keeps, as the notebook passes it on
            else:
                results["out"] = _unpack(returned, ("out", "cache"), "conv_forward_naive")["out"]
        elif subject.cache_from is not None and subject.backward is not None:
            returned = call(subject.cache_from, x.copy(), w.copy(), b.copy(), dict(conv_param))
            if isinstance(returned, (tuple, list)) and len(returned) == 2:
                cache = returned[1]  # (else the backward gets (x, w, b, conv_param) on this case)
        if subject.backward is not None:
            returned = call(subject.backward, dout.copy(), cache)
            results.update(_unpack(returned, ("dx", "dw", "db"), "conv_backward_naive"))
        return results


class Layer(Convention):
    name = "layer"
    layout = "NHWC"
    title = "NHWC Conv2D layer class (seed 001)"
    knobs = (
        "n",
        "cg",
        "fg",
        "h",
        "w",
        "kh",
        "kw",
        "stride",
        "pad_top",
        "pad_bottom",
        "pad_left",
        "pad_right",
        "activation",
        "values",
    )

    def graded(self, subject: Subject) -> tuple[str, ...]:
        return OUTPUTS  # the class has both passes

    def expected(self, case: Case) -> dict[str, np.ndarray]:
        t = case.truth
        return {
            "out": nchw_to_nhwc(t.out, "out"),
            "dx": nchw_to_nhwc(t.dx, "dx"),
            "dw": oihw_to_hwio(t.dw, "dw"),
            "db": t.db.reshape(1, -1),
        }

    def inputs(self, case: Case) -> dict[str, Any]:
        x, w, b, dout = case.arrays
        return {
            "X": nchw_to_nhwc(x, "x"),
            "W": oihw_to_hwio(w, "w"),
            "b": b.reshape(1, -1),
            "dLdY": nchw_to_nhwc(dout, "dout"),
            "stride": case.stride[0],
            "pad": _int_or_pair(case.padding),
            "kernel_shape": (case.kh, case.kw),
            "n_out": case.f,
        }

    def run(self, subject: Subject, case: Case, call: Call = call_plainly) -> dict[str, Any]:
        data = self.inputs(case)
        layer = call(
            subject.layer,
            data["n_out"],
            data["kernel_shape"],
            stride=data["stride"],
            pad=data["pad"],
            activation=get_activation(case.activation),
        )
        if isinstance(layer, Failure):
            return {name: layer for name in OUTPUTS}

        def setup() -> None:
            layer.parameters = {"W": data["W"].copy(), "b": data["b"].copy()}
            layer.n_in = case.c

        failure = call(setup)
        if isinstance(failure, Failure):
            return {name: failure for name in OUTPUTS}
        results = {"out": _array(call(layer.forward, data["X"].copy()), "forward's Y")}
        results["dx"] = _array(call(layer.backward, data["dLdY"].copy()), "backward's dX")
        if isinstance(results["dx"], Failure) and isinstance(results["out"], Failure):
            dx = results["dx"]  # say why: backward usually fails for want of forward's cache
            results["dx"] = Failure(dx.kind, f"{dx.message} (after forward raised {results['out']})", dx.site)
        if isinstance(results["dx"], Failure):  # backward did not finish: no gradients to read
            return {**results, "dw": results["dx"], "db": results["dx"]}
        gradients = getattr(layer, "gradients", None)
        for name, key in (("dw", "W"), ("db", "b")):
            if not isinstance(gradients, Mapping) or key not in gradients:
                results[name] = Failure("missing", f"layer.gradients[{key!r}] is not set by backward")
            else:
                results[name] = _array(gradients[key], f"gradients[{key!r}]")
        return results


class NamedFunctions(Convention):
    """PyTorch-named functions: ``forward(x, w, b, **keywords) -> out`` and
    ``backward(dout, x, w[, b], **keywords) -> (dx, dw, db)``, the keywords those of the
    layer's ``torch.nn.functional`` form (``keywords``)."""

    backward_takes_bias = False  # conv2d_backward(dout, x, w, ...); the others take b after w

    def keywords(self, case: Any) -> dict[str, Any]:
        """The keyword arguments both functions are called with on ``case``."""
        raise NotImplementedError

    def inputs(self, case: Any) -> dict[str, Any]:
        return {**super().inputs(case), **self.keywords(case)}

    def returned_by(self, name: str) -> str | None:
        return self.functions[0] if name == "out" else self.functions[1]

    def run(self, subject: Subject, case: Any, call: Call = call_plainly) -> dict[str, Any]:
        kwargs = self.keywords(case)
        forward_name, backward_name = self.functions
        results: dict[str, Any] = {}
        x, w, b, dout = case.arrays
        if subject.forward is not None:
            results["out"] = _array(
                call(subject.forward, x.copy(), w.copy(), b.copy(), **kwargs), f"{forward_name}'s out"
            )
        if subject.backward is not None:
            bias = (b.copy(),) if self.backward_takes_bias else ()
            returned = call(subject.backward, dout.copy(), x.copy(), w.copy(), *bias, **kwargs)
            results.update(_unpack(returned, ("dx", "dw", "db"), backward_name))
        return results


class Torch(NamedFunctions):
    name = "torch"
    title = "PyTorch-named conv2d_forward / conv2d_backward"
    functions = ("conv2d_forward", "conv2d_backward")
    knobs = (
        "n",
        "cg",
        "fg",
        "groups",
        "h",
        "w",
        "kh",
        "kw",
        "stride_h",
        "stride_w",
        "pad_h",
        "pad_w",
        "dilation_h",
        "dilation_w",
        "values",
    )

    def keywords(self, case: Case) -> dict[str, Any]:
        return {
            "stride": _int_or_pair(case.stride),
            "padding": _int_or_pair(case.padding[::2]),
            "dilation": _int_or_pair(case.dilation),
            "groups": case.groups,
        }


CONVENTIONS: dict[str, Convention] = {c.name: c for c in (Cs231n(), Layer(), Torch())}


def register_convention(convention: Convention) -> Convention:
    """Add ``convention`` to ``CONVENTIONS`` (the command line's choices come from it);
    names are unique."""
    if convention.name in CONVENTIONS:
        raise ValueError(f"a convention called {convention.name!r} is already registered")
    CONVENTIONS[convention.name] = convention
    return convention


def get_convention(name: str) -> Convention:
    """The convention called ``name``; raises ValueError naming the conventions."""
    if name not in CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}; got {name!r}")
    return CONVENTIONS[name]
