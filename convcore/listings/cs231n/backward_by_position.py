"""CS231n's naive backward pass as the mistakes lab runs it (convcore.mistakes): db in
one sum, then one output position (n, i, j) at a time, every filter at once: the window
of dxp gains Σ_f dout·w[f], and each dw[f] the window times its dout cell. The mistakes
are this code with a line changed (each mistake's ``listing_change``).

A line ending in "# step: <phase>" is the line a ConvScope trace step of that phase runs.
"""

import numpy as np


def conv_backward_naive(dout, cache):
    """dout: (N, F, H_out, W_out), cache (x, w, b, conv_param) ->
    dx: (N, C, H, W), dw: (F, C, HH, WW), db: (F,).

    np.tensordot(dout[n, :, i, j], w, axes=1) is Σ_f dout[n, f, i, j] * w[f]: what the
    window of position (i, j) sends back to the input, all filters together. The
    gradient landing on the padding is cropped away at the end."""
    x, w, b, conv_param = cache
    s, pad = conv_param["stride"], conv_param["pad"]
    F, _, HH, WW = w.shape
    db = np.sum(dout, axis=(0, 2, 3))  # step: db
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw = np.zeros(xp.shape), np.zeros(w.shape)
    for n, i, j in np.ndindex(dout.shape[0], dout.shape[2], dout.shape[3]):
        dxp[n, :, i * s : i * s + HH, j * s : j * s + WW] += np.tensordot(dout[n, :, i, j], w, axes=1)  # step: backward
        for f in range(F):
            dw[f] += xp[n, :, i * s : i * s + HH, j * s : j * s + WW] * dout[n, f, i, j]  # step: backward
    dx = dxp[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]  # step: crop
    return dx, dw, db
