"""A setup of one conv layer: its geometry, activation and inputs, small enough to check
by hand. The catalogue states its setups as Cases and the grader searches over them.

A Case holds the numbers in PyTorch's terms (NCHW input, OIHW weights, per-side
padding) and draws its inputs deterministically from ``values`` and ``seed``: ``"int"``
draws distinct non-zero small integers (a counterexample a person can check by hand),
``"float"`` draws normal floats. The upstream gradient ``dout`` is random, never ones.
``LayerCase`` holds what a Case shares with the other layers' cases
(``convcore.mistakes.layer_cases``).

``one_step_smaller(case, knobs)`` lists the Cases one step smaller along each knob (a
size minus one, a stride or padding minus one, a simpler activation, integer instead of
float values): the neighbours the grader's shrinking and its minimality test walk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from functools import cached_property
from math import prod
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ..activations import get_activation
from ..layer import LayerResults, layer_results
from ..layout import nchw_to_nhwc, oihw_to_hwio
from ..spec import ConvSpec, ConvSpecError

__all__ = [
    "ACTIVATION_ORDER",
    "Arrays",
    "Case",
    "KNOBS",
    "LayerCase",
    "drawn_inputs",
    "one_step_smaller",
    "plain_fields",
    "step_down",
    "tuple_fields",
]


def distinct_integers(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Distinct non-zero integers, as small as that allows: from [−3, 3] for up to six
    cells, from [−m, m] with m = ⌈cells / 2⌉ beyond (distinct values keep two cells
    from agreeing by chance, which would hide a mistake that swaps them)."""
    cells = int(np.prod(shape))
    m = max(3, -(-cells // 2))
    pool = np.concatenate([np.arange(-m, 0), np.arange(1, m + 1)]).astype(np.float64)
    return rng.permutation(pool)[:cells].reshape(shape)


def drawn_inputs(values: str, seed: int, shapes: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    """One array per shape, drawn with ``seed``: distinct small integers for ``values``
    "int" (``distinct_integers``), normal floats otherwise."""
    rng = np.random.default_rng(seed)
    if values == "int":
        return [distinct_integers(rng, shape) for shape in shapes]
    return [rng.normal(size=shape) for shape in shapes]


def plain_fields(case: Any) -> dict[str, Any]:
    """A dataclass case's fields as plain data (tuples as lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(case).items()}


def tuple_fields(data: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """``data`` with the lists at ``keys`` made tuples again (``plain_fields``' inverse)."""
    return {k: tuple(v) if k in keys and isinstance(v, list) else v for k, v in data.items()}


# simplest first: a neighbour of an activation is the one before it
ACTIVATION_ORDER = ("identity", "relu", "tanh")


class Arrays(NamedTuple):
    """The inputs of a Case, NCHW / OIHW, float64 (the shapes below). A TransposedCase's
    and a Conv1dCase's hold their layers' (``layer_cases``: x (N, C_in, H, W), w (C_in,
    C_out/groups, KH, KW); x (N, C, L), w (F, C/groups, K))."""

    x: np.ndarray  # (N, C, H, W)
    w: np.ndarray  # (F, C/groups, KH, KW)
    b: np.ndarray  # (F,)
    dout: np.ndarray  # (N, F, Ho, Wo), the upstream gradient at the activation's output


@dataclass(frozen=True)
class LayerCase:
    """What the case of every layer shares (``Case``, and ``layer_cases``' TransposedCase
    and Conv1dCase): its first fields, the batch and the channels per group; the channel
    counts they make; its validity; a rough size; its plain data; its one-line description.

    A subclass adds its geometry's fields, then ``values`` and ``seed``; it gives a
    ``spec`` (raising ConvSpecError for an impossible setup), ``input_shapes()``,
    ``TUPLES`` (its tuple fields, lists in the plain data) and ``COUNTS`` (the names
    ``to_dict`` spells the channel counts out as).

    Attributes
    ----------
    n : batch N
    cg, fg : channels and filters per group (C = groups·cg, F = groups·fg)
    groups : groups dividing C and F
    """

    n: int = 1
    cg: int = 1
    fg: int = 1
    groups: int = 1

    TUPLES: ClassVar[tuple[str, ...]] = ()
    COUNTS: ClassVar[tuple[str, ...]] = ("c", "f")

    @property
    def c(self) -> int:
        return self.groups * self.cg

    @property
    def f(self) -> int:
        return self.groups * self.fg

    @property
    def valid(self) -> bool:
        """Whether the setup is possible (its ``spec`` is made without ConvSpecError)."""
        try:
            self.spec  # type: ignore[attr-defined]  # noqa: B018 - making the spec is the check
        except ConvSpecError:
            return False
        return True

    def input_shapes(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """The shapes of the layer's x, w and b (each subclass's own)."""
        raise NotImplementedError

    @property
    def size(self) -> int:
        """A rough size for ordering examples: input, kernel and batch elements."""
        x, w, _ = self.input_shapes()
        return prod(x) + prod(w)

    def to_dict(self) -> dict[str, Any]:
        """The parameters as plain data (with the channel counts ``COUNTS`` spelled out)."""
        return {**plain_fields(self), **{name: getattr(self, name) for name in self.COUNTS}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """The inverse of ``to_dict`` (the channel counts it spells out are ignored:
        groups, cg and fg say them)."""
        names = {field.name for field in fields(cls)}
        return cls(**tuple_fields({k: v for k, v in data.items() if k in names}, cls.TUPLES))

    def _line(self, parts: Sequence[str], dilation: str | None, extra: Sequence[str] = ()) -> str:
        """``describe``'s line: ``parts``, the dilation (None: there is none), the groups
        when more than one, ``extra`` and the inputs."""
        more = [] if dilation is None else [f"dilation {dilation}"]
        if self.groups != 1:
            more.append(f"groups {self.groups}")
        values = "integer" if self.values == "int" else "float"  # type: ignore[attr-defined]
        return " ".join([*parts, *more, *extra, f"{values} inputs (seed {self.seed})"])  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Case(LayerCase):
    """One conv layer and its inputs.

    Attributes
    ----------
    n, cg, fg, groups : as a ``LayerCase``'s (C = groups·cg, F = groups·fg)
    h, w : input rows and columns
    kh, kw : kernel rows and columns
    stride : (sh, sw); padding : (top, bottom, left, right); dilation : (dh, dw), 1 = none
    activation : a name of ``convcore.activations``
    values : "int" (distinct non-zero small integers), "float" (normal) or "given" (``with_inputs``)
    seed : the seed the inputs are drawn with
    """

    h: int = 3
    w: int = 3
    kh: int = 2
    kw: int = 2
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilation: tuple[int, int] = (1, 1)
    activation: str = "identity"
    values: str = "int"
    seed: int = 0

    TUPLES = ("stride", "padding", "dilation")

    @cached_property
    def spec(self) -> ConvSpec:
        """The resolved geometry; raises ConvSpecError for an impossible setup."""
        return ConvSpec.create(
            (self.n, self.c, self.h, self.w),
            (self.f, self.cg, self.kh, self.kw),
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
        )

    def input_shapes(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """x: (N, C, H, W), w: (F, C/groups, KH, KW), b: (F,)."""
        return (self.n, self.c, self.h, self.w), (self.f, self.cg, self.kh, self.kw), (self.f,)

    @cached_property
    def arrays(self) -> Arrays:
        """x: (N, C, H, W), w: (F, C/groups, KH, KW), b: (F,), dout: (N, F, Ho, Wo)."""
        return Arrays(*drawn_inputs(self.values, self.seed, (*self.input_shapes(), self.spec.out_shape)))

    @cached_property
    def truth(self) -> LayerResults:
        """Every true tensor of the layer (convcore's vectorised core), NCHW / OIHW."""
        x, w, b, dout = self.arrays
        return layer_results(self.spec, x, w, b, get_activation(self.activation), dout)

    @classmethod
    def of_spec(cls, spec: ConvSpec, activation: str, **fields: Any) -> Case:
        """The Case of ``spec``'s geometry with ``activation`` (and any other field, e.g.
        ``seed``)."""
        return cls(
            n=spec.N,
            cg=spec.channels_per_group,
            fg=spec.filters_per_group,
            groups=spec.groups,
            h=spec.H,
            w=spec.W,
            kh=spec.KH,
            kw=spec.KW,
            stride=tuple(spec.stride),
            padding=tuple(spec.padding),
            dilation=tuple(spec.dilation),
            activation=activation,
            **fields,
        )

    @classmethod
    def with_inputs(
        cls, spec: ConvSpec, activation: str, x: np.ndarray, w: np.ndarray, b: np.ndarray, dout: np.ndarray
    ) -> Case:
        """The Case of ``spec`` with these inputs instead of drawn ones: x (N, C, H, W),
        w (F, C/groups, KH, KW), b (F,), dout (N, F, Ho, Wo) (a trace request's own numbers)."""
        case = cls.of_spec(spec, activation, values="given")
        case.__dict__["arrays"] = Arrays(x, w, b, dout)  # the cached property, set once
        return case

    def trace_config(self, layout: str = "NCHW") -> dict[str, Any]:
        """The config of ``convcore.trace`` (and of the page) for this Case, its tensors
        as nested lists in ``layout`` ("NCHW", or "NHWC" with HWIO weights)."""
        x, w, b, dout = self.arrays
        if layout == "NHWC":
            x, w, dout = nchw_to_nhwc(x, "x"), oihw_to_hwio(w, "w"), nchw_to_nhwc(dout, "dout")
        return {
            "layout": layout,
            "x": x.tolist(),
            "w": w.tolist(),
            "b": b.tolist(),
            "dout": dout.tolist(),
            "stride": list(self.stride),
            "padding": list(self.padding),
            "dilation": list(self.dilation),
            "groups": self.groups,
            "activation": self.activation,
        }

    def smaller(self, knob: str) -> Case | None:
        """This Case one step smaller along ``knob`` (``KNOBS``), or None at its lowest."""
        if knob == "activation":
            at = ACTIVATION_ORDER.index(self.activation) if self.activation in ACTIVATION_ORDER else 0
            return replace(self, activation=ACTIVATION_ORDER[at - 1]) if at > 0 else None
        return step_down(self, knob, _INT_KNOBS, _TUPLE_KNOBS)

    def describe(self) -> str:
        """One line: ``N=1 C=1 H×W=3×4 F=1 KH×KW=2×2 stride 1 padding 0 …``."""
        parts = [
            f"N={self.n}",
            f"C={self.c}",
            f"H×W={self.h}×{self.w}",
            f"F={self.f}",
            f"KH×KW={self.kh}×{self.kw}",
            f"stride {_short(self.stride)}",
            f"padding {_short(self.padding)}",
        ]
        activation = [f"activation {self.activation}"] if self.activation != "identity" else []
        return self._line(parts, _short(self.dilation) if self.dilation != (1, 1) else None, activation)


def _short(values: Sequence[int]) -> str:
    """An all-equal tuple as its one number, otherwise as a tuple."""
    return str(values[0]) if len(set(values)) == 1 else str(tuple(values))


def _minus(values: tuple[int, ...], indices: Sequence[int], low: int) -> tuple[int, ...] | None:
    """``values`` with one subtracted at ``indices``, or None when one would fall below ``low``."""
    out = list(values)
    for i in indices:
        out[i] -= 1
        if out[i] < low:
            return None
    return tuple(out)


# knob -> (field, indices it lowers together, lowest value)
TupleKnobs = Mapping[str, tuple[str, tuple[int, ...], int]]
_TUPLE_KNOBS: TupleKnobs = {
    "stride": ("stride", (0, 1), 1),
    "stride_h": ("stride", (0,), 1),
    "stride_w": ("stride", (1,), 1),
    "pad": ("padding", (0, 1, 2, 3), 0),
    "pad_h": ("padding", (0, 1), 0),
    "pad_w": ("padding", (2, 3), 0),
    "pad_top": ("padding", (0,), 0),
    "pad_bottom": ("padding", (1,), 0),
    "pad_left": ("padding", (2,), 0),
    "pad_right": ("padding", (3,), 0),
    "dilation_h": ("dilation", (0,), 1),
    "dilation_w": ("dilation", (1,), 1),
}
# knob (an int field) -> its lowest value
_INT_KNOBS = {"n": 1, "cg": 1, "fg": 1, "groups": 1, "h": 1, "w": 1, "kh": 1, "kw": 1}
KNOBS = (*_INT_KNOBS, *_TUPLE_KNOBS, "activation", "values")


def step_down(case: Any, knob: str, int_knobs: Mapping[str, int], tuple_knobs: TupleKnobs) -> Any:
    """``case`` (a dataclass) one step smaller along ``knob``: an int field of
    ``int_knobs`` minus one, the indices of a tuple field of ``tuple_knobs`` minus one, or
    integer instead of float ``values``; None when it is at its lowest. Raises
    ValueError for a knob of neither table."""
    if knob in int_knobs:
        value = getattr(case, knob)
        return replace(case, **{knob: value - 1}) if value > int_knobs[knob] else None
    if knob in tuple_knobs:
        field, indices, low = tuple_knobs[knob]
        lowered = _minus(getattr(case, field), indices, low)
        return None if lowered is None else replace(case, **{field: lowered})
    if knob == "values":
        return replace(case, values="int") if case.values != "int" else None
    raise ValueError(f"unknown knob {knob!r}; the knobs are {', '.join((*int_knobs, *tuple_knobs, 'values'))}")


def one_step_smaller(case: Any, knobs: Sequence[str]) -> list[Any]:
    """The valid cases one step smaller than ``case`` (a Case, or another layer's case
    with a ``smaller(knob)`` method) along each of ``knobs``, in order."""
    out = []
    for knob in knobs:
        smaller = case.smaller(knob)
        if smaller is not None and smaller.valid:
            out.append(smaller)
    return out
