"""Activation functions applied after the convolution: name -> forward and derivative.

The layer computes ``z = conv(x, w) + b`` (pre-activation) and ``out = f(z)``. In the
backward pass the upstream gradient ``dout`` becomes ``dz = dout · f'(z)`` (elementwise).
Derivatives follow PyTorch's autograd at the kinks: relu'(0) = 0 and
leaky_relu'(0) = 0.01 (the slope for z ≤ 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .messages import shorten
from .spec import ConvSpecError

__all__ = ["ACTIVATIONS", "Activation", "LEAKY_RELU_SLOPE", "get_activation"]

LEAKY_RELU_SLOPE = 0.01  # PyTorch's default negative_slope


@dataclass(frozen=True)
class Activation:
    """One elementwise activation: its formula, forward and derivative.

    Attributes
    ----------
    name : the config name ("relu", ...)
    formula : the forward pass in words, e.g. ``"relu(z) = max(z, 0)"``
    derivative_formula : the derivative, e.g. ``"relu'(z) = 1 if z > 0 else 0"``,
        for step text narrating ``dz = dout · f'(z)``
    title : its name for people ("ReLU"), as a page's menu shows it
    """

    name: str
    formula: str
    derivative_formula: str
    _forward: Callable[[np.ndarray], np.ndarray]
    _derivative: Callable[[np.ndarray], np.ndarray]
    title: str = ""

    def forward(self, z: np.ndarray) -> np.ndarray:
        """``f(z)``; ``z`` of any shape, result float64 of the same shape."""
        return self._forward(np.asarray(z, dtype=np.float64))

    def __call__(self, z: np.ndarray) -> np.ndarray:
        """``f(z)``, as ``forward``: layer code calls its activation either way (seed 001)."""
        return self.forward(z)

    def derivative(self, z: np.ndarray) -> np.ndarray:
        """``f'(z)`` elementwise; ``z`` of any shape, result float64 of the same shape."""
        return self._derivative(np.asarray(z, dtype=np.float64))

    def backward(self, z: np.ndarray, dout: np.ndarray) -> np.ndarray:
        """``dz = dout · f'(z)``; ``z`` and ``dout`` of the same shape (that of the output)."""
        return np.asarray(dout, dtype=np.float64) * self.derivative(z)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + e^−z) without overflow for large |z|."""
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _sigmoid_derivative(z: np.ndarray) -> np.ndarray:
    s = _sigmoid(z)
    return s * (1.0 - s)


def _identity(z: np.ndarray) -> np.ndarray:
    return z.copy()


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation(
            "identity",
            "identity(z) = z",
            "identity'(z) = 1",
            _identity,
            lambda z: np.ones_like(z),
            title="identity",
        ),
        Activation(
            "relu",
            "relu(z) = max(z, 0)",
            "relu'(z) = 1 if z > 0 else 0",
            lambda z: np.maximum(z, 0.0),
            lambda z: (z > 0).astype(np.float64),
            title="ReLU",
        ),
        Activation(
            "leaky_relu",
            f"leaky_relu(z) = z if z > 0 else {LEAKY_RELU_SLOPE}·z",
            f"leaky_relu'(z) = 1 if z > 0 else {LEAKY_RELU_SLOPE}",
            lambda z: np.where(z > 0, z, LEAKY_RELU_SLOPE * z),
            lambda z: np.where(z > 0, 1.0, LEAKY_RELU_SLOPE),
            title="leaky ReLU",
        ),
        Activation(
            "sigmoid",
            "sigmoid(z) = 1 / (1 + e^−z)",
            "sigmoid'(z) = sigmoid(z)·(1 − sigmoid(z))",
            _sigmoid,
            _sigmoid_derivative,
            title="sigmoid",
        ),
        Activation(
            "tanh",
            "tanh(z) = (e^z − e^−z) / (e^z + e^−z)",
            "tanh'(z) = 1 − tanh(z)²",
            np.tanh,
            lambda z: 1.0 - np.tanh(z) ** 2,
            title="tanh",
        ),
    )
}


def get_activation(name: object) -> Activation:
    """The activation called ``name`` (an Activation is returned as it is); raises
    ConvSpecError (field "activation") otherwise."""
    if isinstance(name, Activation):
        return name
    if isinstance(name, str) and name in ACTIVATIONS:
        return ACTIVATIONS[name]
    allowed = ", ".join(repr(n) for n in ACTIVATIONS)
    raise ConvSpecError(f"activation must be one of {allowed}; got {shorten(name)}", "activation")
