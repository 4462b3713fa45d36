"""``convscope check student.py[:FUNCTION] --convention cs231n|layer|torch``.

``add_parser`` adds the subcommand to the ``convscope`` command line; ``run`` grades the
file, run in a limited (and isolated) child (``convcore.grader.sandbox``), and prints the report as
text (default) or JSON, and writes Gradescope's results.json when asked. Exit code 0:
every output passes; 1: one fails; 2: the file cannot be imported, the function is
missing, it raises on every input or it exceeds a limit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["add_parser", "run"]

HELP = "grade your conv layer: the smallest case that breaks it, and the likely mistake"


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from ..mistakes import CONVENTIONS
    from .defaults import CALL_SECONDS, DEFAULT_EXAMPLES, MEMORY_MB, TIME_LIMIT
    from .report import PAGE

    check = commands.add_parser(
        "check", help=HELP, description=HELP[0].upper() + HELP[1:] + ". Runs the code on this machine in a "
        "child process with time and memory limits, inside bubblewrap when it is installed (no network, a "
        "read-only file system, the homes hidden); the verdict is always this process's.")
    check.add_argument("target", metavar="FILE[:FUNCTION]",
                       help="your Python file, optionally with the one function (or layer class) to grade")
    check.add_argument("--convention", choices=list(CONVENTIONS), default="cs231n",
                       help="cs231n: conv_forward_naive / conv_backward_naive (default); layer: an NHWC Conv2D "
                            "class; torch: conv2d_forward / conv2d_backward with PyTorch's arguments")
    check.add_argument("--seed", type=int, default=0, help="seed of the case search (default 0: the same cases every run)")
    check.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES,
                       help=f"cases drawn after the edge cases (default {DEFAULT_EXAMPLES})")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument("--gradescope", metavar="PATH", help="also write Gradescope's results.json to PATH")
    check.add_argument("--time-limit", type=float, default=TIME_LIMIT, help=f"seconds for the whole check (default {TIME_LIMIT:g})")
    check.add_argument("--call-time-limit", type=float, default=None, help=f"seconds for one call of your code (default {CALL_SECONDS:g})")
    check.add_argument("--memory-limit", type=int, default=MEMORY_MB, help=f"megabytes of memory (default {MEMORY_MB})")
    check.add_argument("--page", default=PAGE, help=f"the ConvScope page the links open (default {PAGE})")
    return check


def run(args: argparse.Namespace) -> int:
    from .loader import split_target
    from .sandbox import check_file

    for name, value in (("--examples", args.examples), ("--memory-limit", args.memory_limit)):
        if value < 1:
            print(f"convscope check: {name} must be at least 1, got {value}", file=sys.stderr)
            return 2
    for name, value in (("--time-limit", args.time_limit), ("--call-time-limit", args.call_time_limit)):
        if value is not None and not value > 0:
            print(f"convscope check: {name} must be more than 0 seconds, got {value}", file=sys.stderr)
            return 2
    path, function = split_target(args.target)
    report = check_file(path, function, args.convention, seed=args.seed, examples=args.examples,
                        time_limit=args.time_limit, memory_mb=args.memory_limit,
                        call_seconds=args.call_time_limit, page=args.page)
    print(report.to_json() if args.json else report)
    if args.gradescope:
        try:
            Path(args.gradescope).write_text(json.dumps(report.gradescope(), indent=2, ensure_ascii=False), encoding="utf-8")
        except OSError as exc:
            print(f"convscope check: cannot write {args.gradescope}: {exc}", file=sys.stderr)
            return 2
    return report.exit_code
