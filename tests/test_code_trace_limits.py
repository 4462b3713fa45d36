"""Trace your own code under the grader's limits (issue 23): code that loops forever or
allocates without bound is stopped with a clear message, and code that writes more than
the recording keeps is traced up to its cap, the trace saying so, its first wrong write
kept when it lies before the cap."""

from __future__ import annotations

import textwrap

import numpy as np

from convcore.grader.code_trace import trace_code
from convcore.grader.sandbox import record_file
from convcore.mistakes import Case

CASE = Case(n=1, cg=1, fg=1, h=3, w=3, kh=2, kw=2)

FORWARD = """
import numpy as np


def conv_forward_naive(x, w, b, conv_param):
    {body}
"""


def _file(tmp_path, body: str):
    path = tmp_path / "mine.py"
    path.write_text(FORWARD.format(body=textwrap.indent(textwrap.dedent(body), "    ").strip()), encoding="utf-8")
    return str(path)


def test_code_that_loops_forever_is_stopped_with_a_message(tmp_path):
    path = _file(tmp_path, "while True:\n    pass")
    document, why = record_file(path, None, "cs231n", CASE, time_limit=3)
    assert document is None
    assert "did not finish within the time limit of 3 s" in why or "more CPU time than the limit" in why, why


def test_code_that_allocates_without_bound_is_stopped_with_a_message(tmp_path):
    path = _file(tmp_path, "hoard = []\nwhile True:\n    hoard.append(np.ones(10**7))")
    document, why = record_file(path, None, "cs231n", CASE, time_limit=30, memory_mb=400)
    assert document is None
    assert "memory" in why, why


def _writes_many(x, w, b, conv_param):
    out = np.zeros((1, 1, 2, 2))
    out[0, 0, 0, 0] = 5.0  # a wrong write, first
    scratch = np.zeros(4)
    for k in range(60_000):  # then more writes than the recording keeps
        scratch[k % 4] = k
    for i in range(2):
        for j in range(2):
            out[0, 0, i, j] = np.sum(x[0, 0, i : i + 2, j : j + 2] * w[0, 0]) + b[0]
    return out, (x, w, b, conv_param)


def test_the_recording_caps_its_writes_and_keeps_the_first_wrong_one():
    doc = trace_code(_writes_many, None, case=CASE)
    assert doc["recording"]["capped"] > 0 and doc["recording"]["writes"] == 50_000
    assert "the recording kept its first 50000 writes" in doc["mistake"]["wrong"].lower()
    d = doc["divergence"]
    assert d is not None and d["event"] == 0 and "out[0,0,0,0]" in d["did"]
    # the outputs are compared as returned, not as the writes kept rebuild them
    assert doc["differences"]["out"]["match"]
