"""The page's inspector (static/js/model/cell-story.js, run in node) and the library
(convcore.trace.contributions) tell every cell's story the same way, on every lesson:
the same events, deltas and running values, and the same factors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from convcore.trace import build_trace, contributions
from convscope.traces.presets import PRESETS

STATE_JS = Path(__file__).resolve().parents[1] / "static" / "js" / "model" / "trace-model.js"
INSPECT_JS = Path(__file__).resolve().parents[1] / "static" / "js" / "model" / "cell-story.js"
NODE = shutil.which("node")
if NODE is None and os.environ.get("CI") == "true":
    raise RuntimeError("the inspector's test needs node (Debian's nodejs; make test installs it)")
pytestmark = pytest.mark.skipif(
    NODE is None, reason="node runs the page's modules (Debian's nodejs; make test installs it)"
)

SCRIPT = """
import { readFileSync } from "node:fs";
import { TraceModel } from %s;
import { cellStory } from %s;
const { doc, cells } = JSON.parse(readFileSync(process.argv[1], "utf8"));
const { events, ...header } = doc;
const model = new TraceModel(header);
model.addEvents(events);
console.log(JSON.stringify(cells.map(([name, flat]) => cellStory(model, name, flat).writes.map((w) => ({
  event: w.event, delta: w.delta, value: w.value, factors: w.factors ? w.factors.map((f) => [f.tensor, f.flat]) : null,
})))));
"""


def _page_stories(doc: dict, cells: list[tuple[str, int]], tmp_path: Path) -> list:
    data = tmp_path / "input.json"
    data.write_text(json.dumps({"doc": doc, "cells": cells}), encoding="utf-8")
    script = SCRIPT % (json.dumps(STATE_JS.as_uri()), json.dumps(INSPECT_JS.as_uri()))
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", script, str(data)], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("lesson", list(PRESETS))
def test_the_page_and_the_library_tell_each_cells_story_alike(lesson, tmp_path):
    doc = build_trace(PRESETS[lesson].config)
    rng = np.random.default_rng(len(lesson))
    cells = []
    for name, t in doc["tensors"].items():
        if t["role"] == "input":
            continue
        size = int(np.prod(t["shape"]))
        cells += [(name, int(k)) for k in sorted(set(rng.integers(0, size, min(size, 12)).tolist()))]
    page = _page_stories(doc, cells, tmp_path)
    for (name, flat), got in zip(cells, page):
        shape = doc["tensors"][name]["shape"]
        want = contributions(doc, name, np.unravel_index(flat, shape))
        assert [c["event"] for c in got] == [c["event"] for c in want], (lesson, name, flat)
        assert [c["delta"] for c in got] == [c["delta"] for c in want], (lesson, name, flat)
        assert [c["value"] for c in got] == [c["value"] for c in want], (lesson, name, flat)
        for g, w in zip(got, want):
            factors = [
                [f["tensor"], int(np.ravel_multi_index(tuple(f["index"]), doc["tensors"][f["tensor"]]["shape"]))]
                for f in w.get("factors", [])
            ]
            assert (g["factors"] or []) == factors, (lesson, name, flat, g, w.get("factors"))
        assert abs(sum(c["delta"] for c in got) - doc["tensors"][name]["data"][flat]) < 1e-9
