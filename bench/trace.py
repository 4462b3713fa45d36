"""Trace engine speed, size and memory, measured side by side in one run.

1. build_trace + JSON encoding of the direct view, window granularity, fused
   backward, on x (2,3,16,16), w (4,3,3,3), stride 1, pad 1, with normal (1n) and
   small-integer (1r, as the default fills) data, against the untraced naive forward
   + backward of bench/naive.py (seed 004's seven nested Python loops) on the same
   spec. Encodings: the service's route (build_trace(arrays=True): bulk rows as
   float64 arrays, which orjson writes itself; checked here to be byte for byte the
   plain trace's JSON; the service pauses the garbage collector around the build,
   bench/gc_pause.py, and so does this route here), the plain-data document with
   orjson, and with the standard json module. Beside them, the same service route of
   an earlier engine (``--against``, default 860303d, the engine before the refactor
   of issue 14), loaded from ``git archive`` of that commit under another package
   name; its events are checked to be this engine's (texts aside: today's forward texts
   show per-channel partial sums; schema 2 leaves out the phases that only copy, here the
   two activation phases of the identity: the earlier engine's are dropped from the
   comparison, not from its timing). The contenders alternate; medians
   of the repeats are compared (each repeat runs them in a new order), and the fastest
   repeats beside them. Target: ratio ≤ 0.5, and no worse than the earlier engine's.
2. Mac-granularity generation rate (iter_trace, no encoding), events per second.
   Target ≥ 300,000. Then the service route of the other views and of the
   multiply-accumulate granularity on the same spec and data (im2col and transposed
   at window granularity, direct at mac granularity), each checked against the naive
   loops' numbers and timed beside them, alternating. Target (issue 29): ≤ 0.5.
3. Bytes per event in JSON (orjson), both granularities.
4. tracemalloc peak while iterating a trace of about a million events without
   keeping them.

    .venv/bin/python bench/trace.py [--repeats 7] [--skip-memory] [--against REV | --against none]
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's packages before bench/'s modules (bench/server.py)

from gc_pause import paused_gc  # noqa: E402
from naive import naive_forward_backward  # noqa: E402

from convcore.trace import build_trace, count_events, iter_trace  # noqa: E402

SHAPE_X, SHAPE_W, STRIDE, PAD = (2, 3, 16, 16), (4, 3, 3, 3), 1, 1
NUMPY = orjson.OPT_SERIALIZE_NUMPY  # as server/http/encoding.py encodes


def bench_config(granularity: str = "window", data: str = "normal") -> tuple[dict, tuple]:
    """The benchmark spec with random data: "normal" floats, or "randint" small integers
    as ConvScope's default fills make them (x in [−2, 2], w, b, dout in [−1, 1])."""
    rng = np.random.default_rng(0)
    out_shape = (SHAPE_X[0], SHAPE_W[0], SHAPE_X[2], SHAPE_X[3])  # stride 1, pad 1, 3×3
    if data == "normal":
        x, w, b, dout = (rng.normal(size=s) for s in (SHAPE_X, SHAPE_W, SHAPE_W[0], out_shape))
    else:
        x = rng.integers(-2, 3, SHAPE_X).astype(float)
        w, b, dout = (rng.integers(-1, 2, s).astype(float) for s in (SHAPE_W, SHAPE_W[0], out_shape))
    config = {
        "x": x.tolist(),
        "w": w.tolist(),
        "b": b.tolist(),
        "dout": dout.tolist(),
        "stride": STRIDE,
        "padding": PAD,
        "granularity": granularity,
        "backward": "fused",
    }
    return config, (x, w, b, dout)


def earlier_engine(rev: str):
    """``convcore.trace`` as it was at commit ``rev``: its convcore/ extracted from
    ``git archive`` into a temporary folder as the package ``convcore_<rev>`` (convcore
    imports itself relatively only), imported beside today's."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "convcore"], check=True, capture_output=True
    ).stdout
    folder = Path(tempfile.mkdtemp(prefix="convscope-bench-"))
    name = f"convcore_{rev}"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "convcore").rename(folder / name)
    sys.path.insert(0, str(folder))
    return importlib.import_module(f"{name}.trace")


def _paused(fn, *args, **kwargs):
    with paused_gc():
        return fn(*args, **kwargs)


def service_route(build):
    """The service's document route (server/traces/prepare.py) with engine ``build``
    (build_trace): arrays=True, orjson, the collector paused while the document is
    built, encoded and freed (bench/gc_pause.py)."""

    def run(config):
        with paused_gc():
            doc = build(config, arrays=True)
            body = orjson.dumps(doc, option=NUMPY)
            del doc
        return body

    return run


def _without_texts(body: bytes, like: dict | None = None) -> dict:
    """A document's tensors and events without the events' texts (which later engines may
    word differently, e.g. the per-channel partial sums) and without the header's drawing
    facts (titles, marks: added to the header after 860303d): the numbers and boxes to
    compare. ``like`` (today's document of the same config): read an earlier engine's
    document as schema 2 reads it: without the phases that only copy (today's has none of
    them) and with the names that are another tensor (its ``aliases``) renamed."""
    doc = orjson.loads(body)
    aliases = like.get("aliases", {}) if like is not None else {}
    phases = {p["name"] for p in like["phases"]} if like is not None else None
    events = [e for e in doc["events"] if phases is None or e["phase"] in phases]
    for event in events:
        del event["text"]
        for box in event["reads"] + event["writes"]:
            box["tensor"] = aliases.get(box["tensor"], box["tensor"])
    tensors = {
        name: {"shape": t["shape"], "data": t["data"]} for name, t in doc["tensors"].items() if name not in aliases
    }
    return {"tensors": tensors, "events": events}


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench_ratio(repeats: int, data: str, earlier=None, rev: str = "") -> None:
    config, (x, w, b, dout) = bench_config("window", data)
    # the naive code agrees with the trace (a benchmark of wrong code is no benchmark)
    doc = build_trace(config)
    out, dx, dw, db = naive_forward_backward(x, w, b, dout, STRIDE, PAD)
    for name, ref in (("out", out), ("dx", dx), ("dw", dw), ("db", db)):
        t = doc["tensors"][name]
        np.testing.assert_allclose(np.reshape(t["data"], t["shape"]), ref, rtol=1e-10, atol=1e-12)
    route = service_route(build_trace)
    assert route(config) == orjson.dumps(doc)
    contenders = {
        "naive loops (untraced)": lambda: naive_forward_backward(x, w, b, dout, STRIDE, PAD),
        "build_trace": lambda: build_trace(config),
        "build_trace(arrays) + orjson": lambda: route(config),
        "build_trace + orjson": lambda: orjson.dumps(build_trace(config)),
        "build_trace + json": lambda: json.dumps(build_trace(config), ensure_ascii=False),
        "iter_trace(arrays) + lines": lambda: [
            orjson.dumps(item, option=NUMPY) for item in iter_trace(config, arrays=True)
        ],
        # the service route in its two parts (the collector paused, as there): where its time goes
        "build_trace(arrays) alone": lambda: _paused(build_trace, config, arrays=True),
        "orjson of that document alone": lambda: _paused(orjson.dumps, built, option=NUMPY),
    }
    built = build_trace(config, arrays=True)
    if earlier is not None:
        earlier_route = service_route(earlier.build_trace)
        assert _without_texts(earlier_route(config), like=doc) == _without_texts(orjson.dumps(doc)), (
            f"the engine of {rev} writes other events"
        )
        contenders[f"{rev}: build_trace(arrays) + orjson"] = lambda: earlier_route(config)
        # the route as the service ran it at that commit: the engine paused the collector
        # during the build only (then a collection ran over the whole live document)
        contenders[f"{rev}: as its service ran it"] = lambda: orjson.dumps(
            earlier.build_trace(config, arrays=True), option=NUMPY
        )
    times = {name: [] for name in contenders}
    order = list(contenders)
    shuffle = random.Random(len(data))
    for _ in range(repeats):  # a new order each repeat: a burst of load hits no contender more often
        shuffle.shuffle(order)
        for name in order:
            times[name].append(timed(contenders[name]))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    fastest = {name: min(ts) for name, ts in times.items()}
    base = med["naive loops (untraced)"]
    n = doc["total_events"]
    print(
        f"1{data[0]}. direct, window, fused; x {SHAPE_X}, w {SHAPE_W}, stride {STRIDE}, pad {PAD}, "
        f"{data} data: {n} events; median of {repeats} alternating repeats"
    )
    for name, m in med.items():
        print(f"   {name:30s} {m * 1e3:8.1f} ms   ratio to naive {m / base:5.2f}")
    print(
        f"   target: build_trace + JSON ≤ 0.5 × naive -> service route {med['build_trace(arrays) + orjson'] / base:.2f}; "
        f"plain document: orjson {med['build_trace + orjson'] / base:.2f}, json {med['build_trace + json'] / base:.2f}"
    )
    print(
        f"   the service route's parts: the build {med['build_trace(arrays) alone'] / base:.2f}, the encoding alone "
        f"{med['orjson of that document alone'] / base:.2f} of the naive loops ({len(orjson.dumps(doc)):,} bytes)"
    )
    if earlier is not None:
        then = med[f"{rev}: build_trace(arrays) + orjson"]
        before = med[f"{rev}: as its service ran it"]
        now, then_min = fastest["build_trace(arrays) + orjson"], fastest[f"{rev}: build_trace(arrays) + orjson"]
        print(
            f"   service route, this engine / the engine of {rev}, same route: {med['build_trace(arrays) + orjson'] / then:.3f} "
            f"(ratio to naive {med['build_trace(arrays) + orjson'] / base:.2f} vs {then / base:.2f}; fastest repeats "
            f"{now / then_min:.3f}); {rev}'s route as its service ran it: {before / base:.2f} of the naive loops"
        )


def bench_mac_rate(repeats: int, data: str) -> None:
    config, _ = bench_config("mac", data)
    n = count_events(config)
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        seen = sum(1 for _ in iter_trace(config))
        rates.append(seen / (time.perf_counter() - t))
    print(
        f"2{data[0]}. mac granularity, same spec, fused, {data} data: {n} events; generation (iter_trace, no encoding): "
        f"median {statistics.median(rates):,.0f} events/s (target ≥ 300,000)"
    )


OTHER_ROUTES = (("im2col", "window"), ("transposed", "window"), ("direct", "mac"))


def bench_other_routes(repeats: int, data: str, earlier=None, rev: str = "") -> None:
    """The service route of each of OTHER_ROUTES against the naive loops, in one run
    (and beside it the same route of the engine of ``rev``, whose bytes must match)."""
    _, (x, w, b, dout) = bench_config("window", data)
    reference = naive_forward_backward(x, w, b, dout, STRIDE, PAD)
    route = service_route(build_trace)
    contenders = {"naive loops (untraced)": lambda: naive_forward_backward(x, w, b, dout, STRIDE, PAD)}
    events = {}
    for view, granularity in OTHER_ROUTES:
        config, _ = bench_config(granularity, data)
        config["view"] = view
        doc = build_trace(config)
        for name, ref in zip(("out", "dx", "dw", "db"), reference, strict=True):
            t = doc["tensors"][name]
            np.testing.assert_allclose(np.reshape(t["data"], t["shape"]), ref, rtol=1e-10, atol=1e-12)
        assert route(config) == orjson.dumps(doc)
        label = f"{view}, {granularity}"
        events[label] = doc["total_events"]
        contenders[label] = lambda config=config: route(config)
        # the floor under the route: orjson writing the document's bytes, which the trace
        # contract fixes (each event's boxes, deltas, values and text), before any build
        built = build_trace(config, arrays=True)
        contenders[f"{label}: encoding alone"] = lambda built=built: _paused(orjson.dumps, built, option=NUMPY)
        if earlier is not None:
            earlier_route = service_route(earlier.build_trace)
            assert earlier_route(config) == orjson.dumps(doc), f"the engine of {rev} writes other bytes ({label})"
            contenders[f"{rev}: {label}"] = lambda config=config, run=earlier_route: run(config)
    times = {name: [] for name in contenders}
    order = list(contenders)
    shuffle = random.Random(len(data) + 1)
    for _ in range(repeats):
        shuffle.shuffle(order)
        for name in order:
            times[name].append(timed(contenders[name]))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    base = med["naive loops (untraced)"]
    print(f"2{data[0]}'. the service route of the other views, {data} data; median of {repeats} alternating repeats")
    print(f"   {'naive loops (untraced)':30s} {base * 1e3:8.1f} ms")
    for label, n in events.items():
        print(
            f"   {label:30s} {med[label] * 1e3:8.1f} ms   ratio to naive {med[label] / base:5.2f}   ({n} events; target ≤ 0.5)"
        )
        alone = med[f"{label}: encoding alone"]
        print(f"   {'  its encoding alone':30s} {alone * 1e3:8.1f} ms   ratio to naive {alone / base:5.2f}")
        if earlier is not None:
            then = med[f"{rev}: {label}"]
            print(f"   {rev + ': ' + label:30s} {then * 1e3:8.1f} ms   ratio to naive {then / base:5.2f}")


def bench_bytes() -> None:
    print("3. JSON size per event (orjson; events only, header excluded):")
    for granularity, data in (("window", "normal"), ("window", "randint"), ("mac", "normal"), ("mac", "randint")):
        config, _ = bench_config(granularity, data)
        doc = build_trace(config)
        events = doc["events"]
        size = len(orjson.dumps(events))
        header = len(orjson.dumps({k: v for k, v in doc.items() if k != "events"}))
        print(
            f"   {granularity:6s} {data:7s}: {len(events)} events, {size / len(events):6.0f} bytes/event, "
            f"header {header / 1024:.0f} KiB"
        )


def bench_memory() -> None:
    config = {
        "x": {"fill": "normal", "shape": [2, 8, 21, 21], "seed": 0},
        "w": {"fill": "normal", "shape": [8, 8, 3, 3], "seed": 1},
        "padding": 1,
        "granularity": "mac",
        "backward": "fused",
    }
    n = count_events(config)
    tracemalloc.start()
    stream = iter_trace(config)
    next(stream)
    after_header, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    marks = []
    for k, _ in enumerate(stream):
        if k % 200_000 == 0:
            marks.append(tracemalloc.get_traced_memory()[0])
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"4. memory while iterating {n:,} events (mac, fused; events not kept): "
        f"header {after_header / 1e6:.2f} MB; traced memory at events 0, 200k, 400k, …: "
        f"{', '.join(f'{m / 1e6:.2f}' for m in marks)} MB; peak {peak / 1e6:.2f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--against", default="860303d", help="an earlier commit to time beside, or 'none'")
    args = parser.parse_args()
    earlier = None if args.against == "none" else earlier_engine(args.against)
    for data in ("normal", "randint"):
        bench_ratio(args.repeats, data, earlier, args.against)
    for data in ("normal", "randint"):
        bench_mac_rate(max(3, args.repeats // 2), data)
    for data in ("normal", "randint"):
        bench_other_routes(args.repeats, data, earlier, args.against)
    bench_bytes()
    if not args.skip_memory:
        bench_memory()


if __name__ == "__main__":
    main()
