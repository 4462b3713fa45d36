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
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]

HELP = "grade your conv layer: the smallest case that breaks it, and the likely mistake"


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from ..mistakes import CONVENTIONS
    from .defaults import CALL_SECONDS, DEFAULT_EXAMPLES, MEMORY_MB, TIME_LIMIT
    from .report import PAGE

    check = commands.add_parser(
        "check",
        help=HELP,
        description=HELP[0].upper() + HELP[1:] + ". Runs the code on this machine in a "
        "child process with time and memory limits, inside bubblewrap when it is installed (no network, a "
        "read-only file system, the homes hidden); the verdict is always this process's.",
    )
    check.add_argument(
        "target",
        metavar="FILE[:FUNCTION]",
        help="your Python file, optionally with the one function (or layer class) to grade; or a "
        "folder of submissions (a file, or a folder, per student) to grade a class at once",
    )
    check.add_argument(
        "--convention",
        choices=list(CONVENTIONS),
        default="cs231n",
        help="cs231n: conv_forward_naive / conv_backward_naive (default); layer: an NHWC Conv2D "
        "class; torch: conv2d_forward / conv2d_backward with PyTorch's arguments",
    )
    check.add_argument(
        "--seed", type=int, default=0, help="seed of the case search (default 0: the same cases every run)"
    )
    check.add_argument(
        "--examples",
        type=int,
        default=DEFAULT_EXAMPLES,
        help=f"cases drawn after the edge cases (default {DEFAULT_EXAMPLES})",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument("--gradescope", metavar="PATH", help="also write Gradescope's results.json to PATH")
    check.add_argument(
        "--time-limit", type=float, default=TIME_LIMIT, help=f"seconds for the whole check (default {TIME_LIMIT:g})"
    )
    check.add_argument(
        "--call-time-limit",
        type=float,
        default=None,
        help=f"seconds for one call of your code (default {CALL_SECONDS:g})",
    )
    check.add_argument("--memory-limit", type=int, default=MEMORY_MB, help=f"megabytes of memory (default {MEMORY_MB})")
    check.add_argument("--page", default=PAGE, help=f"the ConvScope page the links open (default {PAGE})")
    grading = check.add_argument_group("a class at once (FILE is a folder of submissions)")
    grading.add_argument("--jobs", type=int, default=None, help="checks at once (default: the machine's cores)")
    grading.add_argument("--csv", metavar="PATH", help="write one CSV row per submission to PATH")
    grading.add_argument(
        "--class-report", metavar="PATH", help="write the class report (one offline HTML file) to PATH"
    )
    return check


def first_failing_case(report: Any) -> tuple[str, dict] | None:
    """(output, counterexample) of the report's first failing output, or None."""
    for name, result in report.data.get("outputs", {}).items():
        if result["status"] == "fail":
            return name, result["counterexample"]
    return None


def run(args: argparse.Namespace, write_lesson: Callable[[dict, Path, str], None] | None = None) -> int:
    """``write_lesson(config, path, title)``: how the host writes a lesson file of a case
    (``convscope``'s export; convcore itself writes none) for ``--lesson``."""
    from .loader import split_target
    from .sandbox import check_file

    if getattr(args, "lesson", None) and Path(args.target).is_dir():
        print("convscope check: --lesson writes one case's lesson file: give one FILE, not a folder", file=sys.stderr)
        return 2

    for name, value in (("--examples", args.examples), ("--memory-limit", args.memory_limit)):
        if value < 1:
            print(f"convscope check: {name} must be at least 1, got {value}", file=sys.stderr)
            return 2
    for name, value in (("--time-limit", args.time_limit), ("--call-time-limit", args.call_time_limit)):
        if value is not None and not value > 0:
            print(f"convscope check: {name} must be more than 0 seconds, got {value}", file=sys.stderr)
            return 2
    if Path(args.target).is_dir():
        return run_class(args)
    path, function = split_target(args.target)
    report = check_file(
        path,
        function,
        args.convention,
        seed=args.seed,
        examples=args.examples,
        time_limit=args.time_limit,
        memory_mb=args.memory_limit,
        call_seconds=args.call_time_limit,
        page=args.page,
    )
    print(report.to_json() if args.json else report)
    if getattr(args, "lesson", None) and write_lesson is not None:
        failing = first_failing_case(report)
        if failing is None:
            print("convscope check: nothing fails, so no lesson file was written", file=sys.stderr)
        else:
            name, ce = failing
            try:
                write_lesson(ce["config"], Path(args.lesson), f"{Path(path).name}: {name} on its smallest failing case")
            except Exception as exc:  # noqa: BLE001 - the check's verdict stands; the file is what failed
                print(f"convscope check: cannot write the lesson file {args.lesson}: {exc}", file=sys.stderr)
                return 2
            if not args.json:
                print(f"lesson file: {args.lesson} opens the {name} case with your {name} compared, with no server")
    if args.gradescope:
        try:
            Path(args.gradescope).write_text(
                json.dumps(report.gradescope(), indent=2, ensure_ascii=False), encoding="utf-8"
            )
        except OSError as exc:
            print(f"convscope check: cannot write {args.gradescope}: {exc}", file=sys.stderr)
            return 2
    return report.exit_code


def run_class(args: argparse.Namespace) -> int:
    """Every submission in the folder: the class summary on standard output (JSON with
    --json), --csv and --class-report files, and with --gradescope a folder of one
    results.json per submission. Exit 0 once every submission has its verdict."""
    from .batch import find_submissions, grade_all, summarize
    from .class_report import class_csv, class_html, class_text
    from .report import Report

    folder = Path(args.target)
    if args.jobs is not None and args.jobs < 1:
        print(f"convscope check: --jobs must be at least 1, got {args.jobs}", file=sys.stderr)
        return 2
    try:
        submissions = find_submissions(folder, args.convention)
    except (OSError, ValueError) as exc:
        print(f"convscope check: {exc}", file=sys.stderr)
        return 2
    if not submissions:
        print(f"convscope check: {folder} holds no Python file to grade", file=sys.stderr)
        return 2

    def progress(done: int, total: int, submission) -> None:
        print(f"[{done}/{total}] {submission.name}", file=sys.stderr, flush=True)

    reports = grade_all(
        submissions,
        args.convention,
        jobs=args.jobs,
        progress=progress,
        seed=args.seed,
        examples=args.examples,
        time_limit=args.time_limit,
        memory_mb=args.memory_limit,
        call_seconds=args.call_time_limit,
        page=args.page,
    )
    summary = summarize(submissions, reports)
    writes = []
    if args.csv:
        writes.append((Path(args.csv), class_csv(submissions, reports)))
    if args.class_report:
        writes.append(
            (
                Path(args.class_report),
                class_html(summary, submissions, reports, args.convention, title=f"Class report: {folder.name}"),
            )
        )
    if args.gradescope:
        for submission, data in zip(submissions, reports):
            target = Path(args.gradescope) / submission.name.replace("/", "__").removesuffix(".py") / "results.json"
            writes.append((target, json.dumps(Report(data).gradescope(), indent=2, ensure_ascii=False)))
    for target, text in writes:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"convscope check: cannot write {target}: {exc}", file=sys.stderr)
            return 2
    if args.json:
        print(
            json.dumps(
                {
                    "summary": summary,
                    "submissions": [{"name": s.name, "report": r} for s, r in zip(submissions, reports)],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        print(class_text(summary, args.convention))
    return 0
