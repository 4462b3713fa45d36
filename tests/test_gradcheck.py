"""Numerical gradients: the helper itself, then conv2d_backward against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import convcore.gradcheck as gradcheck
from convcore import ConvSpec
from convcore.functional import backward_padded, crop_padding, pad_input
from convcore.gradcheck import (
    check_conv_gradients,
    compare_gradients,
    directional_check,
    numerical_gradient,
)


def test_numerical_gradient_of_a_known_nonlinear_function():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4))
    dout = rng.normal(size=(3, 4))
    grad = numerical_gradient(lambda v: v**3, x, dout)
    np.testing.assert_allclose(grad, 3 * x**2 * dout, rtol=1e-6, atol=1e-8)


def test_numerical_gradient_of_a_shape_changing_function():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(5, 3))
    x = rng.normal(size=(3, 2))
    dout = rng.normal(size=(5, 2))
    grad = numerical_gradient(lambda v: a @ v, x, dout)
    np.testing.assert_allclose(grad, a.T @ dout, rtol=1e-7, atol=1e-9)


def test_numerical_gradient_leaves_its_input_alone():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    before = x.copy()
    numerical_gradient(np.sin, x, np.ones_like(x))
    np.testing.assert_array_equal(x, before)


def test_compare_gradients_reports_the_worst_cell():
    a = np.array([1.0, 2.0, 0.0])
    n = np.array([1.0, 2.5, 0.0])
    report = compare_gradients(a, n)
    assert report["max_abs_error"] == pytest.approx(0.5)
    assert report["max_rel_error"] == pytest.approx(0.5 / 4.5)


CASES = {
    # name: (x_shape, w_shape, bias, stride, padding, dilation, groups)
    "plain": ((1, 2, 5, 5), (3, 2, 3, 3), True, 1, 0, 1, 1),
    "groups 2": ((2, 4, 5, 4), (6, 2, 2, 3), True, 1, 1, 1, 2),
    "stride 2 with floor truncation": ((1, 2, 6, 7), (2, 2, 3, 2), True, 2, 0, 1, 1),
    "dilation 2": ((1, 1, 7, 6), (2, 1, 3, 2), False, 1, 1, 2, 1),
    "asymmetric padding": ((1, 2, 4, 5), (2, 2, 3, 3), True, 1, (2, 0, 1, 3), 1, 1),
    "everything at once": ((2, 4, 7, 8), (4, 2, 2, 3), True, (2, 3), (1, 2, 0, 1), (2, 1), 2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_conv_gradients_match_central_differences(name):
    x_shape, w_shape, with_bias, stride, padding, dilation, groups = CASES[name]
    rng = np.random.default_rng(len(name))
    x = rng.normal(size=x_shape)
    w = rng.normal(size=w_shape)
    b = rng.normal(size=w_shape[0]) if with_bias else None
    out_shape = ConvSpec.create(x_shape, w_shape, stride, padding, dilation, groups).out_shape
    dout = rng.normal(size=out_shape)
    report = check_conv_gradients(x, w, b, dout, stride, padding, dilation, groups)
    for grad in ("dx", "dw", "db"):
        assert report[grad]["max_abs_error"] < 1e-7, (grad, report)
        assert report[grad]["max_rel_error"] < 1e-6, (grad, report)
    assert report["max_abs_error"] == max(report[g]["max_abs_error"] for g in ("dx", "dw", "db"))


def test_a_wrong_backward_is_caught(monkeypatch):
    # The check must be able to fail: a backward pass with the kernel gradient flipped
    # 180 degrees (a classic mistake) is reported with a large error in dw only.
    real_backward = gradcheck.conv2d_backward

    def flipped_dw(*args, **kwargs):
        dx, dw, db = real_backward(*args, **kwargs)
        return dx, dw[:, :, ::-1, ::-1], db

    monkeypatch.setattr(gradcheck, "conv2d_backward", flipped_dw)
    rng = np.random.default_rng(5)
    x, w, b = rng.normal(size=(1, 1, 4, 4)), rng.normal(size=(1, 1, 2, 2)), rng.normal(size=1)
    report = check_conv_gradients(x, w, b, rng.normal(size=(1, 1, 3, 3)))
    assert report["dw"]["max_abs_error"] > 0.1
    assert report["dx"]["max_abs_error"] < 1e-7 and report["db"]["max_abs_error"] < 1e-7


# -- directional_check: the cheap check a server can run on every trace --------------


def _case(seed=5, groups=2, stride=(2, 1), padding=(1, 0, 2, 1), dilation=(1, 2)):
    rng = np.random.default_rng(seed)
    spec = ConvSpec.create((2, 4, 7, 8), (4, 4 // groups, 3, 2), stride, padding, dilation, groups)
    x, w, b = rng.normal(size=spec.x_shape), rng.normal(size=spec.w_shape), rng.normal(size=spec.F)
    dz = rng.normal(size=spec.out_shape)
    dxp, dw, db = backward_padded(spec, dz, pad_input(spec, x), w)
    return spec, x, w, b, dz, {"dx": crop_padding(spec, dxp), "dw": dw, "db": db}


def test_directional_check_passes_true_gradients():
    spec, x, w, b, dz, grads = _case()
    report = directional_check(spec, x, w, b, dz, grads)
    assert report["max_rel_error"] < 1e-8
    assert report["directions"] == 4 and "directional derivatives" in report["method"]


@pytest.mark.parametrize(
    "name, corrupt",
    [
        ("dw", lambda g: g[:, :, ::-1, ::-1]),  # a flipped kernel gradient
        ("dx", lambda g: np.roll(g, 1, axis=3)),  # dX off by one column
        ("db", lambda g: g * 1.01),  # a 1 % error in one tensor
        ("dx", lambda g: np.where(np.arange(g.size).reshape(g.shape) == 17, g + 1e-3, g)),
    ],
)
def test_directional_check_catches_a_wrong_gradient(name, corrupt):
    spec, x, w, b, dz, grads = _case()
    grads[name] = corrupt(grads[name])
    assert directional_check(spec, x, w, b, dz, grads)["max_rel_error"] > 1e-6


def test_directional_check_without_bias_skips_db():
    spec, x, w, _, dz, grads = _case(groups=1)
    del grads["db"]
    assert directional_check(spec, x, w, None, dz, grads)["max_rel_error"] < 1e-8


def test_directional_check_is_exact_for_values_near_the_api_limit():
    # z around 1e12 drowns a finite step of 1e-3 in a bias of 1e6 (the reviewer's case):
    # the check must still report the true gradients as right and a wrong one as wrong.
    rng = np.random.default_rng(11)
    spec = ConvSpec.create((1, 2, 5, 5), (3, 2, 2, 2))
    x, w, b = (rng.uniform(-1e6, 1e6, s) for s in (spec.x_shape, spec.w_shape, (spec.F,)))
    dz = rng.uniform(-1e6, 1e6, spec.out_shape)
    dxp, dw, db = backward_padded(spec, dz, pad_input(spec, x), w)
    grads = {"dx": crop_padding(spec, dxp), "dw": dw, "db": db}
    assert directional_check(spec, x, w, b, dz, grads)["max_rel_error"] < 1e-12
    grads["db"] = db * (1 + 1e-6)
    assert directional_check(spec, x, w, b, dz, grads)["max_rel_error"] > 1e-8
