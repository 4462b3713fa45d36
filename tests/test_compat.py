"""The seeds' conventions: CS231n's conv_*_naive and the NHWC Conv2D layer with pad2d."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import torch_layer

from convcore import conv2d_forward
from convcore.compat import Conv2D, conv_backward_naive, conv_forward_naive, pad2d
from convcore.spec import ConvSpecError

# -- CS231n (seed 004) -------------------------------------------------------------------------


def reference_loops(x, w, b, dout, stride, pad):
    """One multiply-accumulate per Python iteration, symmetric padding, as in the course."""
    n_, c_, h, w_ = x.shape
    f_, _, kh, kw = w.shape
    ho, wo = 1 + (h + 2 * pad - kh) // stride, 1 + (w_ + 2 * pad - kw) // stride
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n_, f_, ho, wo))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    db = np.zeros(f_)
    for n in range(n_):
        for f in range(f_):
            for i in range(ho):
                for j in range(wo):
                    out[n, f, i, j] += b[f]
                    db[f] += dout[n, f, i, j]
                    for c in range(c_):
                        for k in range(kh):
                            for l in range(kw):
                                r, s = stride * i + k, stride * j + l
                                out[n, f, i, j] += xp[n, c, r, s] * w[f, c, k, l]
                                dw[f, c, k, l] += xp[n, c, r, s] * dout[n, f, i, j]
                                dxp[n, c, r, s] += w[f, c, k, l] * dout[n, f, i, j]
    return out, dxp[:, :, pad : pad + h, pad : pad + w_], dw, db


CS231N_CASES = [
    # x_shape, w_shape, stride, pad
    ((2, 3, 5, 5), (2, 3, 3, 3), 1, 1),
    ((1, 2, 7, 6), (3, 2, 3, 2), 2, 0),  # floor truncation: the last column is never read
    ((2, 1, 6, 6), (2, 1, 2, 2), 2, 2),
    ((1, 2, 4, 4), (1, 2, 4, 4), 1, 0),  # a 1x1 output
]


def cs231n_arrays(case_index, x_shape, w_shape, stride, pad):
    rng = np.random.default_rng(case_index)
    x, w, b = rng.normal(size=x_shape), rng.normal(size=w_shape), rng.normal(size=w_shape[0])
    ho = 1 + (x_shape[2] + 2 * pad - w_shape[2]) // stride
    wo = 1 + (x_shape[3] + 2 * pad - w_shape[3]) // stride
    dout = rng.normal(size=(x_shape[0], w_shape[0], ho, wo))
    return x, w, b, dout


@pytest.mark.parametrize("index", range(len(CS231N_CASES)))
def test_cs231n_matches_a_reference_loop(index):
    x_shape, w_shape, stride, pad = CS231N_CASES[index]
    x, w, b, dout = cs231n_arrays(index, *CS231N_CASES[index])
    conv_param = {"stride": stride, "pad": pad}
    out, cache = conv_forward_naive(x, w, b, conv_param)
    dx, dw, db = conv_backward_naive(dout, cache)
    expected = reference_loops(x, w, b, dout, stride, pad)
    for name, got, want in zip(("out", "dx", "dw", "db"), (out, dx, dw, db), expected):
        assert got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12, err_msg=name)


@pytest.mark.oracle
@pytest.mark.parametrize("index", range(len(CS231N_CASES)))
def test_cs231n_matches_torch(index):
    x_shape, w_shape, stride, pad = CS231N_CASES[index]
    x, w, b, dout = cs231n_arrays(index, *CS231N_CASES[index])
    out, cache = conv_forward_naive(x, w, b, {"stride": stride, "pad": pad})
    dx, dw, db = conv_backward_naive(dout, cache)
    expected = torch_layer(x, w, b, dout, stride=stride, padding=pad)
    for name, got, want in zip(
        ("out", "dx", "dw", "db"), (out, dx, dw, db), (expected.out, expected.dx, expected.dw, expected.db)
    ):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)


def test_cs231n_cache_is_the_course_tuple():
    x, w, b = np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), np.zeros(1)
    conv_param = {"stride": 1, "pad": 0}
    _, cache = conv_forward_naive(x, w, b, conv_param)
    assert len(cache) == 4
    assert cache[0] is x and cache[1] is w and cache[2] is b and cache[3] is conv_param


@pytest.mark.parametrize(
    "conv_param, fragment",
    [({"stride": 1}, "conv_param['pad']"), ({"pad": 0}, "conv_param['stride']"), ((1, 0), "dict")],
)
def test_cs231n_bad_conv_param(conv_param, fragment):
    with pytest.raises(ConvSpecError) as info:
        conv_forward_naive(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), np.zeros(1), conv_param)
    assert info.value.field == "conv_param" and fragment in str(info.value)


# -- pad2d (seed 001) --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hw, pad, kernel, stride, dilation, expected",
    [
        ((5, 5), 1, (3, 3), 1, 0, (1, 1, 1, 1)),
        ((5, 5), (1, 2), (3, 3), 1, 0, (1, 1, 2, 2)),
        ((5, 5), (0, 1, 2, 3), (3, 3), 1, 0, (0, 1, 2, 3)),
        ((5, 5), "valid", (3, 3), 2, 0, (0, 0, 0, 0)),
        ((5, 5), "same", (3, 3), 1, 0, (1, 1, 1, 1)),
        ((5, 5), "same", (4, 2), 1, 0, (1, 2, 0, 1)),  # odd total: the extra row at the bottom
        # stride 2: total = 2·(H−1) + K − H; output still H×W
        ((6, 7), "same", (3, 3), 2, 0, (3, 4, 4, 4)),
        ((4, 4), "same", (2, 2), 2, 0, (2, 2, 2, 2)),
        ((5, 5), "same", (3, 3), 3, 0, (5, 5, 5, 5)),
        # numpy-ml dilation 1 = one zero between cells: extent 2·3 − 1 = 5
        ((5, 5), "same", (3, 3), 1, 1, (2, 2, 2, 2)),
        ((6, 6), "same", (2, 2), 2, 2, (4, 4, 4, 4)),
    ],
)
def test_pad2d_cases(hw, pad, kernel, stride, dilation, expected):
    x = np.random.default_rng(0).normal(size=(2, *hw, 3))
    padded, p = pad2d(x, pad, kernel, stride, dilation)
    assert p == expected
    top, bottom, left, right = expected
    assert padded.shape == (2, hw[0] + top + bottom, hw[1] + left + right, 3)
    np.testing.assert_array_equal(padded[:, top : top + hw[0], left : left + hw[1], :], x)
    assert np.abs(padded).sum() == pytest.approx(np.abs(x).sum())  # the border is zeros


@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 4, 5, 8])
@pytest.mark.parametrize("kernel, dilation", [(1, 0), (2, 0), (3, 0), (3, 1)])
def test_pad2d_same_keeps_the_output_as_large_as_the_input(stride, size, kernel, dilation):
    x = np.ones((1, size, size, 1))
    padded, p = pad2d(x, "same", (kernel, kernel), stride, dilation)
    out = conv2d_forward(
        padded.transpose(0, 3, 1, 2), np.ones((1, 1, kernel, kernel)), stride=stride, dilation=dilation + 1
    )
    assert out.shape[2:] == (size, size)
    assert p[1] - p[0] in (0, 1) and p[3] - p[2] in (0, 1)


@pytest.mark.parametrize("pad", ["full", -1, (1, 2, 3), (1.5, 1), True])
def test_pad2d_rejects_bad_pads(pad):
    with pytest.raises(ConvSpecError) as info:
        pad2d(np.ones((1, 3, 3, 1)), pad, (2, 2), 1)
    assert info.value.field == "pad"


# -- Conv2D layer (seed 001) against torch -----------------------------------------------------

LAYER_CASES = {
    # name: (X shape NHWC, n_out, kernel, stride, pad, numpy-ml dilation, activation, torch padding (t, b, l, r))
    "same stride 2": ((2, 6, 7, 3), 4, (3, 3), 2, "same", 0, "relu", (3, 4, 4, 4)),
    "valid": ((2, 6, 5, 2), 3, (3, 2), 1, "valid", 0, "relu", (0, 0, 0, 0)),
    "same stride 1 even kernel": ((1, 5, 5, 2), 2, (2, 4), 1, "same", 0, "tanh", (0, 1, 1, 2)),
    "int pad, stride (2, 1)": ((1, 5, 6, 2), 3, (3, 3), (2, 1), 1, 0, "sigmoid", (1, 1, 1, 1)),
    "4-tuple pad": ((2, 4, 5, 1), 2, (2, 2), 1, (0, 2, 1, 0), 0, "leaky_relu", (0, 2, 1, 0)),
    "same dilated": ((1, 7, 7, 2), 2, (3, 3), 1, "same", 1, "identity", (2, 2, 2, 2)),
}


def nhwc_torch_layer(X, W, b, dLdY, stride, padding4, dilation, activation):
    """``oracle.torch_layer`` of the NHWC/HWIO layer: Z, Y, dX (NHWC), dW (HWIO), db (1, F)."""
    expected = torch_layer(
        X.transpose(0, 3, 1, 2),
        W.transpose(3, 2, 0, 1),
        b.reshape(-1),
        dLdY.transpose(0, 3, 1, 2),
        stride=stride,
        padding=padding4,
        dilation=dilation,
        activation=activation,
    )
    image = (0, 2, 3, 1)
    return (
        expected.z.transpose(image),
        expected.out.transpose(image),
        expected.dx.transpose(image),
        expected.dw.transpose(2, 3, 1, 0),
        expected.db.reshape(1, -1),
    )


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(LAYER_CASES))
def test_conv2d_layer_matches_torch(name):
    x_shape, n_out, kernel, stride, pad, dilation, activation, padding4 = LAYER_CASES[name]
    rng = np.random.default_rng(len(name))
    X = rng.normal(size=x_shape)
    layer = Conv2D(n_out, kernel, stride=stride, pad=pad, activation=activation, dilation=dilation)
    W = rng.normal(size=(*kernel, x_shape[3], n_out))
    b = rng.normal(size=(1, n_out))
    layer.set_parameters(W, b)
    Y = layer.forward(X)
    dLdY = rng.normal(size=Y.shape)
    dX = layer.backward(dLdY)
    stride2 = (stride, stride) if isinstance(stride, int) else stride
    z_t, y_t, dx_t, dw_t, db_t = nhwc_torch_layer(X, W, b, dLdY, stride2, padding4, dilation + 1, activation)
    if pad == "same":
        assert Y.shape[1:3] == x_shape[1:3]
    for label, got, want in [
        ("Z", layer.cache["Z"], z_t),
        ("Y", Y, y_t),
        ("dX", dX, dx_t),
        ("dW", layer.gradients["W"], dw_t),
        ("db", layer.gradients["b"], db_t),
    ]:
        assert got.shape == want.shape, label
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=label)
    if activation == "relu":
        assert (layer.cache["Z"] < 0).any(), "the case must have dead units"


def test_relu_dead_units_stop_the_gradient():
    # Independently of torch: with every pre-activation negative, relu passes nothing back.
    layer = Conv2D(2, (2, 2), pad="valid", activation="relu")
    layer.set_parameters(np.ones((2, 2, 1, 2)), np.full((1, 2), -100.0))
    rng = np.random.default_rng(0)
    layer.forward(rng.uniform(0, 1, size=(1, 4, 4, 1)))
    dX = layer.backward(rng.normal(size=(1, 3, 3, 2)))
    assert not dX.any() and not layer.gradients["W"].any() and not layer.gradients["b"].any()


def test_conv2d_initialises_parameters_from_its_seed():
    X = np.zeros((1, 5, 5, 3))
    a, b, c = Conv2D(4, (3, 2), seed=1), Conv2D(4, (3, 2), seed=1), Conv2D(4, (3, 2), seed=2)
    for layer in (a, b, c):
        layer.forward(X)
    assert a.parameters["W"].shape == (3, 2, 3, 4) and a.parameters["b"].shape == (1, 4)
    np.testing.assert_array_equal(a.parameters["W"], b.parameters["W"])
    assert not np.array_equal(a.parameters["W"], c.parameters["W"])
    assert a.n_in == 3


def test_conv2d_errors_name_the_field():
    def field_of(call):
        with pytest.raises(ConvSpecError) as info:
            call()
        return info.value.field, str(info.value)

    assert field_of(lambda: Conv2D(0, (3, 3)))[0] == "n_out"
    assert field_of(lambda: Conv2D(2, (3, 3), pad="full"))[0] == "pad"
    assert field_of(lambda: Conv2D(2, (3, 3), activation="gelu"))[0] == "activation"
    assert field_of(lambda: Conv2D(2, (3, 3), dilation=-1))[0] == "dilation"
    layer = Conv2D(2, (3, 3))
    layer.forward(np.zeros((1, 5, 5, 3)))
    field, message = field_of(lambda: layer.forward(np.zeros((1, 5, 5, 2))))
    assert field == "X" and "2 channels" in message and "3" in message
    field, message = field_of(lambda: layer.backward(np.zeros((1, 3, 3, 3))))
    assert field == "dLdY" and "(1, 3, 3, 3)" in message and "(1, 3, 3, 2)" in message
    field, message = field_of(lambda: layer.forward(np.zeros((5, 5, 3))))
    assert field == "X" and "(N, H, W, C)" in message
    with pytest.raises(RuntimeError):
        Conv2D(2, (3, 3)).backward(np.zeros((1, 3, 3, 2)))
