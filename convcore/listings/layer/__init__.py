"""Seed 001's NHWC layer class as plain loops: ``Conv2D(W, b, stride, pad,
activation)`` with ``forward(X) -> out`` and ``backward(dLdY) -> dX`` (the gradients
of W and b kept as ``self.dW``, ``self.db``), X: (N, H, W, C), W: (KH, KW, C, F). The
class and its constructor are ``conv2d.py``; each other file is the class with the one
method of a pass and trace setting (``convcore.listings`` assembles the class of a
setting from them). Each file is standalone: NumPy only."""
