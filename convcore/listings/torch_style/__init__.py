"""PyTorch-style ``conv2d_forward(x, w, b, stride, padding, dilation, groups)`` and
``conv2d_backward(dout, x, w, stride, padding, dilation, groups)`` as plain loops
(``convcore.mistakes.conventions``' torch convention: NCHW, OIHW, stride and dilation
an int or a (rows, columns) pair, padding too or (top, bottom, left, right) as the
trace's config gives it, for a padding that differs between the sides of an axis, as
"same" with an even kernel does), one file per pass and trace setting of the direct
view; ``convcore.listings`` pairs them. Each file is standalone: NumPy only."""
