"""Numerical gradients by central differences: an oracle that needs no framework.

For a function ``f`` and an upstream gradient ``dout`` the scalar loss is
``L(x) = Σ f(x) · dout``; its gradient is estimated one element at a time as
``(L(x + ε·e_i) − L(x − ε·e_i)) / 2ε``. A convolution is linear in each of x, w and b,
so for it the estimate is exact up to rounding (about 1e-9 with ε = 1e-6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .functional import conv2d_backward, conv2d_forward, forward_with_mode
from .spec import ConvSpec, PaddingArg

__all__ = ["check_conv_gradients", "compare_gradients", "directional_check", "numerical_gradient"]


def numerical_gradient(
    f: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    dout: np.ndarray,
    eps: float = 1e-6,
) -> np.ndarray:
    """``d(Σ f(x) · dout) / dx`` by central differences.

    Parameters
    ----------
    f : array of x's shape -> array of dout's shape (must not keep or modify its input)
    x : any shape; not modified
    dout : the shape of ``f(x)``, the upstream gradient

    Returns
    -------
    dx : float64, the shape of ``x``
    """
    point = np.array(x, dtype=np.float64)  # a private copy, perturbed in place
    upstream = np.asarray(dout, dtype=np.float64)
    grad = np.zeros_like(point)
    flat_point, flat_grad = point.reshape(-1), grad.reshape(-1)
    for i in range(flat_point.size):
        original = flat_point[i]
        flat_point[i] = original + eps
        plus = np.sum(f(point) * upstream)
        flat_point[i] = original - eps
        minus = np.sum(f(point) * upstream)
        flat_point[i] = original
        flat_grad[i] = (plus - minus) / (2 * eps)
    return grad


def compare_gradients(analytic: np.ndarray, numerical: np.ndarray) -> dict[str, float]:
    """Largest differences between two gradients of the same shape.

    ``max_abs_error`` is max |a − n|; ``max_rel_error`` is CS231n's
    max |a − n| / max(|a| + |n|, 1e-8) (the floor keeps cells whose gradient is zero in
    both from dividing by zero).
    """
    a = np.asarray(analytic, dtype=np.float64)
    n = np.asarray(numerical, dtype=np.float64)
    diff = np.abs(a - n)
    return {
        "max_abs_error": float(diff.max(initial=0.0)),
        "max_rel_error": float((diff / np.maximum(np.abs(a) + np.abs(n), 1e-8)).max(initial=0.0)),
    }


def check_conv_gradients(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    dout: np.ndarray,
    stride: int | Sequence[int] = 1,
    padding: PaddingArg = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    eps: float = 1e-6,
) -> dict[str, dict[str, float] | float]:
    """Compare ``conv2d_backward`` with central differences of ``conv2d_forward``.

    Parameters
    ----------
    x : (N, C, H, W)
    w : (F, C/groups, KH, KW)
    b : (F,) or None (then db is checked for a zero bias)
    dout : (N, F, Ho, Wo), the upstream gradient (use a random one)
    stride, padding, dilation, groups : as in ``conv2d_forward``

    Returns
    -------
    ``{"dx": {"max_abs_error", "max_rel_error"}, "dw": {...}, "db": {...},
    "max_abs_error": worst of the three, "max_rel_error": worst of the three}``
    """
    xa = np.asarray(x, dtype=np.float64)
    wa = np.asarray(w, dtype=np.float64)
    ba = np.zeros(wa.shape[0]) if b is None else np.asarray(b, dtype=np.float64)
    da = np.asarray(dout, dtype=np.float64)
    geometry = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)

    dx, dw, db = conv2d_backward(da, xa, wa, **geometry)
    numerical = {
        "dx": numerical_gradient(lambda v: conv2d_forward(v, wa, ba, **geometry), xa, da, eps),
        "dw": numerical_gradient(lambda v: conv2d_forward(xa, v, ba, **geometry), wa, da, eps),
        "db": numerical_gradient(lambda v: conv2d_forward(xa, wa, v, **geometry), ba, da, eps),
    }
    report: dict[str, dict[str, float] | float] = {
        name: compare_gradients(analytic, numerical[name]) for name, analytic in (("dx", dx), ("dw", dw), ("db", db))
    }
    report["max_abs_error"] = max(report[k]["max_abs_error"] for k in ("dx", "dw", "db"))  # type: ignore[index]
    report["max_rel_error"] = max(report[k]["max_rel_error"] for k in ("dx", "dw", "db"))  # type: ignore[index]
    return report


def directional_check(
    spec: ConvSpec,
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    dz: np.ndarray,
    grads: dict[str, np.ndarray],
    directions: int = 4,
    seed: int = 0,
    padding_mode: str = "zeros",
    flip: bool = False,
    forward: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> dict[str, float | int | str]:
    """Check given gradients against directional derivatives of the forward pass.

    The loss ``L = Σ conv(x, w, b) · dz`` is linear in each of x, w and b, so its
    central difference along a direction v is exact for any step and needs no step at
    all: ``(L(x + εv) − L(x − εv)) / 2ε = Σ conv(v, w, 0) · dz`` (likewise
    ``Σ conv(x, v, 0) · dz`` for w and ``Σ_f v_f Σ dz[:, f]`` for b). Computing it that
    way avoids the cancellation a finite step suffers when values reach ±1e6. It must
    equal ``⟨g, v⟩`` for the gradient g under test. A few random directions per tensor
    check every cell of a gradient at once, for one forward pass per direction; the
    check uses the forward pass only, never the backward code it verifies.

    Parameters
    ----------
    spec : the resolved geometry
    x : (N, C, H, W); w : (F, C/groups, KH, KW); b : (F,) or None
    dz : (N, F, Ho, Wo), the gradient arriving at the conv's output
    grads : {"dx": (N, C, H, W), "dw": (F, C/groups, KH, KW), "db": (F,)} to check
        (db only when b is given)
    padding_mode, flip : the layer's (a padding that copies and a turned kernel are
        linear too, so the same identity holds)
    forward : ``(x, w) -> out`` without a bias, for another layer linear in x and in w
        (a transposed convolution); ``spec``, ``padding_mode`` and ``flip`` are then
        unused and ``dz`` is the gradient at that layer's output

    Returns
    -------
    ``{"method", "directions", "max_rel_error"}``. The error of one direction is
    ``|Σ conv(v)·dz − ⟨g, v⟩|`` divided by the same sum taken over absolute values
    (the size of the terms, so that a sum that cancels to nearly zero is not
    mistaken for a large relative error).
    """
    rng = np.random.default_rng(seed)

    def response(xv: np.ndarray, wv: np.ndarray, upstream: np.ndarray) -> float:
        """Σ conv(xv, wv, no bias) · upstream: xv (N, C, H, W), wv (F, C/g, KH, KW)."""
        out = forward(xv, wv) if forward is not None else forward_with_mode(spec, xv, wv, None, padding_mode, flip)
        return float(np.sum(out * upstream))

    def derivative(name: str, v: np.ndarray) -> tuple[float, float]:
        """(the directional derivative along v, the size of its terms)."""
        if name == "dx":
            return response(v, w, dz), response(np.abs(v), np.abs(w), np.abs(dz))
        if name == "dw":
            return response(x, v, dz), response(np.abs(x), np.abs(v), np.abs(dz))
        per_filter = dz.sum(axis=(0, 2, 3))
        return float(v @ per_filter), float(np.abs(v) @ np.abs(dz).sum(axis=(0, 2, 3)))

    shapes = {"dx": x.shape, "dw": w.shape, "db": (dz.shape[1],)}
    worst = 0.0
    for name in ("dx", "dw", "db"):
        if name not in grads or (name == "db" and b is None):
            continue
        for _ in range(directions):
            v = rng.standard_normal(shapes[name])
            expected, size = derivative(name, v)
            got = float(np.sum(grads[name] * v))
            worst = max(worst, abs(expected - got) / max(size, np.finfo(float).tiny))
    return {
        "method": f"directional derivatives of the forward pass along {directions} random directions per gradient",
        "directions": directions,
        "max_rel_error": worst,
    }
