"""CS231n's conv layer API (seed 004), computed by the vectorised core, not by loops.

``conv_param = {'stride': s, 'pad': p}``: one stride for both axes and ``p`` zero
pixels on every side. ``cache = (x, w, b, conv_param)`` exactly as the assignment has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..functional import conv2d_backward, conv2d_forward
from ..spec import ConvSpecError

__all__ = ["conv_backward_naive", "conv_forward_naive"]

Cache = tuple[np.ndarray, np.ndarray, np.ndarray, Mapping[str, Any]]


def _stride_and_pad(conv_param: Any) -> tuple[int, int]:
    if not isinstance(conv_param, Mapping):
        raise ConvSpecError(
            f"conv_param must be a dict like {{'stride': 1, 'pad': 0}}, got {conv_param!r}",
            "conv_param",
        )
    for key in ("stride", "pad"):
        if key not in conv_param:
            raise ConvSpecError(f"conv_param['{key}'] is missing (conv_param = {dict(conv_param)!r})", "conv_param")
    return conv_param["stride"], conv_param["pad"]


def conv_forward_naive(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, conv_param: Mapping[str, Any]
) -> tuple[np.ndarray, Cache]:
    """Forward pass of a conv layer in CS231n's conventions.

    Parameters
    ----------
    x : (N, C, H, W)
    w : (F, C, HH, WW)
    b : (F,)
    conv_param : {'stride': s, 'pad': p}

    Returns
    -------
    out : (N, F, H', W') with H' = 1 + (H + 2p − HH) // s, W' = 1 + (W + 2p − WW) // s
    cache : (x, w, b, conv_param)
    """
    stride, pad = _stride_and_pad(conv_param)
    out = conv2d_forward(x, w, b, stride=stride, padding=pad)
    return out, (x, w, b, conv_param)


def conv_backward_naive(dout: np.ndarray, cache: Cache) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backward pass of a conv layer in CS231n's conventions.

    Parameters
    ----------
    dout : (N, F, H', W'), upstream derivatives
    cache : (x, w, b, conv_param) as returned by ``conv_forward_naive``

    Returns
    -------
    dx : (N, C, H, W)
    dw : (F, C, HH, WW)
    db : (F,)
    """
    x, w, _b, conv_param = cache
    stride, pad = _stride_and_pad(conv_param)
    return conv2d_backward(dout, x, w, stride=stride, padding=pad)
