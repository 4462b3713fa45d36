"""Activations: forward and backward against torch autograd (float64), kinks included."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from oracle import TORCH_ACTIVATIONS, require_torch

from convcore.activations import ACTIVATIONS, LEAKY_RELU_SLOPE, get_activation
from convcore.spec import ConvSpecError

NAMES = ["identity", "relu", "leaky_relu", "sigmoid", "tanh"]


def sample_z(rng: np.random.Generator) -> np.ndarray:
    """(2, 3, 4, 5) values with exact zeros (the kinks) and a few large magnitudes."""
    z = rng.normal(scale=3.0, size=(2, 3, 4, 5))
    z.reshape(-1)[::7] = 0.0
    z[0, 0, 0, :3] = [-40.0, 40.0, -800.0]
    return z


def test_table_has_exactly_the_five_names():
    assert list(ACTIVATIONS) == NAMES
    for name in NAMES:
        assert get_activation(name).name == name


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_forward_and_backward_match_torch_autograd(name):
    torch = require_torch()
    rng = np.random.default_rng(NAMES.index(name))
    z = sample_z(rng)
    dout = rng.normal(size=z.shape)
    zt = torch.tensor(z, requires_grad=True)
    out_t = TORCH_ACTIVATIONS[name](torch, zt)  # the oracle's map, as torch_layer applies it
    out_t.backward(torch.tensor(dout))
    act = get_activation(name)
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # no overflow at z = −800
        out = act.forward(z)
        dz = act.backward(z, dout)
    np.testing.assert_allclose(out, out_t.detach().numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(dz, zt.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_derivatives_at_exactly_zero_follow_pytorch():
    z = np.array([-1.0, 0.0, 1.0])
    assert get_activation("relu").derivative(z).tolist() == [0.0, 0.0, 1.0]
    assert get_activation("leaky_relu").derivative(z).tolist() == [LEAKY_RELU_SLOPE, LEAKY_RELU_SLOPE, 1.0]
    assert LEAKY_RELU_SLOPE == 0.01


@pytest.mark.parametrize("name", NAMES)
def test_derivative_matches_central_differences_away_from_kinks(name):
    rng = np.random.default_rng(10 + NAMES.index(name))
    z = rng.uniform(0.1, 3.0, size=50) * rng.choice([-1.0, 1.0], size=50)
    act = get_activation(name)
    eps = 1e-6
    numerical = (act.forward(z + eps) - act.forward(z - eps)) / (2 * eps)
    np.testing.assert_allclose(act.derivative(z), numerical, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_backward_is_dout_times_derivative_with_shapes_kept(name):
    rng = np.random.default_rng(3)
    z, dout = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    act = get_activation(name)
    dz = act.backward(z, dout)
    assert dz.shape == z.shape and dz.dtype == np.float64
    np.testing.assert_array_equal(dz, dout * act.derivative(z))


@pytest.mark.parametrize("name", NAMES)
def test_formulas_name_the_activation(name):
    act = get_activation(name)
    assert act.formula.startswith(f"{name}(z) = ")
    assert act.derivative_formula.startswith(f"{name}'(z) = ")


def test_relu_formula_text():
    assert get_activation("relu").derivative_formula == "relu'(z) = 1 if z > 0 else 0"


def test_identity_forward_returns_a_copy():
    z = np.array([1.0, -2.0])
    out = get_activation("identity").forward(z)
    out[0] = 99.0
    assert z[0] == 1.0


def test_activations_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_activation("relu").name = "tanh"  # type: ignore[misc]


@pytest.mark.parametrize("bad", ["softmax", "ReLU", "", None, 3])
def test_unknown_activation_names_the_field_and_the_choices(bad):
    with pytest.raises(ConvSpecError) as info:
        get_activation(bad)
    assert info.value.field == "activation"
    message = str(info.value)
    assert repr(bad) in message
    for name in NAMES:
        assert repr(name) in message
