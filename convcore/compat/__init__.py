"""The seeds' conventions, computed by the vectorised core.

- ``cs231n``: ``conv_forward_naive(x, w, b, conv_param)`` / ``conv_backward_naive(dout, cache)``
  (NCHW, ``conv_param = {'stride': s, 'pad': p}``, symmetric padding; seed 004).
- ``layer``: an NHWC ``Conv2D`` layer with HWIO weights, ``pad`` as int, tuple, "same"
  or "valid" and numpy-ml's ``dilation=0`` meaning none, plus ``pad2d`` (seed 001).
"""

from .cs231n import conv_backward_naive, conv_forward_naive
from .layer import Conv2D, pad2d, resolve_pad

__all__ = ["Conv2D", "conv_backward_naive", "conv_forward_naive", "pad2d", "resolve_pad"]
