"""`convscope check` on a correct seven-loop CS231n file, end to end (the subprocess,
the search, the report), against the same check of convcore's vectorised CS231n
functions, alternating, median of the repeats. The target: at most 20 s for the
seven-loop file on the development machine (2 cores). The ratio says how much of the
time is the student's loops rather than the grader.

    .venv/bin/python bench/grader.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEVEN_LOOPS = ROOT / "tests" / "fixtures" / "students" / "seven_loops.py"
VECTORISED = "from convcore.compat.cs231n import conv_backward_naive, conv_forward_naive  # noqa: F401\n"
TARGET_SECONDS = 20.0


def timed_check(path: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "convscope", "check", str(path)], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"convscope check {path.name} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vectorised = Path(tmp) / "vectorised.py"
        vectorised.write_text(VECTORISED)
        loops, fast = [], []
        for _ in range(args.repeats):
            loops.append(timed_check(SEVEN_LOOPS))
            fast.append(timed_check(vectorised))
    seven, core = statistics.median(loops), statistics.median(fast)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(
        f"convscope check, seven-loop CS231n file: median {seven:.2f} s over {args.repeats} runs "
        f"({', '.join(f'{s:.2f}' for s in loops)})"
    )
    print(f"convscope check, vectorised CS231n functions: median {core:.2f} s ({', '.join(f'{s:.2f}' for s in fast)})")
    print(f"seven loops ÷ vectorised: {seven / core:.2f}×")
    print(f"target: seven-loop file ≤ {TARGET_SECONDS:g} s: {'met' if seven <= TARGET_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()
