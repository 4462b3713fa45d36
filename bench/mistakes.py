"""Mistake traces beside the traces they replace, measured side by side in one run.

For a few layers (each within the service's tensor limit), the time of
``convcore.mistakes.lab.build_mistake_trace`` (the mistaken loops, the correct loops,
the header with the truth and the differences) plus its JSON encoding, against
``build_trace`` plus encoding of the same config (the direct window trace it
replaces), and the ratio of their predicted work (``mistake_cost`` against
``trace_cost``). The work ratio should be at least the time ratio: the cost model
must not let a mistake trace cost more CPU than its work says.

    .venv/bin/python bench/mistakes.py [--repeats 5] [--mistake ID ...]
"""

from __future__ import annotations

import argparse
import statistics
import time

import orjson

from convcore.mistakes import get_mistake
from convcore.mistakes.lab import build_mistake_trace
from convcore.mistakes.lab_config import mistake_cost
from convcore.trace import build_trace, resolve_config
from convcore.trace.cost import trace_cost

LAYERS = {
    "x (1,1,60,60), w (1,1,1,1)": ((1, 1, 60, 60), (1, 1, 1, 1), 0),
    "x (1,4,32,32), w (4,4,3,3), pad 1": ((1, 4, 32, 32), (4, 4, 3, 3), 1),
    "x (2,3,8,8), w (4,3,3,3), pad 1": ((2, 3, 8, 8), (4, 3, 3, 3), 1),
}


def _config(x_shape, w_shape, pad):
    return {
        "x": {"fill": "randint", "shape": list(x_shape), "seed": 0},
        "w": {"fill": "randint", "shape": list(w_shape), "seed": 1},
        "b": {"fill": "randint", "shape": [w_shape[0]], "seed": 2},
        "dout": {"fill": "randint", "seed": 3},
        "padding": pad,
    }


def _seconds(make, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        orjson.dumps(make())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--mistake",
        action="append",
        help="a mistake id (repeatable); default: db_averaged, which diverges at db, and "
        "groups_ignored, which these layers (one group) hide: the correct loops run to the end",
    )
    args = parser.parse_args()
    print(f"medians of {args.repeats} repeats")
    print(f"{'mistake':24} {'layer':38} {'plain s':>8} {'mistake s':>10} {'time ratio':>11} {'work ratio':>11}")
    for mistake_id in args.mistake or ["db_averaged", "groups_ignored"]:
        _compare(get_mistake(mistake_id), args.repeats)


def _compare(mistake, repeats: int) -> None:
    for name, layer in LAYERS.items():
        config = _config(*layer)
        rc = resolve_config(config)
        plain = _seconds(lambda config=config: build_trace(config), repeats)
        lab = _seconds(lambda config=config: build_mistake_trace(config, mistake.id), repeats)
        work = mistake_cost(rc, mistake).work / trace_cost(rc).work
        print(f"{mistake.id:24} {name:38} {plain:8.3f} {lab:10.3f} {lab / plain:11.1f} {work:11.1f}")


if __name__ == "__main__":
    main()
