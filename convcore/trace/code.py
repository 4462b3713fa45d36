"""The code beside the step: which listing a trace shows (``convcore.listings``), the
header's ``code`` object and each event's ``line``, ``lines`` and ``scalars``.

The config's ``code`` names the convention of the listing: "cs231n"
(``conv_forward_naive`` / ``conv_backward_naive``), "torch" (``conv2d_forward`` /
``conv2d_backward``), "layer" (seed 001's NHWC layer class) or "auto" (the default):
the NHWC layout's lessons in the layer style (when it says the layer: no dilation, no
groups), NCHW in CS231n's, and a setting CS231n's ``conv_param`` cannot say (a stride
or padding per axis or per side, dilation, groups) in the torch style. A convention asked for by name that has no listing for the setting
is a config error (field ``code``); "auto" without one gives no code (``None``: the
header's ``code`` is null and the events have no line keys).

``resolve_code(...)`` (the config's check) -> the convention or None;
``TraceCode(rc, ref)`` annotates a trace's events: ``line`` the 1-based line of the
listing the step runs (of its last write), ``lines`` one per write in order, and
``scalars`` the values of the scalars those lines read (``g = dout[n, f, i, j]``), each
evaluated from the listing's own expression (``convcore.listings.marks``) on the
trace's tensors. A step the listing has no line for (the activation phases: the
listings compute the convolution only) has ``line`` null and ``lines`` [].
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from types import CodeType
from typing import Any

import numpy as np

from ..python_ast import parse_python

__all__ = ["CODE_CHOICES", "TraceCode", "auto_convention", "code_header", "resolve_code", "trace_listing"]

CODE_CHOICES = ("auto", "cs231n", "torch", "layer")
CODE_TITLES = {
    "auto": "the lesson's (CS231n, the layer for NHWC, PyTorch-style where CS231n cannot say it)",
    "cs231n": "CS231n conv_forward_naive / conv_backward_naive",
    "torch": "PyTorch-style conv2d_forward / conv2d_backward",
    "layer": "seed 001's NHWC layer class",
}


def cs231n_can_say(spec: Any) -> str | None:
    """None when CS231n's conv_param (one stride, one pad) says the spec, else why not."""
    if len(set(spec.stride)) != 1:
        return f"stride {list(spec.stride)} differs per axis"
    if len(set(spec.padding)) != 1:
        return f"padding {list(spec.padding)} differs per side"
    if tuple(spec.dilation) != (1, 1):
        return f"dilation {list(spec.dilation)}"
    if spec.groups != 1:
        return f"groups {spec.groups}"
    return None


def torch_can_say(spec: Any) -> str | None:
    """None: the torch-style call says every spec (padding as (top, bottom, left, right))."""
    return None


def layer_can_say(spec: Any) -> str | None:
    """None when seed 001's layer (a stride per axis, any padding) says the spec."""
    if tuple(spec.dilation) != (1, 1):
        return f"dilation {list(spec.dilation)}"
    if spec.groups != 1:
        return f"groups {spec.groups}"
    return None


CAN_SAY = {"cs231n": cs231n_can_say, "torch": torch_can_say, "layer": layer_can_say}


def auto_convention(spec: Any, layout: str) -> str:
    """The convention a lesson's listing follows (module notes)."""
    if layout == "NHWC" and layer_can_say(spec) is None:
        return "layer"
    return "cs231n" if cs231n_can_say(spec) is None else "torch"


@lru_cache(maxsize=256)
def _listing(convention, view, granularity, backward, loop_order, dx_loop_order, phases):
    from ..listings import ListingNotFound, get_listing

    try:
        return get_listing(convention, view, granularity, backward, loop_order, dx_loop_order, phases), None
    except ListingNotFound as exc:
        return None, str(exc)


def _find(convention: str, spec: Any, view, granularity, backward, loop_order, dx_loop_order, phases):
    """(listing or None, why there is none)."""
    why = CAN_SAY[convention](spec)
    if why is not None:
        return None, f"{convention}'s code cannot say this layer: {why}"
    dx_order = dx_loop_order if backward == "separate" else loop_order
    return _listing(convention, view, granularity, backward, loop_order, dx_order, phases)


def resolve_code(asked: str, spec: Any, layout: str, **setting: str) -> tuple[str | None, str | None]:
    """(the convention of the trace's listing, None) — ``setting``: view, granularity,
    backward, loop_order, dx_loop_order, phases — with None for it when "auto" finds
    none; (None, why) for a named convention without a listing, which the config
    refuses (field ``code``)."""
    convention = auto_convention(spec, layout) if asked == "auto" else asked
    listing, why = _find(convention, spec, **setting)
    if listing is not None or asked == "auto":
        return (convention if listing is not None else None), None
    return None, (
        f"code {asked!r} has no listing for this trace: {why.split('; there are:')[0]} "
        f"(code 'auto' shows the code there is, or none)"
    )


def trace_listing(rc: Any):
    """The Listing of a ResolvedConfig ``rc`` (``rc.code`` its convention), or None."""
    if rc.code is None:
        return None
    listing, _ = _find(
        rc.code, rc.spec, rc.view, rc.granularity, rc.backward, rc.loop_order, rc.dx_loop_order, rc.phases
    )
    return listing


def code_header(listing: Any) -> dict[str, Any] | None:
    """The header's ``code``: {convention, name, lines}, or None without a listing."""
    if listing is None:
        return None
    return {"convention": listing.convention, "name": listing.name, "lines": list(listing.lines)}


@lru_cache(maxsize=256)
def _compiled(source: str, filename: str) -> CodeType:
    """``source`` compiled (a ``def``: executed in each trace's own namespace)."""
    return compile(source, filename, "exec")


# (a listing's few expressions, parsed once each rather than at every trace built with it)
@lru_cache(maxsize=1024)
def _letters(source: str) -> frozenset[str]:
    """The loop letters an expression reads."""
    return frozenset(n.id for n in ast.walk(parse_python(source)) if isinstance(n, ast.Name) and n.id in "nfijckl")


@lru_cache(maxsize=1024)
def _plain(source: str) -> str:
    """A scalar's expression giving a Python number: a tensor's cell as a float (its
    NumPy scalar converted), index arithmetic as the int it is."""
    return f"float({source})" if any(isinstance(n, ast.Subscript) for n in ast.walk(parse_python(source))) else source


def _namespace(rc: Any, ref: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The names a listing's scalar expressions read, as the listing's functions have
    them: its tensors (the trace's dz is the listing's dout: the listings have no
    activation) and its geometry."""
    spec = rc.spec
    (sh, sw), top, (dh, dw) = spec.stride, spec.padding[0], spec.dilation
    tensors: dict[str, Any] = {"x": ref["x"], "w": ref["w"], "xp": ref.get("xp", ref["x"])}
    tensors["dout"] = tensors["dz"] = ref.get("dz", ref.get("dout"))  # (the layer names it dz)
    b = ref.get("b")
    tensors["b"] = b if b is not None or rc.code == "torch" else np.zeros(spec.F)  # the others pass zeros
    if rc.code == "layer":  # the layer works on NHWC / HWIO arrays
        tensors = {k: _layer_order(k, v) for k, v in tensors.items()}
    geometry = {
        "N": spec.N,
        "C": spec.C,
        "F": spec.F,
        "HH": spec.KH,
        "WW": spec.KW,
        "KH": spec.KH,
        "KW": spec.KW,
        "Cg": spec.channels_per_group,
        "groups": spec.groups,
        "H_out": spec.out_hw[0],
        "W_out": spec.out_hw[1],
        "s": sh,
        "sh": sh,
        "sw": sw,
        "pad": top,
        "dil_h": dh,
        "dil_w": dw,
        "np": np,
    }
    return {**geometry, **tensors}


def _layer_order(name: str, arr: Any) -> Any:
    if arr is None or arr.ndim != 4:
        return arr
    return arr.transpose(1, 2, 3, 0) if name == "w" else arr.transpose(0, 2, 3, 1)


class TraceCode:
    """The listing of one trace and the line keys of its events (module notes).

    ``rc``: the ResolvedConfig; ``ref``: the trace's tensors by name, internal order
    (x: (N, C, H, W), w: (F, C/groups, KH, KW), dz: (N, F, Ho, Wo), ...); ``aliases``:
    {the listing's name: the trace's} (the header's); ``listing``: another listing than
    the config's (a mistake's: ``convcore.mistakes.listing``)."""

    def __init__(self, rc: Any, ref: Mapping[str, np.ndarray], aliases: Mapping[str, str], listing: Any = None):
        self.listing = listing if listing is not None else trace_listing(rc)
        self.aliases = dict(aliases)
        self._lines: dict[tuple, tuple[int | None, list[int], Any]] = {}
        has_scalars = self.listing is not None and any(mark.scalars for mark in self.listing.marks)
        self._ns = _namespace(rc, ref) if has_scalars else {}

    def header(self) -> dict[str, Any] | None:
        return code_header(self.listing)

    def _plan(self, phase: str, tensors: tuple[str, ...], loop: Mapping[str, int]) -> tuple[int | None, list[int], Any]:
        """The line, the lines of a step of ``phase`` that writes ``tensors``, and a
        function of the step's loop values giving the scalars those lines read (None
        when they read none). A scalar whose expression reads a loop letter the step's
        ``loop`` lacks (the lab's backward step runs every filter f) is left out."""
        key = (phase, tensors)
        if key not in self._lines:
            lines: list[int] = []
            for tensor in tensors:
                try:
                    lines.append(self.listing.line_of(phase, tensor, self.aliases))
                except KeyError:
                    continue
            scalars: dict[str, str] = {}
            for mark in self.listing.marks:
                if mark.line in lines:
                    for name, source in mark.scalars:
                        if _letters(source) <= set(loop):
                            scalars.setdefault(name, source)
            self._lines[key] = (lines[-1] if lines else None, lines, self._scalars(scalars))
        return self._lines[key]

    def _scalars(self, scalars: Mapping[str, str]) -> Any:
        """``def scalars(n=0, f=0, …): return {name: expression, …}``, compiled once with
        the listing's tensors and geometry as its globals (``_namespace``)."""
        if not scalars:
            return None
        letters = ", ".join(f"{letter}=0" for letter in "nfijckl")
        body = ", ".join(f"{name!r}: {_plain(source)}" for name, source in scalars.items())
        source = f"def scalars({letters}, **_):\n    return {{{body}}}\n"
        exec(_compiled(source, f"<scalars of {self.listing.name}>"), self._ns)  # noqa: S102 - the listing's own expressions
        return self._ns.pop("scalars")

    def annotate(self, events: Iterable[dict]) -> Iterator[dict]:
        """``events`` with ``line``, ``lines`` and (where its lines read any) ``scalars``
        set; unchanged when the trace has no listing."""
        if self.listing is None:
            yield from events
            return
        plan = self._plan
        for event in events:
            line, lines, scalars = plan(event["phase"], tuple([w["tensor"] for w in event["writes"]]), event["loop"])
            event["line"] = line
            event["lines"] = lines  # shared by the steps of one kind: read-only, as the Boxes are
            if scalars is not None:
                event["scalars"] = scalars(**event["loop"])
            yield event
