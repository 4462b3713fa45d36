"""CS231n's ``conv_forward_naive(x, w, b, conv_param)`` and
``conv_backward_naive(dout, cache)`` as plain loops (seed 004's conventions: NCHW, one
stride, ``pad`` zeros on every side, ``cache = (x, w, b, conv_param)``), one file per
pass and trace setting of the direct view; ``convcore.listings`` pairs them. Each file
is standalone: NumPy only."""
