"""A class at once: every submission in a folder graded, in parallel, and summed up.

``find_submissions(folder, convention)`` reads the two layouts graders export: one
file per student in the folder (Canvas), or one folder per student (Gradescope's
``submissions/<id>/``), where the student's file is the one that defines the graded
functions. ``grade_all`` checks each in its own sandboxed child (``check_file``),
as many at once as the machine has cores, and ``summarize`` counts what a teacher
re-teaches from: pass rates per output, the mistakes named and who made them, the
kinds of crash and of verdicts that could not be given.
"""

from __future__ import annotations

import multiprocessing
import os
import re
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..mistakes import CONVENTIONS
from ..mistakes.layer_conventions import TORCH_FAMILY
from .loader import NAMES

__all__ = ["Submission", "find_submissions", "grade_all", "summarize"]

MAX_SUBMISSIONS = 2000


@dataclass(frozen=True)
class Submission:
    name: str  # the file, or the student's folder, relative to the class folder
    path: Path


def _defines(path: Path, convention: str) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    names = [n for c in TORCH_FAMILY for n in NAMES[c]] if convention == "torch" else NAMES.get(convention, ())
    wanted = (r"^\s*class\s+\w+",) if convention == "layer" else tuple(rf"^\s*def\s+{n}\b" for n in names)
    return any(re.search(pattern, text, re.MULTILINE) for pattern in wanted)


def find_submissions(folder: Path, convention: str) -> list[Submission]:
    """The submissions in ``folder``: each ``*.py`` in it, and for each subfolder (a
    student's) the one file in it, or the first (by name) defining the graded code."""
    found: list[Submission] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith((".", "__")):
            continue
        if entry.is_file() and entry.suffix == ".py":
            found.append(Submission(entry.name, entry))
        elif entry.is_dir():
            files = sorted(p for p in entry.rglob("*.py") if "__pycache__" not in p.parts)
            chosen = next((p for p in files if _defines(p, convention)), files[0] if files else None)
            if chosen is not None:
                found.append(Submission(str(chosen.relative_to(folder)), chosen))
    if len(found) > MAX_SUBMISSIONS:
        raise ValueError(f"{folder} holds {len(found)} submissions; at most {MAX_SUBMISSIONS} at once")
    return found


def _check_one(path: str, convention: str, options: dict[str, Any]) -> dict[str, Any]:
    from .sandbox import check_file

    return check_file(path, None, convention, **options).data


def grade_all(
    submissions: list[Submission],
    convention: str,
    *,
    jobs: int | None = None,
    progress: Callable[[int, int, Submission], None] | None = None,
    **options: Any,
) -> list[dict[str, Any]]:
    """Each submission's report data, in order; ``jobs`` checks at once (default: the
    machine's cores). ``options`` are check_file's (seed, examples, time_limit, ...)."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(submissions) or 1))
    reports: list[dict[str, Any] | None] = [None] * len(submissions)
    # (processes, not threads: hypothesis's draws are not made for threads)
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_check_one, str(s.path), convention, options): i for i, s in enumerate(submissions)}
        done = 0
        for future in as_completed(futures):
            i = futures[future]
            reports[i] = future.result()
            done += 1
            if progress is not None:
                progress(done, len(submissions), submissions[i])
    return [r for r in reports if r is not None]


# what a verdict that could not be given says, by the phrase that tells it
ERROR_KINDS = (
    ("cannot be imported", "cannot be imported"),
    ("SyntaxError", "syntax error"),
    ("has neither", "the functions are missing"),
    ("defines none of", "the functions are missing"),
    ("has no ", "the functions are missing"),
    ("raises on every input", "raises on every input"),
    ("did not finish within the time limit", "ran past the time limit"),
    ("did not return within the time limit", "one call ran past its time limit"),
    ("needs more memory", "needed more memory than the limit"),
    ("grader's channel", "tampered with the grader"),
    ("ended the process", "ended its own process"),
    ("was killed", "was killed"),
)


def error_kind(message: str) -> str:
    return next((kind for phrase, kind in ERROR_KINDS if phrase in message), "could not be graded")


def summarize(submissions: list[Submission], reports: list[dict[str, Any]]) -> dict[str, Any]:
    """What the class did: {count, passed, failed, errors, outputs: {name: {pass, of}},
    mistakes: [{id, title, should, count, submissions, page}], crashes: {kind: count},
    errors_by_kind: {kind: [names]}, unnamed: {output: [names]}, attempts: {name: [what it
    tried, and what became of it]}, layers: {layer: graded submissions computing it}}
    (plain JSON data)."""
    outputs: dict[str, Counter] = {}
    mistakes: dict[str, dict[str, Any]] = {}
    crashes: Counter = Counter()
    errors: dict[str, list[str]] = {}
    unnamed: dict[str, list[str]] = {}
    status: Counter = Counter()
    attempts: dict[str, list[str]] = {}
    for submission, report in zip(submissions, reports):
        status[report["status"]] += 1
        if report.get("attempts"):
            attempts[submission.name] = list(report["attempts"])
        if report.get("error"):
            errors.setdefault(error_kind(report["error"]), []).append(submission.name)
            continue
        for name, result in report["outputs"].items():
            tally = outputs.setdefault(name, Counter())
            tally["of"] += 1
            if result["status"] == "pass":
                tally["pass"] += 1
                continue
            ce = result["counterexample"]
            if ce.get("error"):
                crashes[ce["kind"]] += 1
            named = result.get("likely_mistakes") or []
            if not named:
                unnamed.setdefault(name, []).append(submission.name)
            for mistake in named:
                entry = mistakes.setdefault(
                    mistake["id"],
                    {
                        "id": mistake["id"],
                        "title": mistake["title"],
                        "should": mistake["should"],
                        "submissions": [],
                        "page": ce["page"],
                    },
                )
                if submission.name not in entry["submissions"]:
                    entry["submissions"].append(submission.name)
    ranked = sorted(mistakes.values(), key=lambda m: (-len(m["submissions"]), m["id"]))
    return {
        "count": len(reports),
        "passed": status["pass"],
        "failed": status["fail"],
        "errors": status["error"],
        "outputs": {n: {"pass": c["pass"], "of": c["of"]} for n, c in outputs.items()},
        "mistakes": [{**m, "count": len(m["submissions"])} for m in ranked],
        "crashes": dict(crashes.most_common()),
        "errors_by_kind": dict(sorted(errors.items(), key=lambda kv: -len(kv[1]))),
        "unnamed": unnamed,
        "attempts": attempts,
        "layers": dict(Counter(_layer(r) for r in reports if not r.get("error")).most_common()),
    }


def _layer(report: dict[str, Any]) -> str:
    """The layer a graded report's code computes (``--convention torch`` grades each file
    as the layer whose functions it defines)."""
    convention = CONVENTIONS.get(report["convention"])
    return convention.layer if convention is not None else report["convention"]
