"""Seed 001's NHWC convolution layer: its constructor (the passes are the other files).

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


class Conv2D:
    def __init__(self, W, b, stride=1, pad=0, activation=None):
        """W: (KH, KW, C, F), b: (F,) or None, stride: int or (sh, sw), pad: int or
        (top, bottom, left, right); activation: an object with forward(z) and
        backward(z, dout) (dout · f'(z)), None for the identity."""
        self.W, self.b = W, np.zeros(W.shape[3]) if b is None else b
        self.stride = tuple(np.broadcast_to(stride, 2))
        self.pad = tuple(np.broadcast_to(pad, 4))
        self.activation = activation
