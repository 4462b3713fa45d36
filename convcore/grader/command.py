"""``convscope check student.py[:FUNCTION] --convention cs231n|layer|torch|torch-transposed|torch-conv1d``.

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

__all__ = ["add_parser", "add_trace_parser", "case_from_json", "run", "run_trace"]

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
        "class; torch: PyTorch-named functions with PyTorch's arguments, conv2d_forward / conv2d_backward, "
        "or the layer whose functions the file defines instead: conv_transpose2d_forward / "
        "conv_transpose2d_backward (ConvTranspose2d, as torch-transposed) or conv1d_forward / "
        "conv1d_backward (Conv1d, as torch-conv1d)",
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
    check.add_argument(
        "--trace",
        metavar="OUT.html",
        help="also write your own code's trace, every write it makes, on the smallest failing case (the "
        "grader's first case when nothing fails) as a lesson file: D jumps to its first wrong write",
    )
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


WriteTrace = Callable[[dict, Any, Path, str], None]  # (document, case, path, title)


def add_trace_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """``convscope trace-code FILE[:FUNCTION] --case '{...}' -o OUT.html``."""
    from ..mistakes import CONVENTIONS
    from .defaults import MEMORY_MB, TIME_LIMIT

    about = "play your own conv code step by step: every write it makes, beside the truth, its first wrong write marked"
    trace = commands.add_parser("trace-code", help=about, description=about[0].upper() + about[1:] + ".")
    trace.add_argument(
        "target", metavar="FILE[:FUNCTION]", help="your Python file, optionally with the function or class"
    )
    trace.add_argument("--convention", choices=list(CONVENTIONS), default="cs231n", help="as for convscope check")
    trace.add_argument(
        "--case",
        default="{}",
        help="the layer as JSON: n, cg, fg, groups, h, w, kh, kw, stride, padding (top, bottom, left, right), "
        "dilation, activation (default: a 1×2×4×4 input, 2 filters of 3×3, padding 1; e.g. '{\"stride\": [2, 2]}')",
    )
    trace.add_argument("-o", "--output", metavar="OUT.html", required=True, help="the lesson file to write")
    trace.add_argument("--time-limit", type=float, default=TIME_LIMIT, help=f"seconds in all (default {TIME_LIMIT:g})")
    trace.add_argument("--memory-limit", type=int, default=MEMORY_MB, help=f"megabytes of memory (default {MEMORY_MB})")
    return trace


DEFAULT_CASE = {"n": 1, "cg": 2, "fg": 2, "h": 4, "w": 4, "kh": 3, "kw": 3, "padding": [1, 1, 1, 1]}


def case_from_json(text: str) -> Any:
    """The Case a ``--case`` JSON object says (DEFAULT_CASE's values where it is silent),
    with distinct small integers; raises ValueError naming the field and the numbers."""
    from ..mistakes import Case

    try:
        given = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--case is not JSON: {exc}") from None
    if not isinstance(given, dict):
        raise ValueError(f"--case must be a JSON object, got {type(given).__name__}")
    known = set(Case.__dataclass_fields__) - {"values", "seed"}
    unknown = sorted(set(given) - known)
    if unknown:
        raise ValueError(f"--case: unknown field {unknown[0]!r}; the fields are {', '.join(sorted(known))}")
    fields = {**DEFAULT_CASE, **given}
    for key, size in (("stride", 2), ("padding", 4), ("dilation", 2)):
        if key in fields:
            value = fields[key]
            fields[key] = tuple([value] * size if isinstance(value, int) else value)
            if len(fields[key]) != size:
                raise ValueError(f"--case: {key} takes {size} numbers or one, got {list(fields[key])}")
    try:
        case = Case(**fields, values="int")
        case.spec  # noqa: B018 - the check
    except (TypeError, ValueError) as exc:
        raise ValueError(f"--case: {exc}") from None
    return case


def trace_case(report: Any, convention: str) -> tuple[Any, str]:
    """The Case ``--trace`` plays (with distinct small integers) and what it is."""
    from dataclasses import replace

    from ..mistakes import Case
    from .space import edge_cases

    failing = first_failing_case(report)
    if failing is not None:
        return replace(
            Case.from_dict(failing[1]["case"]), values="int", seed=0
        ), f"{failing[0]}'s smallest failing case"
    return replace(edge_cases(convention)[0], values="int", seed=0), "the grader's first case (nothing fails)"


def write_code_trace(
    target: str, convention: str, case: Any, output: Path, about: str, write_trace: WriteTrace, **limits: Any
) -> int:
    """Record and judge ``target``'s code on ``case`` and write the lesson file; 0, or 2
    with why on standard error."""
    from .loader import split_target
    from .sandbox import record_file

    path, function = split_target(target)
    document, why = record_file(path, function, convention, case, **limits)
    if document is None:
        print(f"convscope: cannot trace {target}: {why}", file=sys.stderr)
        return 2
    try:
        write_trace(document, case, output, f"{Path(path).name}: your code on {about}")
    except Exception as exc:  # noqa: BLE001 - the file is what failed
        print(f"convscope: cannot write {output}: {exc}", file=sys.stderr)
        return 2
    d = document["divergence"]
    said = f"its first wrong write is step {d['event'] + 1}, {d['did']}" if d else "no write of it is wrong"
    print(f"trace of your code: {output} ({document['total_events']} steps; {said})")
    return 0


def _not_on_the_page(report: Any) -> str | None:
    """Why the report's layer has no lesson file or trace (None when it has): the lesson
    files and the traces of your code are Conv2d's."""
    from ..mistakes import CONVENTIONS

    convention = CONVENTIONS.get(report.data.get("convention"))
    if convention is None or convention.on_the_page:
        return None
    return (
        f"lesson files and the traces of your code are Conv2d's only, not {convention.layer}'s "
        f"({convention.name} convention) yet"
    )


def run_trace(args: argparse.Namespace, write_trace: WriteTrace) -> int:
    """``convscope trace-code``."""
    from ..mistakes import get_convention
    from .sandbox import not_traced

    if not get_convention(args.convention).on_the_page:
        print(f"convscope trace-code: {not_traced(args.convention)}", file=sys.stderr)
        return 2
    try:
        case = case_from_json(args.case)
    except ValueError as exc:
        print(f"convscope trace-code: {exc}", file=sys.stderr)
        return 2
    about = f"the case {case.describe()}"
    limits = {"time_limit": args.time_limit, "memory_mb": args.memory_limit}
    return write_code_trace(args.target, args.convention, case, Path(args.output), about, write_trace, **limits)


def _run_limits(args: argparse.Namespace) -> dict[str, Any]:
    """The limits among ``convscope check``'s options, as keywords (``check_file``'s, ``write_code_trace``'s)."""
    return {"time_limit": args.time_limit, "memory_mb": args.memory_limit, "call_seconds": args.call_time_limit}


def _grading_options(args: argparse.Namespace) -> dict[str, Any]:
    """``convscope check``'s options as the keywords of ``check_file`` and ``grade_all``."""
    return {"seed": args.seed, "examples": args.examples, **_run_limits(args), "page": args.page}


def run(
    args: argparse.Namespace,
    write_lesson: Callable[[dict, Path, str], None] | None = None,
    write_trace: WriteTrace | None = None,
) -> int:
    """``write_lesson(config, path, title)``: how the host writes a lesson file of a case
    (``convscope``'s export; convcore itself writes none) for ``--lesson``;
    ``write_trace(document, case, path, title)`` the one of a trace document, for
    ``--trace``."""
    from .loader import split_target
    from .sandbox import check_file

    for flag in ("lesson", "trace"):
        if getattr(args, flag, None) and Path(args.target).is_dir():
            print(
                f"convscope check: --{flag} writes one case's lesson file: give one FILE, not a folder", file=sys.stderr
            )
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
    report = check_file(path, function, args.convention, **_grading_options(args))
    print(report.to_json() if args.json else report)
    unseen = _not_on_the_page(report)
    if unseen and (getattr(args, "lesson", None) or getattr(args, "trace", None)):
        flag = "--lesson" if getattr(args, "lesson", None) else "--trace"
        print(f"convscope check: {flag}: {unseen}, so no file was written", file=sys.stderr)
        return 2
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
    if getattr(args, "trace", None) and write_trace is not None and report.exit_code != 2:
        case, about = trace_case(report, args.convention)
        limits = _run_limits(args)
        if write_code_trace(args.target, args.convention, case, Path(args.trace), about, write_trace, **limits):
            return 2
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
        **_grading_options(args),
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
