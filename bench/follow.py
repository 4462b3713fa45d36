"""Follow mode and export benchmark, all figures measured in one run.

1. Follow delay: a teacher publishes ``--steps`` states ``--interval`` s apart to 30 and
   to 300 SSE subscribers (httpx, one asyncio process); the delay of each delivery is
   the time from sending the teacher's PUT to the subscriber reading the event.
   Once on one uvicorn worker with the in-process broker, once on two workers sharing
   a throwaway redis-server. Target: p99 < 500 ms, nothing missing. Also the server's
   CPU time per step (its processes' user + system time while the steps are published,
   from /proc): unlike the delays, it hardly depends on what else the machine runs.
2. Export: time to write the CS231n lesson file (trace lines with the gradient check,
   then the page bundle), its size (target < 1 MB), and show()'s time in a notebook.

Run: .venv/bin/python bench/follow.py [--steps 20] [--interval 0.15] [--repeats 5]
Server, Redis and the load generator share the machine's cores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from follow_helpers import ONE_ADDRESS_CROWD, follow_load, redis_missing_reason, redis_server, uvicorn_process  # noqa: E402


def follow_rows(base: str, label: str, steps: int, interval: float) -> dict[int, float]:
    p99s = {}
    for subscribers in (30, 300):
        run = follow_load(base, subscribers, steps, interval, timeout=120)
        p50, p99 = run.percentile(0.5) * 1000, run.percentile(0.99) * 1000
        worst = max(run.delays) * 1000 if run.delays else float("nan")
        p99s[subscribers] = p99
        for error in run.errors[:3]:
            print(f"  error: {error}")
        print(
            f"  {label:<22} {subscribers:>4} subscribers: p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  max {worst:6.1f} ms  "
            f"deliveries {len(run.delays)}/{subscribers * steps}  missing {run.missing()}  errors {len(run.errors)}"
        )
        print(
            f"  {'':<22} {'':>4}   server CPU per step: {run.server_cpu / steps * 1000:5.1f} ms "
            f"({run.server_cpu / steps / subscribers * 1e6:4.0f} us per delivery, PUT included)"
        )
    print(f"  {label:<22} p99 at 300 / p99 at 30: {p99s[300] / p99s[30]:.1f}")
    return p99s


def export_rows(repeats: int) -> None:
    from convscope import show
    from convscope.export.bundle import inline_page
    from convscope.export.lesson import lesson_html
    from convscope.http.static_files import find_static_dir
    from convscope.settings import Settings
    from convscope.traces.prepare import prepare, stream_lines
    from convscope.traces.presets import PRESETS

    preset = PRESETS["cs231n"]

    def timed(fn) -> float:
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return statistics.median(times) * 1000

    whole = timed(lambda: lesson_html(preset.config, title=preset.title))
    lines = timed(lambda: list(stream_lines(prepare(preset.config, Settings()))))
    bundle = timed(lambda: inline_page(find_static_dir(), {"convscope-lesson": "{}"}))
    shown = timed(lambda: show(preset="cs231n", display=False))
    size = len(lesson_html(preset.config, title=preset.title).encode("utf-8"))
    print(
        f"  CS231n lesson file: {whole:.1f} ms (trace lines + check {lines:.1f} ms, page bundle {bundle:.1f} ms), "
        f"{size} bytes = {size / 1e6:.2f} MB (target < 1 MB)"
    )
    print(f"  show(preset='cs231n'): {shown:.1f} ms;  medians of {repeats}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.15)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"follow delay ({args.steps} steps, {args.interval} s apart)")
    with uvicorn_process(workers=1, **ONE_ADDRESS_CROWD) as base:
        memory = follow_rows(base, "1 worker, in-process", args.steps, args.interval)
    missing = redis_missing_reason()
    if missing:
        print(f"  2 workers + Redis: not run ({missing})")
    else:
        with redis_server() as url, uvicorn_process(workers=2, follow_redis_url=url, **ONE_ADDRESS_CROWD) as base:
            redis = follow_rows(base, "2 workers, Redis", args.steps, args.interval)
        print(f"  p99 Redis / in-process: {redis[30] / memory[30]:.1f} at 30, {redis[300] / memory[300]:.1f} at 300")
    print("export")
    export_rows(args.repeats)


if __name__ == "__main__":
    main()
