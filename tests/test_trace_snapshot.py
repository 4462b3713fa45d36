"""The trace engine's bytes hold still: every config of the snapshot (lesson presets
under every view and mode, seeded random specs, configs past the bulk thresholds)
encodes to the bytes recorded in ``tests/fixtures/trace_snapshot.txt``.

A refactor of the engine must keep this green. A deliberate change of the trace's
bytes regenerates the file (``python tests/fixtures/make_trace_snapshot.py``) in the
same commit, which says what changed and why.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

import make_trace_snapshot as snap  # noqa: E402


@pytest.mark.slow  # 70 s of make check's 6 min: make test and CI run it; run it alone after an engine change
def test_every_config_encodes_to_the_recorded_bytes():
    expected = snap.SNAPSHOT.read_text().splitlines()
    assert len(expected) > 350
    diff = snap.differences(expected, snap.snapshot())
    assert not diff, f"{len(diff)} of {len(expected)} configs changed:\n" + "\n".join(diff[:20])


def test_the_check_sees_a_changed_byte():
    name, config = next(snap.configs())
    line = snap.snapshot_line(name, config)
    changed = dict(config, activation="tanh" if config.get("activation") != "tanh" else "relu")
    assert snap.differences([line], [snap.snapshot_line(name, changed)])
    assert not snap.differences([line], [line])
    # a config with a line per BLAS kernel holds on either, and on nothing else
    other = line.rsplit(" ", 1)[0] + " 0123456789abcdef"
    assert not snap.differences([line, other], [other])
    assert snap.differences([line, other], [snap.snapshot_line(name, changed)])
