"""What is true of a wrong output, stated before any guess from the catalogue.

``facts(convention, case, name, got)`` checks the output at the counterexample
against a few plain properties a TA would look at first: it is None, all zeros, of
the wrong shape (with the shape rule it broke, in numbers), the input's shape instead
of the output's, transposed (H and W swapped), off by a constant factor or a constant,
or missing the bias. Each is checked, not guessed: a fact is stated only when it holds.

``stride_fact(convention, case, name, got, rerun)`` is the one fact that needs the
code run again: the same output for another stride, where the right ones differ
(``rerun(case)`` runs the code on a Case and gives its ``name`` output).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..mistakes import Case, Failure, get_convention, outcome_equal
from ..mistakes.layer_cases import Conv1dCase, TransposedCase
from .space import MAX_STRIDE

__all__ = ["facts", "other_stride", "stride_fact"]

ROLE_OF = {"dx": "x", "dw": "w", "db": "b"}


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-6, atol=1e-9))


def _transposed_rule(case: TransposedCase, axis: int) -> str:
    """A ConvTranspose2d's output-size rule of the rows (``axis`` 0) or the columns (1)."""
    o, n, k = ("H_out", "H", "KH") if axis == 0 else ("W_out", "W", "KW")
    size, kernel = (case.h, case.kh) if axis == 0 else (case.w, case.kw)
    s, p, op, d = (getattr(case, name)[axis] for name in ("stride", "padding", "output_padding", "dilation"))
    return (
        f"{o} = ({n} − 1)·stride − 2·padding + dilation·({k} − 1) + output_padding + 1"
        f" = ({size} − 1)·{s} − 2·{p} + {d}·({kernel} − 1) + {op} + 1 = {case.spec.out_hw[axis]}"
    )


def _conv1d_rule(case: Conv1dCase) -> str:
    """A Conv1d's output-length rule, its padding as (left, right) (causal: left only)."""
    _, _, left, right = case.spec.padding
    return (
        f"L_out = 1 + (L + left + right − dilation·(K − 1) − 1) // stride"
        f" = 1 + ({case.length} + {left} + {right} − {case.dilation}·({case.k} − 1) − 1) // {case.stride}"
        f" = {case.out_length}"
    )


def _shape_rule(case: Any, convention: str, axis: int) -> str:
    """The output-size rule of the rows (``axis`` 0) or the columns (1), in numbers (a
    Conv1d's length is its one axis)."""
    if isinstance(case, TransposedCase):
        return _transposed_rule(case, axis)
    if isinstance(case, Conv1dCase):
        return _conv1d_rule(case)
    size, kernel = (case.h, case.kh) if axis == 0 else (case.w, case.kw)
    stride, dilation = case.stride[axis], case.dilation[axis]
    first, second = case.padding[2 * axis : 2 * axis + 2]
    out = case.spec.out_shape[2 + axis]
    o, n, k = ("H_out", "H", "HH") if axis == 0 else ("W_out", "W", "WW")
    if convention == "cs231n":
        return f"{o} = 1 + ({n} + 2·pad − {k}) // stride = 1 + ({size} + 2·{first} − {kernel}) // {stride} = {out}"
    sides = ("pad_top", "pad_bottom") if axis == 0 else ("pad_left", "pad_right")
    k = "KH" if axis == 0 else "KW"
    extent = f"dilation·({k} − 1) − 1" if dilation != 1 else k
    spans = f"{dilation}·({kernel} − 1) − 1" if dilation != 1 else f"{kernel}"
    return (
        f"{o} = 1 + ({n} + {sides[0]} + {sides[1]} − {extent}) // stride"
        f" = 1 + ({size} + {first} + {second} − {spans}) // {stride} = {out}"
    )


def _broken_size_rules(case: Case, convention: str, layout: str, got: tuple, expected: tuple) -> list[str]:
    """The output-size rules that ``got`` (out's shape) breaks: the rows', the columns'
    or both (the rows' when the number of axes is wrong)."""
    axes = ("length",) if layout == "NCL" else ("rows", "columns")
    if len(got) != len(expected):
        return [f"the output's {axes[0]}: {_shape_rule(case, convention, 0)}"]
    first = 1 if layout == "NHWC" else 2
    return [
        f"the output's {which}: {_shape_rule(case, convention, axis)}"
        for axis, which in enumerate(axes)
        if got[first + axis] != expected[first + axis]
    ]


def facts(convention: str, case: Case, name: str, got: Any) -> list[str]:
    """The plain facts about output ``name`` (``got``, in the convention's layout) at ``case``."""
    conv = get_convention(convention)
    expected = conv.expected(case)[name]
    if isinstance(got, Failure):
        if got.kind == "returned None":
            return [f"{name} is None: nothing was returned for it (is the function finished?)"]
        return []
    got = np.asarray(got, dtype=np.float64)
    found: list[str] = []
    if got.size and not np.any(got) and np.any(expected):
        found.append(f"{name} is all zeros (never written, or returned before it was filled?)")
    if got.shape != expected.shape:
        source = conv.returned_by(name)
        what = f"{name}, what {source} returned," if source else name
        found.append(f"{what} has shape {got.shape}; it should be {expected.shape}")
        inputs = conv.inputs(case)
        x = inputs.get("x", inputs.get("X"))
        if name == "out" and x is not None and got.shape == np.shape(x) and np.shape(x) != expected.shape:
            found.append("out has the input's shape, not the output's")
        if name == "out":
            found.extend(_broken_size_rules(case, convention, conv.layout, got.shape, expected.shape))
        if got.ndim == 4 and got.shape[:2] + got.shape[2:][::-1] == expected.shape and got.shape[2] != got.shape[3]:
            found.append(f"{name}'s last two sizes are swapped (H and W?)")
        return found
    if found or not got.size:
        return found
    if (
        got.ndim == 4  # (rows and columns: a Conv1d's tensors have one axis of positions)
        and got.shape[-1] == got.shape[-2]
        and got.shape[-1] > 1
        and _close(got, np.swapaxes(expected, -1, -2))
        and not _close(got, expected)
    ):
        found.append(f"{name} is the right answer transposed: rows and columns (H and W) swapped")
    if name == "out":
        b = np.asarray(conv.inputs(case).get("b"), dtype=np.float64).reshape(-1)
        bias = b[None, None, None, :] if conv.layout == "NHWC" else b.reshape(1, -1, *[1] * (expected.ndim - 2))
        if np.any(b) and _close(got, expected - bias):
            return found + ["out is the right answer without the bias: b is never added"]
    if got.size < 2 or np.ptp(expected) == 0:  # (one number is any multiple, and any shift, of another)
        return found
    scale = float(np.vdot(got, expected) / np.vdot(expected, expected))
    if scale not in (0.0, 1.0) and _close(got, scale * expected):
        averaged = scale < 1 and abs(1 / scale - round(1 / scale)) < 1e-9
        found.append(
            f"{name} is the right answer times {scale:.6g}"
            + (f" (divided by {round(1 / scale)}: averaged?)" if averaged else "")
        )
    shift = got - expected
    if np.ptp(shift) < 1e-9 and abs(float(shift.flat[0])) > 1e-9:
        found.append(f"{name} is the right answer plus the constant {float(shift.flat[0]):.6g}")
    return found


def other_stride(convention: str, case: Case, name: str) -> Case | None:
    """``case`` with another stride (the same on both axes, within the grader's bounds;
    1 first) whose true ``name`` differs from ``case``'s, or None when there is none."""
    conv = get_convention(convention)
    expected = conv.expected(case)[name]
    for stride in range(1, MAX_STRIDE + 1):
        other = replace(case, stride=stride if isinstance(case.stride, int) else (stride, stride))
        if other != case and other.valid and not outcome_equal(conv.expected(other)[name], expected):
            return other
    return None


def stride_fact(convention: str, case: Case, name: str, got: Any, rerun: Callable[[Case], Any]) -> list[str]:
    """The fact that ``got`` (output ``name`` at ``case``) is what the code gives for
    another stride too, where the right outputs differ: the stride is never used. Checked
    by running the code (``rerun``) on ``case`` with that stride and the same x, w and b."""
    if isinstance(got, Failure):
        return []
    other = other_stride(convention, case, name)
    if other is None:
        return []
    again = rerun(other)
    if isinstance(again, Failure) or not outcome_equal(
        np.asarray(again, dtype=np.float64), np.asarray(got, dtype=np.float64)
    ):
        return []
    return [
        f"{name} is identical for stride {_stride(case)} and stride {_stride(other)} (the right {name} differs "
        f"between them: {_shape_or_values(convention, case, other, name)}): is the stride used at all?"
    ]


def _stride(case: Any) -> str:
    if isinstance(case.stride, int):  # (a Conv1d's)
        return str(case.stride)
    sh, sw = case.stride
    return str(sh) if sh == sw else str((sh, sw))


def _shape_or_values(convention: str, case: Case, other: Case, name: str) -> str:
    conv = get_convention(convention)
    a, b = conv.expected(case)[name], conv.expected(other)[name]
    return f"shape {a.shape} and {b.shape}" if a.shape != b.shape else "other values"
