"""Deterministic tensor generators, chosen by name, for inputs nobody wants to type.

A fill spec is a plain dict: ``{"fill": NAME, "shape": [...], "seed": 0, ...params}``.

| fill     | params (defaults)        | values                                        |
|----------|--------------------------|-----------------------------------------------|
| randint  | low -2, high 2           | random integers in [low, high] (inclusive)    |
| normal   | mean 0, std 1            | normal samples                                |
| uniform  | low -1, high 1           | uniform samples in [low, high)                |
| arange   | start 0, step 1          | start, start + step, ... in row-major order   |
| linspace | start 0, stop 1          | evenly spaced from start to stop, row-major   |
| zeros    |                          | 0                                             |
| ones     |                          | 1                                             |
| constant | value 1                  | value                                         |

Random fills draw from ``np.random.default_rng(seed)`` (seed 0 by default), so the same
spec always gives the same tensor. Every fill accepts ``seed``; any other unknown key is
an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .messages import shorten
from .spec import ConvSpecError
from .values import is_int

__all__ = [
    "FILLS",
    "MAX_DIMS",
    "MAX_SEED",
    "Fill",
    "FillSpec",
    "describe",
    "format_number",
    "make_tensor",
    "parse_fill",
]

Params = Mapping[str, float]
_MAX_EXACT_INT = 2**53  # the largest integers float64 holds exactly
MAX_DIMS = 32  # dimensions of a tensor: NumPy iterates (``.flat``) over at most 32
MAX_SEED = 2**32 - 1  # seeds are 32-bit, as the API documents


@dataclass(frozen=True)
class Fill:
    """One named generator.

    Attributes
    ----------
    name : the value of the spec's "fill" key
    defaults : every parameter it takes, with its default
    integer_params : parameters that must be integers
    random : whether the seed matters
    generate : (rng, shape, params) -> float64 array of that shape
    words : params -> the values in words, e.g. "random integers in [−2, 2]"
    title : its name for people ("random integers"), as a page's menu shows it
    """

    name: str
    defaults: Mapping[str, float]
    integer_params: frozenset[str]
    random: bool
    generate: Callable[[np.random.Generator, tuple[int, ...], Params], np.ndarray]
    words: Callable[[Params], str]
    title: str = ""


def format_number(v: float) -> str:
    """A number for people: integers without ".0", a true minus sign (−2, 0.5, 1e+06)."""
    if isinstance(v, (int, np.integer)) or (float(v).is_integer() and abs(v) < 1e15):
        text = str(int(v))
    else:
        text = f"{float(v):g}"
    return text.replace("-", "−")


def _count(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _arange(rng: np.random.Generator, shape: tuple[int, ...], p: Params) -> np.ndarray:
    return (p["start"] + p["step"] * np.arange(_count(shape), dtype=np.float64)).reshape(shape)


def _linspace(rng: np.random.Generator, shape: tuple[int, ...], p: Params) -> np.ndarray:
    return np.linspace(p["start"], p["stop"], _count(shape), dtype=np.float64).reshape(shape)


FILLS: dict[str, Fill] = {
    f.name: f
    for f in (
        Fill(
            "randint",
            {"low": -2, "high": 2},
            frozenset({"low", "high"}),
            True,
            lambda rng, s, p: rng.integers(int(p["low"]), int(p["high"]), size=s, endpoint=True).astype(np.float64),
            lambda p: f"random integers in [{format_number(p['low'])}, {format_number(p['high'])}]",
            title="random integers",
        ),
        Fill(
            "normal",
            {"mean": 0.0, "std": 1.0},
            frozenset(),
            True,
            lambda rng, s, p: rng.normal(p["mean"], p["std"], size=s),
            lambda p: f"normal samples with mean {format_number(p['mean'])} and std {format_number(p['std'])}",
            title="normal",
        ),
        Fill(
            "uniform",
            {"low": -1.0, "high": 1.0},
            frozenset(),
            True,
            lambda rng, s, p: rng.uniform(p["low"], p["high"], size=s),
            lambda p: f"uniform samples in [{format_number(p['low'])}, {format_number(p['high'])})",
            title="uniform",
        ),
        Fill(
            "arange",
            {"start": 0.0, "step": 1.0},
            frozenset(),
            False,
            _arange,
            lambda p: f"values counting from {format_number(p['start'])} in steps of {format_number(p['step'])}",
            title="arange",
        ),
        Fill(
            "linspace",
            {"start": 0.0, "stop": 1.0},
            frozenset(),
            False,
            _linspace,
            lambda p: f"values evenly spaced from {format_number(p['start'])} to {format_number(p['stop'])}",
            title="linspace",
        ),
        Fill("zeros", {}, frozenset(), False, lambda rng, s, p: np.zeros(s), lambda p: "zeros", title="zeros"),
        Fill("ones", {}, frozenset(), False, lambda rng, s, p: np.ones(s), lambda p: "ones", title="ones"),
        Fill(
            "constant",
            {"value": 1.0},
            frozenset(),
            False,
            lambda rng, s, p: np.full(s, float(p["value"])),
            lambda p: f"values all equal to {format_number(p['value'])}",
            title="constant",
        ),
    )
}


class FillSpec(NamedTuple):
    """A validated fill spec: the generator, the shape, the seed and every parameter."""

    fill: Fill
    shape: tuple[int, ...]
    seed: int
    params: dict[str, float]

    @property
    def size(self) -> int:
        """Number of elements the tensor will have (known before generating it)."""
        return _count(self.shape)


def _is_real(v: Any) -> bool:
    """A finite number that float64 holds (an int of 400 digits is not)."""
    if not (is_int(v) or isinstance(v, (float, np.floating))):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def parse_fill(spec: Any, name: str | None = None) -> FillSpec:
    """Validate a fill spec dict without generating anything.

    ``name`` is the tensor the spec is for ("x", "w", ...): errors then carry it as
    their field and prefix the key at fault ("x.shape ..."); without it the field is the
    key at fault ("fill", "shape", "seed" or the parameter).
    """

    def fail(key: str, message: str) -> ConvSpecError:
        where = f"{name}.{key}" if name else key
        return ConvSpecError(f"{where} {message}", name or key)

    if not isinstance(spec, Mapping):
        raise ConvSpecError(
            f"{name or 'fill spec'} must be a dict like {{'fill': 'randint', 'shape': [1, 1, 5, 5]}}, "
            f"got {type(spec).__name__}",
            name or "fill",
        )
    kind = spec.get("fill")
    if not isinstance(kind, str) or kind not in FILLS:
        allowed = ", ".join(repr(k) for k in FILLS)
        raise fail("fill", f"must be one of {allowed}; got {shorten(kind)}")
    fill = FILLS[kind]

    if "shape" not in spec:
        raise fail("shape", "is missing: give a list of dimensions such as [1, 1, 5, 5]")
    raw_shape = spec["shape"]
    if not isinstance(raw_shape, (list, tuple)) or not all(is_int(d) for d in raw_shape):
        raise fail("shape", f"must be a list of integers, got {shorten(raw_shape)}")
    if len(raw_shape) == 0:
        raise fail("shape", "must have at least one dimension, got []")
    if len(raw_shape) > MAX_DIMS:
        raise fail("shape", f"has {len(raw_shape)} dimensions; at most {MAX_DIMS} are supported")
    shape = tuple(int(d) for d in raw_shape)
    if min(shape) < 1:
        raise fail("shape", f"dimensions must all be at least 1, got {shorten(list(shape))}")

    seed = spec.get("seed", 0)
    if not is_int(seed) or seed < 0:
        raise fail("seed", f"must be a non-negative integer, got {shorten(seed)}")
    if seed > MAX_SEED:
        raise fail("seed", f"must be at most {MAX_SEED} (2^32 − 1), got {shorten(seed)}")

    unknown = sorted(set(spec) - {"fill", "shape", "seed"} - set(fill.defaults))
    if unknown:
        takes = ", ".join(fill.defaults) if fill.defaults else "no parameters"
        key = unknown[0]
        shown = key if isinstance(key, str) and len(key) <= 40 else shorten(key)
        raise fail(shown, f"is not a parameter of fill {kind!r} (it takes: {takes})")

    params: dict[str, float] = {}
    for key, default in fill.defaults.items():
        value = spec.get(key, default)
        if key in fill.integer_params:
            if not is_int(value) or abs(value) > _MAX_EXACT_INT:
                raise fail(key, f"must be an integer within ±2^53 for fill {kind!r}, got {shorten(value)}")
            params[key] = int(value)
        else:
            if not _is_real(value):
                raise fail(key, f"must be a finite number, got {shorten(value)}")
            params[key] = float(value)

    if kind in ("randint", "uniform") and params["low"] > params["high"]:
        raise fail(
            "low",
            f"must not exceed high: low = {format_number(params['low'])}, high = {format_number(params['high'])}",
        )
    if kind == "uniform" and not math.isfinite(params["high"] - params["low"]):
        raise fail(
            "high",
            f"minus low overflows float64: low = {format_number(params['low'])}, "
            f"high = {format_number(params['high'])} (high − low must stay below 1.8e+308)",
        )
    if kind == "normal" and params["std"] < 0:
        raise fail("std", f"must not be negative, got {format_number(params['std'])}")
    return FillSpec(fill, shape, int(seed), params)


def make_tensor(spec: Any, name: str | None = None, max_elements: int | None = None) -> np.ndarray:
    """The tensor a fill spec describes: float64, of shape ``spec["shape"]``.

    Raises ConvSpecError (see ``parse_fill`` for the field) for unknown fills or
    parameters, bad shapes, more than ``max_elements`` elements, or values that
    overflow float64.
    """
    parsed = parse_fill(spec, name)
    if max_elements is not None and parsed.size > max_elements:
        where = f"{name}.shape" if name else "shape"
        raise ConvSpecError(
            f"{where} {list(parsed.shape)} has {parsed.size} elements; the limit is {max_elements}",
            name or "shape",
        )
    rng = np.random.default_rng(parsed.seed)
    with np.errstate(over="ignore", invalid="ignore"):
        tensor = np.asarray(parsed.fill.generate(rng, parsed.shape, parsed.params), dtype=np.float64)
    if not np.isfinite(tensor).all():
        raise ConvSpecError(f"{name or 'fill'}: {describe_parsed(parsed)} overflows float64", name or "fill")
    return tensor


def describe_parsed(parsed: FillSpec) -> str:
    """The sentence for an already validated spec (see ``describe``)."""
    dims = "×".join(str(d) for d in parsed.shape)
    text = f"{dims} {parsed.fill.words(parsed.params)}"
    if parsed.fill.random:
        text += f", seed {parsed.seed}"
    return text


def describe(spec: Any, name: str | None = None) -> str:
    """A fill spec in words, e.g. ``"1×3×5×5 random integers in [−2, 2], seed 7"``."""
    return describe_parsed(parse_fill(spec, name))
