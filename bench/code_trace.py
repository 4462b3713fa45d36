"""Trace your own code (convcore.grader.code_trace): what recording a student's writes costs.

On a correct seven-loop CS231n implementation (bench/student_seven.py), measured side by
side in one run, alternating, medians of the repeats:

- one recorded run ÷ the same run unrecorded (the recording's overhead per write);
- the whole trace (the real run, one run per term to judge each write, the judging and
  the document) ÷ one unrecorded run.

    .venv/bin/python bench/code_trace.py [--repeats 9]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import student_seven  # noqa: E402

from convcore.grader.code_runs import record_run  # noqa: E402
from convcore.grader.code_trace import trace_code  # noqa: E402
from convcore.mistakes import Case, Subject, get_convention  # noqa: E402

CASES = {
    "the default case (1×2×4×4, 2 filters 3×3, pad 1)": Case(n=1, cg=2, fg=2, h=4, w=4, kh=3, kw=3, padding=(1,) * 4),
    "a larger one (2×3×6×6, 4 filters 3×3, pad 1)": Case(n=2, cg=3, fg=4, h=6, w=6, kh=3, kw=3, padding=(1,) * 4),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    subject = Subject(forward=student_seven.conv_forward_naive, backward=student_seven.conv_backward_naive)
    conv = get_convention("cs231n")
    paths = [student_seven.__file__]
    for title, case in CASES.items():
        plain, recorded, whole = [], [], []
        writes = 0
        for _ in range(args.repeats):
            t = time.perf_counter()
            conv.run(subject, case)
            plain.append(time.perf_counter() - t)
            t = time.perf_counter()
            writes = len(record_run("cs231n", subject, case, paths).writes)
            recorded.append(time.perf_counter() - t)
            t = time.perf_counter()
            doc = trace_code(student_seven.conv_forward_naive, student_seven.conv_backward_naive, case=case)
            whole.append(time.perf_counter() - t)
        p, r, w = (statistics.median(v) for v in (plain, recorded, whole))
        assert doc["divergence"] is None
        print(f"{title}: {writes} writes")
        print(f"  unrecorded run        {p * 1e3:8.1f} ms")
        print(f"  recorded run          {r * 1e3:8.1f} ms   {r / p:5.1f}× the unrecorded run")
        print(f"  whole trace (judged)  {w * 1e3:8.1f} ms   {w / p:5.1f}× the unrecorded run")


if __name__ == "__main__":
    main()
