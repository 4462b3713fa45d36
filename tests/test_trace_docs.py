"""docs/trace-format.md: its worked example is exactly what build_trace returns, and its
ten-line replay works."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from convcore.trace import build_trace, replay

DOC = Path(__file__).resolve().parent.parent / "docs" / "trace-format.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_worked_example_is_the_engine_output():
    (block,) = _blocks("json")
    documented = json.loads(block)
    actual = build_trace({"x": [[[[0, 1, 2], [3, 4, 5], [6, 7, 8]]]], "w": [[[[0, 1], [2, 3]]]]})
    assert documented == actual
    assert documented["tensors"]["out"]["data"] == [19, 25, 37, 43]  # z is out: the identity
    assert documented["aliases"] == {"xp": "x", "dxp": "dx", "z": "out", "dz": "dout"}


def test_the_ten_line_replay_works():
    source = [b for b in _blocks("python") if "def replay" in b][0]
    assert len(source.strip().splitlines()) <= 11
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - our own documentation
    config = {
        "x": {"fill": "normal", "shape": [2, 2, 5, 4], "seed": 0},
        "w": {"fill": "normal", "shape": [4, 1, 3, 2], "seed": 1},
        "b": [1, 2, 3, 4],
        "groups": 2,
        "stride": [2, 1],
        "padding": [1, 0, 0, 1],
        "dilation": [1, 2],
        "activation": "tanh",
        "dout": {"fill": "normal", "shape": [2, 4, 2, 3], "seed": 2},
    }
    doc = build_trace(config)
    ours, theirs = replay(doc), namespace["replay"](doc)
    for name in doc["tensors"]:
        assert np.array_equal(ours[name], theirs[name]), name
