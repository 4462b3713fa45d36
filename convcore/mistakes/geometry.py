"""Facts about a Case's windows that the catalogue's conditions are stated in."""

from __future__ import annotations

import numpy as np

from ..activations import get_activation
from ..functional import conv2d_forward
from .case import Case

__all__ = ["every_window_reads_x", "gradient_flows_everywhere", "windows_reading_x"]


def windows_reading_x(case: Case) -> np.ndarray:
    """(Ho, Wo) mask of the output positions whose window covers at least one cell of x
    (the others read padding alone)."""
    spec = case.spec
    one_image = (1, spec.C, spec.H, spec.W)
    counts = conv2d_forward(
        np.ones(one_image),
        np.ones(spec.w_shape),
        stride=spec.stride,
        padding=spec.padding,
        dilation=spec.dilation,
        groups=spec.groups,
    )
    return counts[0, 0] > 0


def every_window_reads_x(case: Case) -> bool:
    return bool(np.all(windows_reading_x(case)))


def gradient_flows_everywhere(case: Case) -> bool:
    """The activation's derivative at Z is nowhere 0 (relu: every Z > 0)."""
    return bool(np.all(get_activation(case.activation).derivative(case.truth.z) != 0))
