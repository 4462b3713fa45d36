"""The header's closed forms and PyTorch expressions (convcore/trace/formulas.py): every
tensor's `torch` expression, run with PyTorch after the header's `torch_setup` on the
request's own x, w, b and dout, gives the header's number at every cell tried, for
every lesson and for setups with NHWC, groups, dilation, asymmetric padding and each
activation; the closed forms name the spec's numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # the oracle (installed by .ci/run: never skipped)
import torch.nn.functional as F

from convcore.trace import build_trace
from convscope.traces.presets import PRESETS


def _randint(shape, seed):
    return {"fill": "randint", "low": -3, "high": 3, "shape": shape, "seed": seed}


SETUPS = {
    "nchw-stride2-relu-bias": {
        "x": _randint([2, 2, 5, 5], 1),
        "w": _randint([3, 2, 3, 3], 2),
        "b": [1, -1, 2],
        "stride": 2,
        "padding": 1,
        "activation": "relu",
        "dout": _randint([2, 3, 3, 3], 3),
    },
    "nhwc-groups-dilation-asym": {
        "layout": "NHWC",
        "x": _randint([1, 5, 6, 4], 4),
        "w": _randint([2, 2, 2, 4], 5),
        "groups": 2,
        "dilation": 2,
        "padding": [1, 0, 2, 1],
        "activation": "leaky_relu",
        "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 6},
    },
    "sigmoid-rect-stride": {
        "x": _randint([1, 1, 4, 6], 7),
        "w": _randint([2, 1, 2, 3], 8),
        "b": [0.5, -0.5],
        "stride": [1, 2],
        "activation": "sigmoid",
    },
    "tanh-same": {
        "x": _randint([1, 2, 4, 4], 9),
        "w": _randint([2, 2, 3, 3], 10),
        "padding": "same",
        "activation": "tanh",
    },
    "im2col": {
        "view": "im2col",
        "x": _randint([1, 2, 4, 4], 11),
        "w": _randint([2, 2, 2, 2], 12),
        "b": [1, 0],
        "stride": 2,
        "padding": 1,
    },
    "transposed": {
        "view": "transposed",
        "x": _randint([1, 1, 5, 5], 13),
        "w": _randint([1, 1, 3, 3], 14),
        "stride": 2,
        "padding": 1,
    },
    "reflect-flip-bias": {
        "x": _randint([1, 2, 4, 5], 15),
        "w": _randint([2, 2, 3, 2], 16),
        "b": [1, -1],
        "padding": [2, 1],
        "padding_mode": "reflect",
        "flip": True,
        "activation": "relu",
        "dout": _randint([1, 2, 6, 6], 17),
    },
    "nhwc-replicate-stride": {
        "layout": "NHWC",
        "x": _randint([1, 4, 5, 2], 18),
        "w": _randint([2, 2, 2, 3], 19),
        "stride": 2,
        "padding": [1, 2, 0, 1],
        "padding_mode": "replicate",
        "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 20},
    },
    "nhwc-circular-flip-groups": {
        "layout": "NHWC",
        "x": _randint([1, 4, 4, 2], 21),
        "w": _randint([3, 2, 1, 2], 22),
        "groups": 2,
        "padding": 2,
        "padding_mode": "circular",
        "flip": True,
        "activation": "tanh",
        "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 23},
    },
    "conv1d-ncl-causal-dilated-relu": {
        "layer": "conv1d",
        "x": _randint([2, 2, 9], 24),
        "w": _randint([3, 2, 3], 25),
        "b": [1, 0, -1],
        "padding": "causal",
        "dilation": 2,
        "activation": "relu",
        "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 26},
    },
    "conv1d-nlc-reflect-flip-groups-stride": {
        "layer": "conv1d",
        "layout": "NLC",
        "x": _randint([1, 8, 4], 27),
        "w": _randint([3, 2, 2], 28),
        "groups": 2,
        "stride": 2,
        "padding": [2, 1],
        "padding_mode": "reflect",
        "flip": True,
        "activation": "tanh",
        "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 29},
    },
    "conv1d-im2col-same": {
        "layer": "conv1d",
        "view": "im2col",
        "x": _randint([1, 1, 6], 30),
        "w": _randint([2, 1, 4], 31),
        "padding": "same",
        "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 32},
    },
}
CASES = {**{f"lesson-{name}": p.config for name, p in PRESETS.items()}, **SETUPS}


def _torch_inputs(doc):
    t = doc["tensors"]
    env = {"torch": torch, "F": F}
    for name in ("x", "w", "b", "dout", "dy"):  # (dy: a transposed layer's upstream gradient)
        if name in t:
            env[name] = torch.tensor(
                np.asarray(t[name]["data"], dtype=np.float64).reshape(t[name]["shape"]),
                requires_grad=name not in ("dout", "dy"),
            )
        else:
            env[name] = None
    assert env["dout"] is not None or env["dy"] is not None, "the header has no upstream gradient"
    return env


@pytest.mark.parametrize("case", list(CASES))
def test_each_tensors_torch_expression_gives_the_headers_numbers(case):
    doc = build_trace(CASES[case])
    env = _torch_inputs(doc)
    for line in doc["torch_setup"]:
        exec(line, env)  # noqa: S102 (the header's own lines, on the test's tensors)
    rng = np.random.default_rng(0)
    checked = 0
    for name, t in doc["tensors"].items():
        if "torch" not in t:
            assert t["role"] == "input" or name in ("cols", "dcols", "dz_dilated", "x_dilated", "w_rot"), (
                f"{name} has no torch expression"
            )
            continue
        data = np.asarray(t["data"], dtype=np.float64).reshape(t["shape"])
        for flat in {0, data.size - 1, *rng.integers(0, data.size, 4).tolist()}:
            index = np.unravel_index(flat, data.shape)
            expr = t["torch"].format(**dict(zip(t["axes"], (int(i) for i in index))))
            got = eval(expr, env).detach().item()  # noqa: S307
            assert got == pytest.approx(float(data[index]), rel=1e-9, abs=1e-9), f"{case}: {name}{list(index)}: {expr}"
            checked += 1
    assert checked >= 4


def test_the_closed_forms_put_in_the_specs_numbers():
    t = build_trace(SETUPS["nchw-stride2-relu-bias"])["tensors"]
    assert t["z"]["formula"] == "z[n,f,h,w] = Σ_{c,kh,kw} xp[n,c,2h+kh,2w+kw] · w[f,c,kh,kw] + b[f]"
    assert t["dw"]["formula"] == "dw[f,c,kh,kw] = Σ_{n,h,w} dz[n,f,h,w] · xp[n,c,2h+kh,2w+kw]"
    assert t["dx"]["formula"] == "dx[n,c,h,w] = dxp[n,c,h+1,w+1]"
    assert t["xp"]["formula"].startswith("xp[n,c,h,w] = x[n,c,h−1,w−1]")
    g = build_trace(SETUPS["nhwc-groups-dilation-asym"])["tensors"]
    # NHWC order, dilation 2, filter f of group f//2 (2 channels each), the padding's top 1 and left 2
    assert g["dw"]["formula"] == "dw[kh,kw,c,f] = Σ_{n,h,w} dz[n,h,w,f] · xp[n,h+2kh,w+2kw,2·(f//2)+c]"
    assert g["dx"]["formula"] == "dx[n,h,w,c] = dxp[n,h+1,w+2,c]"
    assert "c mod 2" in g["dxp"]["formula"] and "in the group of c" in g["dxp"]["formula"]
