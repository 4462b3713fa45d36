"""PyTorch-style ``conv2d_forward(x, w, b, stride, padding, dilation, groups)`` and
``conv2d_backward(dout, x, w, stride, padding, dilation, groups)`` as plain loops
(``convcore.mistakes.conventions``' torch convention: NCHW, OIHW, stride, padding and
dilation an int or a (rows, columns) pair, padding the same on both sides of an axis),
one file per pass and trace setting of the direct view; ``convcore.listings`` pairs
them. Each file is standalone: NumPy only."""
