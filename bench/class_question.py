"""A class question under load: ``--students`` pages answer within one second.

The teacher's page asks a question of CS231n's forward (POST .../questions); each
student sends one answer (POST .../answers) at a moment drawn uniformly in one second,
from one asyncio process; the teacher's page asks the count every ``--poll`` s (the
page's own pace is TALLY_MS in static/js/app/class-question.js: 0.8 s) until every
answer is counted, then closes the question. Figures:

- an answer's round trip (sent to 201), p50 / p99;
- the teacher's view: for each answer, the time from its 201 to the first count that
  includes it (a count is the number answered: the k-th answer is in the first count
  >= k), p50 / p99: at most one poll interval plus a round trip;
- the server's CPU time (its processes' user + system, /proc) from the ask to the close;
- the tally's distribution equals what was sent.

Once on ``convscope serve`` with one worker and the in-process broker, once with two
workers sharing a throwaway redis-server; the ratios of the two are printed side by side.

Run: .venv/bin/python bench/class_question.py [--students 300] [--poll 0.8] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import httpx  # noqa: E402
from follow_helpers import (  # noqa: E402
    TEACHER_TOKEN,
    convscope_serve,
    redis_missing_reason,
    redis_server,
    server_cpu_seconds,
)
from live_server import ONE_ADDRESS_CROWD  # noqa: E402

from convscope.traces.presets import PRESETS  # noqa: E402

CONFIG = PRESETS["cs231n"].config


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def one_run(base: str, students: int, poll: float, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    limits = httpx.Limits(max_connections=students + 8, max_keepalive_connections=students + 8)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        opened = await client.post(
            "/api/follow/sessions",
            json={"state": {"lesson": "cs231n", "step": 0}},
            headers={"Authorization": f"Bearer {TEACHER_TOKEN}"},
        )
        opened.raise_for_status()
        session, secret = opened.json()["session"], opened.json()["secret"]
        cpu0 = server_cpu_seconds(base)
        asked = await client.post(
            f"/api/follow/sessions/{session}/questions",
            json={"secret": secret, "driver": 1, "config": CONFIG, "step": 5, "index": 0},
        )
        asked.raise_for_status()
        number, answer = asked.json()["question"], asked.json()["asked"]["answer"]
        path = f"/api/follow/sessions/{session}/questions/{number}"
        sent: dict[str, float] = {}
        done: list[float] = []  # when each 201 came, in order of arrival
        trips: list[float] = []
        start = time.perf_counter()

        async def student(i: int) -> None:
            await asyncio.sleep(rng.random())
            given = rng.choice([answer, answer, answer + 1, answer - 2])
            voter = f"bench-page-{i:06d}-{seed:04d}"
            sent[voter] = given
            t0 = time.perf_counter()
            r = await client.post(path + "/answers", json={"voter": voter, "given": given})
            t1 = time.perf_counter()
            r.raise_for_status()
            trips.append(t1 - t0)
            done.append(t1)

        counts: list[tuple[float, int]] = []  # (when the count arrived, the count)

        async def teacher() -> None:
            while True:
                r = await client.post(path + "/tally", json={"secret": secret})
                counts.append((time.perf_counter(), r.json()["answered"]))
                if counts[-1][1] >= students:
                    return
                await asyncio.sleep(poll)

        await asyncio.gather(teacher(), *(student(i) for i in range(students)))
        closed = (await client.post(path + "/close", json={"secret": secret, "driver": 1})).json()
        cpu = server_cpu_seconds(base) - cpu0
        wall = time.perf_counter() - start
        seen = []
        for k, t in enumerate(sorted(done), start=1):
            first = next(when for when, n in counts if n >= k and when >= t)
            seen.append(first - t)
        shown = {d["given"]: d["count"] for d in closed["distribution"]}
        assert shown == Counter(float(v) for v in sent.values()), (shown, Counter(sent.values()))
        return {
            "trip50": _pct(trips, 0.5),
            "trip99": _pct(trips, 0.99),
            "seen50": _pct(seen, 0.5),
            "seen99": _pct(seen, 0.99),
            "cpu": cpu,
            "wall": wall,
        }


def rows(base: str, label: str, students: int, poll: float, runs: int) -> dict[str, float]:
    results = [asyncio.run(one_run(base, students, poll, seed)) for seed in range(runs)]
    med = {k: statistics.median(r[k] for r in results) for k in results[0]}
    print(
        f"  {label:<22} {students} answers in 1 s: round trip p50 {med['trip50'] * 1000:6.1f} ms  "
        f"p99 {med['trip99'] * 1000:6.1f} ms;  on the teacher's count p50 {med['seen50'] * 1000:6.1f} ms  "
        f"p99 {med['seen99'] * 1000:6.1f} ms;  server CPU {med['cpu'] * 1000:6.0f} ms "
        f"({med['cpu'] / students * 1e6:5.0f} us an answer);  medians of {runs}"
    )
    return med


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--poll", type=float, default=0.8)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"a class question: {args.students} students answer within 1 s, the teacher polls every {args.poll} s")
    with convscope_serve(workers=1, **ONE_ADDRESS_CROWD) as base:
        memory = rows(base, "1 worker, in-process", args.students, args.poll, args.runs)
    missing = redis_missing_reason()
    if missing:
        print(f"  2 workers + Redis: not run ({missing})")
        return
    with redis_server() as url, convscope_serve("--redis-url", url, workers=2, **ONE_ADDRESS_CROWD) as base:
        redis = rows(base, "2 workers, Redis", args.students, args.poll, args.runs)
    print(
        "  Redis / in-process: round trip p99 "
        f"{redis['trip99'] / memory['trip99']:.2f}, count p99 {redis['seen99'] / memory['seen99']:.2f}, "
        f"CPU {redis['cpu'] / memory['cpu']:.2f}"
    )


if __name__ == "__main__":
    main()
