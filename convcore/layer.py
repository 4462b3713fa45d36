"""A conv layer with its activation, forward and backward, in one place.

``layer_results`` is the one sequence pad → conv → activation → activation gradient →
conv backward → crop (or fold, for a padding mode that copies cells) that the trace
engine, the service's ``/api/conv`` and its gradient check all read their numbers from.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .activations import Activation
from .functional import backward_padded, crop_padding, forward_padded, pad_input, rotate_kernel
from .padding_modes import fold_padding, pad_with_mode
from .spec import ConvSpec

__all__ = ["LayerResults", "layer_results"]


class LayerResults(NamedTuple):
    """Every tensor of one forward and backward pass, NCHW / OIHW."""

    xp: np.ndarray  # (N, C, Hp, Wp), the padded input
    z: np.ndarray  # (N, F, Ho, Wo), before the activation
    out: np.ndarray  # (N, F, Ho, Wo), after it
    dz: np.ndarray | None  # (N, F, Ho, Wo), the gradient at z
    dxp: np.ndarray | None  # (N, C, Hp, Wp), the padded input's gradient
    dx: np.ndarray | None  # (N, C, H, W)
    dw: np.ndarray | None  # (F, C/groups, KH, KW)
    db: np.ndarray | None  # (F,), the bias gradient (computed with or without a bias)


def layer_results(
    spec: ConvSpec,
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    activation: Activation,
    dout: np.ndarray | None,
    padding_mode: str = "zeros",
    flip: bool = False,
) -> LayerResults:
    """Forward, and backward when ``dout`` is given.

    Parameters
    ----------
    spec : the resolved geometry
    x : (N, C, H, W); w : (F, C/groups, KH, KW); b : (F,) or None
    activation : applied after the convolution
    dout : (N, F, Ho, Wo), the gradient of the loss at the activation's output, or
        None for the forward pass only (the gradient fields are then None)
    padding_mode : "zeros", "reflect", "replicate" or "circular" (checked already): how
        xp's padding is filled, and so whether its gradient folds back onto x
    flip : True for a true convolution: the kernel rotated 180° (``dw`` is still the
        gradient of ``w`` as given)
    """
    zeros = padding_mode == "zeros"
    xp = pad_input(spec, x) if zeros else pad_with_mode(x, spec.padding, padding_mode)
    kernel = np.ascontiguousarray(rotate_kernel(w)) if flip else w
    z = forward_padded(spec, xp, kernel, b)
    out = activation.forward(z)
    if dout is None:
        return LayerResults(xp, z, out, None, None, None, None, None)
    dz = activation.backward(z, dout)
    dxp, dw, db = backward_padded(spec, dz, xp, kernel)
    dx = crop_padding(spec, dxp) if zeros else fold_padding(dxp, spec.padding, padding_mode)
    if flip:
        dw = np.ascontiguousarray(rotate_kernel(dw))
    return LayerResults(xp, z, out, dz, dxp, dx, dw, db)
