"""conv2d_forward / conv2d_backward against PyTorch's conv2d with autograd, float64.

Hypothesis draws specs over every parameter (N 1–3, C and F 1–4 with groups dividing
them, H and W 1–9, non-square kernels 1–5, stride and dilation 1–3 per axis, every
padding form, bias on and off) and a random upstream gradient; a relative tolerance of
1e-10 catches a single wrong term.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from oracle import geometry, torch_layer
from strategies import conv_cases, examples

from convcore import conv2d_backward, conv2d_forward
from convcore.functional import backward_padded, crop_padding, pad_input

pytestmark = pytest.mark.oracle

RTOL, ATOL = 1e-10, 1e-12


def assert_close(actual, expected, name):
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=name)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(conv_cases())
def test_forward_and_gradients_match_torch(case):
    x, w, b, dout = case.arrays()
    spec = case.spec
    out = conv2d_forward(x, w, b, **case.kwargs())
    dx, dw, db = conv2d_backward(dout, x, w, **case.kwargs())
    expected = torch_layer(x, w, b, dout, **geometry(spec))
    t_out, t_dx, t_dw, t_db = expected.out, expected.dx, expected.dw, expected.db
    assert out.shape == spec.out_shape
    assert_close(out, t_out, "out")
    assert_close(dx, t_dx, "dx")
    assert_close(dw, t_dw, "dw")
    if b is not None:
        assert_close(db, t_db, "db")
    else:  # db is still the bias gradient a bias would get: the sum of dout per filter
        assert_close(db, dout.sum(axis=(0, 2, 3)), "db")


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(conv_cases())
def test_the_tap_by_tap_path_matches_torch_on_every_spec(case):
    """The same specs through the path large shapes take (im2col by kernel tap, one
    matrix product; convcore.functional.TAP_MAJOR_MIN), forced for every size; groups
    keep the per-group path."""
    import convcore.functional as functional

    x, w, b, dout = case.arrays()
    saved = functional.TAP_MAJOR_MIN
    functional.TAP_MAJOR_MIN = 0
    try:
        out = conv2d_forward(x, w, b, **case.kwargs())
        dx, dw, db = conv2d_backward(dout, x, w, **case.kwargs())
    finally:
        functional.TAP_MAJOR_MIN = saved
    expected = torch_layer(x, w, b, dout, **geometry(case.spec))
    assert_close(out, expected.out, "out")
    assert_close(dx, expected.dx, "dx")
    assert_close(dw, expected.dw, "dw")
    assert_close(db, dout.sum(axis=(0, 2, 3)), "db")


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs",
    [
        ((8, 16, 32, 32), (32, 16, 3, 3), {"padding": 1}),
        ((2, 6, 40, 21), (5, 6, 4, 3), {"stride": (2, 3), "padding": (1, 2, 0, 3), "dilation": (2, 1)}),
        ((3, 4, 25, 25), (6, 4, 5, 5), {"stride": 2, "padding": "same"}),
        ((4, 8, 20, 20), (8, 2, 3, 3), {"groups": 4, "padding": 1}),
    ],
)
def test_large_shapes_match_torch(x_shape, w_shape, kwargs):
    from convcore import ConvSpec
    from convcore.functional import _by_tap

    rng = np.random.default_rng(7)
    x, w, b = rng.normal(size=x_shape), rng.normal(size=w_shape), rng.normal(size=w_shape[0])
    spec = ConvSpec.create(x_shape, w_shape, **kwargs)
    assert _by_tap(spec) == (spec.groups == 1)  # the large path (groups keep theirs)
    dout = rng.normal(size=spec.out_shape)
    out = conv2d_forward(x, w, b, **kwargs)
    dx, dw, db = conv2d_backward(dout, x, w, **kwargs)
    expected = torch_layer(x, w, b, dout, **geometry(spec))
    np.testing.assert_allclose(out, expected.out, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dx, expected.dx, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dw, expected.dw, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(db, expected.db, rtol=1e-9, atol=1e-9)


@pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")
@pytest.mark.parametrize("size,kernel,dilation", [(5, 3, 1), (6, 4, 1), (7, 2, 3), (4, 4, 2)])
def test_same_padding_matches_torch_same_for_stride_one(size, kernel, dilation):
    rng = np.random.default_rng(size * 10 + kernel)
    x = rng.normal(size=(2, 3, size, size + 1))
    w = rng.normal(size=(2, 3, kernel, kernel))
    ours = conv2d_forward(x, w, padding="same", dilation=dilation)
    theirs = torch_layer(x, w, padding="same", dilation=dilation).out
    assert_close(ours, theirs, "same")


def test_floor_truncated_rows_get_exactly_zero_gradient():
    # H = 6, kernel 3, stride 2, no padding: windows cover rows 0..4; row 5 is never read.
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(1, 2, 6, 6)), rng.normal(size=(3, 2, 3, 3))
    dout = rng.normal(size=(1, 3, 2, 2))
    dx, _, _ = conv2d_backward(dout, x, w, stride=2)
    assert np.all(dx[:, :, 5, :] == 0.0) and np.all(dx[:, :, :, 5] == 0.0)
    assert np.all(dx[:, :, :5, :5] != 0.0)


def test_asymmetric_padding_crop_and_padded_gradient():
    # The padded gradient dxp keeps what reached the zero padding; dx is its interior.
    from convcore import ConvSpec

    rng = np.random.default_rng(4)
    x, w = rng.normal(size=(1, 1, 4, 5)), rng.normal(size=(1, 1, 3, 2))
    spec = ConvSpec.create(x.shape, w.shape, padding=(2, 0, 1, 3))
    dout = rng.normal(size=spec.out_shape)
    dxp, _, _ = backward_padded(spec, dout, pad_input(spec, x), w)
    assert dxp.shape == (1, 1, 6, 9)
    dx, _, _ = conv2d_backward(dout, x, w, padding=(2, 0, 1, 3))
    assert_close(crop_padding(spec, dxp), dx, "crop")
    assert_close(dx, torch_layer(x, w, None, dout, **geometry(spec)).dx, "dx")


@pytest.mark.parametrize("kind", ["float64", "int", "list", "float32", "view"])
def test_arrays_are_read_not_kept_written_or_copied_into_the_results(kind):
    """Finite float64 arrays go in as they are (no copy): nothing the API returns shares
    memory with an input, no input is written, and every other form gives the same
    numbers as the float64 arrays."""
    rng = np.random.default_rng(7)
    x, w, b = (
        rng.integers(-3, 4, (2, 3, 6, 5)).astype(float),
        rng.integers(-2, 3, (4, 3, 3, 2)).astype(float),
        rng.standard_normal(4),
    )
    dout = rng.standard_normal((2, 4, 3, 3))
    kw = dict(stride=2, padding=1)
    want = conv2d_forward(x, w, b, **kw), *conv2d_backward(dout, x, w, **kw)
    given_as = {
        "float64": lambda a: a.copy(),
        "int": lambda a: a.astype(np.int64) if np.array_equal(a, a.round()) else a.copy(),
        "list": lambda a: a.tolist(),
        "float32": lambda a: a.astype(np.float32) if np.array_equal(a, a.round()) else a.copy(),
        "view": lambda a: np.asarray(np.broadcast_to(a, a.shape)),  # read-only, shares a's memory
    }[kind]
    xs, ws, bs, ds = (given_as(a) for a in (x, w, b, dout))
    before = [np.array(a, dtype=float) for a in (xs, ws, bs, ds)]
    got = conv2d_forward(xs, ws, bs, **kw), *conv2d_backward(ds, xs, ws, **kw)
    for name, g, e in zip(("out", "dx", "dw", "db"), got, want):
        np.testing.assert_array_equal(g, e, err_msg=name)
        for arg in (xs, ws, bs, ds):
            assert not (isinstance(arg, np.ndarray) and np.shares_memory(g, arg)), name
    for a, kept in zip((xs, ws, bs, ds), before):
        np.testing.assert_array_equal(np.asarray(a, dtype=float), kept)


def test_a_non_finite_float64_array_is_refused_by_its_index():
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 2, 1] = np.nan
    with pytest.raises(ValueError, match=re.escape("x[0][0][2][1] is NaN")):
        conv2d_forward(x, np.ones((1, 1, 3, 3)))
    with pytest.raises(ValueError, match=re.escape("dout[0][0][1][0] is")):
        conv2d_backward(
            np.where(np.arange(4).reshape(1, 1, 2, 2) == 2, np.inf, 0.0), np.zeros((1, 1, 4, 4)), np.ones((1, 1, 3, 3))
        )
