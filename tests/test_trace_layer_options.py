"""The padding modes and the flip in a trace, as a reader of one meets them: where each
padded value comes from, the padding's gradient folding back, the turned kernel, the
header's facts, the service's answers. (Every rule of the trace contract is checked for
them in test_trace_rules.py, PyTorch in test_trace_layer_options_oracle.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import require_torch

from convcore.mistakes import MISTAKES
from convcore.mistakes.lab_config import check_lab_config
from convcore.trace import build_trace, resolve_config
from convcore.trace.config import TraceConfigError

ROW = {"x": [[[[1, 2, 3, 4]]]], "w": [[[[1]]]], "padding": [0, 0, 1, 1]}


def _phase(doc: dict, name: str) -> list[dict]:
    return [ev for ev in doc["events"] if ev["phase"] == name]


def test_reflect_padding_copies_the_mirrored_cells_and_folds_their_gradient_back():
    """[2 | 1 2 3 4 | 3]: the left padding copies column 1, the right one column 2, and
    with dout = ones their gradients land on those columns: dx = [1, 2, 2, 1]."""
    doc = build_trace({**ROW, "padding_mode": "reflect"})
    assert [p["name"] for p in doc["phases"]] == ["pad", "forward", "backward", "fold"]
    (pad,) = _phase(doc, "pad")
    assert pad["writes"][0]["tensor"] == "xp" and pad["writes"][0]["delta"] == [2, 1, 2, 3, 4, 3]
    assert "columns [1, 0, 1, 2, 3, 2]" in pad["text"] and "mirrored about the edge" in pad["text"]
    (fold,) = _phase(doc, "fold")
    assert fold["reads"][0]["tensor"] == "dxp" and fold["writes"][0]["tensor"] == "dx"
    assert fold["writes"][0]["delta"] == [1, 2, 2, 1]
    assert doc["tensors"]["dx"]["data"] == [1, 2, 2, 1]
    assert doc["tensors"]["xp"]["marks"] == ["c....c"] and doc["tensors"]["dxp"]["marks"] == ["f....f"]


@pytest.mark.parametrize(
    "mode, xp_row, dx_row",
    [("replicate", [1, 1, 2, 3, 4, 4], [2, 1, 1, 2]), ("circular", [4, 1, 2, 3, 4, 1], [2, 1, 1, 2])],
)
def test_each_mode_copies_its_cells_row_by_row(mode, xp_row, dx_row):
    doc = build_trace({**ROW, "padding_mode": mode, "copies": "each"})
    (pad,) = _phase(doc, "pad")
    assert pad["loop"] == {"n": 0, "c": 0, "y": 0} and pad["writes"][0]["delta"] == xp_row
    (fold,) = _phase(doc, "fold")
    assert fold["loop"] == {"n": 0, "c": 0, "h": 0} and fold["writes"][0]["delta"] == dx_row


def test_a_padding_row_says_which_row_of_x_it_copies_and_the_fold_reads_every_copy():
    """Reflect padding of 1 on top and bottom of a 3-row x: xp's row 0 copies x's row 1,
    row 4 copies row 1 too, so dx's row 1 gathers three rows of dxp."""
    doc = build_trace(
        {"x": {"fill": "arange", "shape": [1, 1, 3, 2]}, "w": [[[[1]]]], "padding": [1, 0], "padding_mode": "reflect"}
        | {"copies": "each"}
    )
    pads = _phase(doc, "pad")
    assert [ev["reads"][0]["start"][2] for ev in pads] == [1, 0, 1, 2, 1]
    assert "a padding row: reflect copies x's row 1" in pads[0]["text"]
    assert "padding row" not in pads[1]["text"]
    folds = _phase(doc, "fold")
    assert [[r["start"][2] for r in ev["reads"]] for ev in folds] == [[1], [0, 2, 4], [3]]
    assert folds[1]["writes"][0]["delta"] == [3, 3]


def test_flip_turns_the_kernel_first_and_its_gradient_back_last():
    w = [[[[1, 2], [3, 4]]]]
    doc = build_trace({"x": {"fill": "arange", "shape": [1, 1, 3, 3]}, "w": w, "flip": True})
    names = [p["name"] for p in doc["phases"]]
    assert names[0] == "flip" and names[-1] == "flip back"
    (turn,) = _phase(doc, "flip")
    assert turn["reads"][0]["tensor"] == "w" and turn["writes"][0]["tensor"] == "wf"
    assert turn["writes"][0]["delta"] == [4, 3, 2, 1]
    assert turn["text"].startswith("wf[f,c,k,l] = w[f,c,1−k,1−l]")
    forward = _phase(doc, "forward")
    assert all(r["tensor"] != "w" for ev in forward for r in ev["reads"])  # the steps slide wf
    (back,) = _phase(doc, "flip back")
    assert back["reads"][0]["tensor"] == "dwf" and back["writes"][0]["tensor"] == "dw"
    t = doc["tensors"]
    assert (t["w"]["role"], t["wf"]["role"], t["dwf"]["role"], t["dw"]["role"]) == (
        "input",
        "intermediate",
        "intermediate",
        "result",
    )
    assert t["w"]["order"] < t["wf"]["order"] < t["out"]["order"] < t["dwf"]["order"] < t["dw"]["order"]
    assert t["wf"]["title"] == "filters turned 180°" and t["dwf"]["gradient_of"] == "wf"
    np.testing.assert_array_equal(
        np.reshape(t["dw"]["data"], (2, 2)), np.rot90(np.reshape(t["dwf"]["data"], (2, 2)), 2)
    )


def test_the_header_names_the_mode_and_the_flip_only_when_the_layer_uses_them():
    plain = build_trace({"padding": 1})["spec"]
    assert "padding_mode" not in plain and "flip" not in plain  # every Conv2d trace as it was
    spec = build_trace({"padding": 1, "padding_mode": "circular", "flip": True})["spec"]
    assert spec["padding_mode"] == "circular" and spec["flip"] is True
    # a zero padding copies nothing: the mode changes no step
    assert [p["name"] for p in build_trace({"padding_mode": "reflect"})["phases"]] == ["forward", "backward"]


def test_the_listing_and_the_lab_refuse_what_their_code_cannot_do():
    assert resolve_config({"padding": 1, "padding_mode": "reflect"}).code is None
    assert resolve_config({"flip": True}).code is None
    with pytest.raises(TraceConfigError) as exc:
        resolve_config({"flip": True, "code": "torch"})
    assert exc.value.field == "code" and "flip" in str(exc.value)
    mistake = next(iter(MISTAKES.values()))
    for setting, field in (({"padding_mode": "replicate", "padding": 1}, "padding_mode"), ({"flip": True}, "flip")):
        rc = resolve_config({"b": [0], **setting})
        with pytest.raises(TraceConfigError) as exc:
            check_lab_config(rc, mistake)
        assert exc.value.field == field


def test_the_service_traces_and_computes_the_layer_with_a_mode_and_a_flip(api_client):
    """POST /api/trace streams the fold and flip phases; POST /api/conv gives PyTorch's
    numbers for the same layer."""
    torch = require_torch()
    rng = np.random.default_rng(3)
    x, w, dout = rng.normal(size=(1, 2, 4, 5)), rng.normal(size=(3, 2, 3, 2)), rng.normal(size=(1, 3, 4, 7))
    body = {"x": x.tolist(), "w": w.tolist(), "dout": dout.tolist(), "padding": [1, 1, 1, 2]}
    body |= {"padding_mode": "replicate", "flip": True}
    trace = api_client.post("/api/trace", json=body)
    assert trace.status_code == 200, trace.text[:300]
    assert [p["name"] for p in trace.json()["phases"]] == ["flip", "pad", "forward", "backward", "fold", "flip back"]
    conv = api_client.post("/api/conv", json=body)
    assert conv.status_code == 200, conv.text[:300]
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    padded = torch.nn.functional.pad(xt, (1, 2, 1, 1), mode="replicate")
    out = torch.nn.functional.conv2d(padded, torch.flip(wt, (2, 3)))
    out.backward(torch.tensor(dout))
    got = conv.json()
    np.testing.assert_allclose(got["out"], out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(got["dx"], xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got["dw"], wt.grad.numpy(), rtol=1e-12)
