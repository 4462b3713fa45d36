"""convcore leaves the garbage collector alone; so does the service (it encodes a document
in chunks), and paused_gc (bench/trace.py's whole-document route) restores what it paused."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from convcore.trace import build_trace, iter_trace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from gc_pause import paused_gc  # noqa: E402 (bench-only code: bench/gc_pause.py)


def test_the_engine_never_switches_the_collector(monkeypatch):
    def refuse():
        raise AssertionError("convcore switched the garbage collector")

    monkeypatch.setattr(gc, "disable", refuse)
    monkeypatch.setattr(gc, "enable", refuse)
    config = {"b": [1.0], "dout": {"fill": "randint", "low": -1, "high": 1, "seed": 0}}
    assert build_trace(config)["total_events"] == sum(1 for line in iter_trace(config) if line["type"] == "event")


def test_paused_gc_restores_the_collector_it_paused():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():  # a build that finds it paused leaves it to the one that paused it
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("a failed build")
    assert gc.isenabled()


def test_paused_gc_leaves_a_collector_that_was_off_off():
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_service_builds_a_document_without_switching_the_collector(monkeypatch):
    # the service encodes a document a chunk of events at a time (server/traces/prepare.py): no
    # whole document's objects are alive for the collector to rescan, so it is left alone
    from convscope.settings import Settings
    from convscope.traces import prepare as tracing

    def refuse():
        raise AssertionError("the service switched the garbage collector")

    monkeypatch.setattr(gc, "disable", refuse)
    monkeypatch.setattr(gc, "enable", refuse)
    prepared = tracing.prepare({"granularity": "mac", "backward": "separate"}, Settings())
    assert tracing.document_bytes(prepared).startswith(b'{"schema":"convscope.trace/3"')
