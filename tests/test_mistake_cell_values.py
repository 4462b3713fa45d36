"""A class's wrong answer named by the mistake that gives it
(``convcore.mistakes.cell_values``): the number each catalogued mistake's code leaves in
one cell, checked against what the mistake means computed here by hand (the bias left
out of out; dw written instead of accumulated) and against the catalogue's own arrays
put in the trace's layout by hand (NHWC)."""

from __future__ import annotations

import numpy as np
import pytest

from convcore.mistakes import get_mistake, mistaken_and_true
from convcore.mistakes.case import Case
from convcore.mistakes.cell_values import mistaken_cell_values
from convcore.trace import build_trace
from convcore.trace.config import resolve_config
from convscope.traces.presets import PRESETS


def _named(found: list[dict]) -> dict[str, float]:
    return {m["id"]: m["value"] for m in found}


@pytest.mark.parametrize("index", [(0, 0, 0, 0), (0, 0, 1, 1), (0, 0, 2, 1), (0, 1, 1, 1)])
def test_the_bias_left_out_leaves_out_less_its_filters_bias(index):
    config = PRESETS["cs231n"].config  # b = [1, 0]: filter 1's cells do not show it
    doc = build_trace(config)
    out = np.asarray(doc["tensors"]["out"]["data"]).reshape(doc["tensors"]["out"]["shape"])
    b = np.asarray(config["b"], dtype=float)
    found = _named(mistaken_cell_values(config, "out", index))
    if b[index[1]]:
        assert found["bias_not_added"] == pytest.approx(out[index] - b[index[1]])
    else:
        assert "bias_not_added" not in found
    # every number named differs from the true one
    assert all(v != pytest.approx(out[index]) for v in found.values())


def test_a_cell_no_mistake_changes_names_none_and_other_tensors_none():
    config = PRESETS["d2l"].config  # no bias, stride 1, no padding: no mistake shows on out
    assert mistaken_cell_values(config, "out", (0, 0, 0, 0)) == []
    assert mistaken_cell_values(PRESETS["cs231n"].config, "xp", (0, 0, 0, 0)) == []


def test_an_nhwc_setup_reads_the_cell_in_its_own_layout():
    config = PRESETS["nhwc_relu"].config
    rc = resolve_config(config)
    case = Case.with_inputs(rc.spec, rc.activation.name, rc.x, rc.w, rc.b, rc.dout)
    m = get_mistake("activation_derivative_skipped")
    both = mistaken_and_true(m, case)  # (the layer convention: NHWC, HWIO)
    mistaken_hwio = np.asarray(both["mistaken"]["dw"])
    differ = np.argwhere(~np.isclose(mistaken_hwio, np.asarray(both["true"]["dw"])))
    assert len(differ), "the lesson shows the mistake on dw"
    for at in map(tuple, differ[:4]):  # an HWIO index, as the NHWC trace names dw's cells
        found = _named(mistaken_cell_values(config, "dw", at))
        assert found[m.id] == pytest.approx(mistaken_hwio[at])
