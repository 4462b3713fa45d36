"""Grade a student's file in a subprocess with a time limit and a memory limit.

The student's code is the user's own, run on the user's own machine (the server never
runs submitted code). The child process (``python -m convcore.grader.sandbox``) reads its
parameters as JSON on standard input, limits its address space (``RLIMIT_AS``) and CPU
time (``RLIMIT_CPU``), sends what the student's code prints to /dev/null, stops any one
call after ``call_seconds`` (SIGALRM), and writes the report as JSON on the standard
output it kept. The parent waits at most ``time_limit`` seconds, then kills the child's
whole process group, so that nothing the student's code started keeps running.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from typing import Any

from .defaults import MEMORY_MB, TIME_LIMIT
from .report import Report

__all__ = ["check_file"]


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _ended(returncode: int, memory_mb: int) -> str:
    if returncode < 0:
        sig = signal.Signals(-returncode)
        if sig == signal.SIGXCPU:
            return "used more CPU time than the limit and was stopped"
        if sig == signal.SIGKILL:
            return f"was killed (SIGKILL), e.g. for memory beyond the limit of {memory_mb} MB"
        return f"crashed with {sig.name}"
    return f"ended the process (exit code {returncode}) before the check finished, e.g. with os._exit"


def check_file(path: str, function: str | None = None, convention: str = "cs231n", *, seed: int = 0,
               examples: int | None = None, time_limit: float = TIME_LIMIT, memory_mb: int = MEMORY_MB,
               call_seconds: float | None = None, page: str | None = None) -> Report:
    """The Report of ``path[:function]`` graded in a limited subprocess."""
    target = f"{path}:{function}" if function else path
    params = {"path": os.path.abspath(path), "function": function, "convention": convention, "seed": seed,
              "examples": examples, "memory_mb": memory_mb, "call_seconds": call_seconds,
              "cpu_seconds": int(time_limit) + 2, "target": target, "page": page}
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen([sys.executable, "-m", "convcore.grader.sandbox"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    try:
        out, err = proc.communicate(json.dumps(params).encode(), timeout=time_limit)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.communicate()
        return Report.fatal(target, convention, f"{target} did not finish within the time limit of "
                                                f"{time_limit:g} s and was stopped (does it loop forever, or is "
                                                f"it very slow? --time-limit gives it more)", seed=seed)
    finally:
        _kill_group(proc.pid)  # whatever the student's code started goes with it
    try:
        data = json.loads(out.decode())
    except ValueError:
        detail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return Report.fatal(target, convention, f"{target} {_ended(proc.returncode, memory_mb)}"
                                                + (f": {detail[0]}" if detail[0] else ""), seed=seed)
    return Report(data)


# -- the child ------------------------------------------------------------------------


def _limit(memory_mb: int, cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))


def _grade(params: dict[str, Any]) -> Report:
    from .defaults import CALL_SECONDS, DEFAULT_EXAMPLES
    from .grading import LimitExceeded, _alarm, grade, timed_call
    from .loader import LoadError, find_subject, load_module

    target, convention = params["target"], params["convention"]
    seconds = params["call_seconds"] or CALL_SECONDS
    try:
        with _alarm(seconds):
            module = load_module(params["path"])
        subject = find_subject(module, convention, params["function"], params["path"])
    except LoadError as exc:
        return Report.fatal(target, convention, str(exc), seed=params["seed"])
    except LimitExceeded as exc:
        return Report.fatal(target, convention, f"importing {params['path']}: it {exc}", seed=params["seed"])
    extra = {"page": params["page"]} if params.get("page") else {}
    report = grade(convention, subject, target=target, seed=params["seed"],
                   examples=params["examples"] or DEFAULT_EXAMPLES, call=timed_call(seconds), **extra)
    if "needs more memory" in (report.data.get("error") or ""):
        report.data["error"] += f"; the limit is {params['memory_mb']} MB (--memory-limit)"
    return report


def _child() -> None:
    params = json.loads(sys.stdin.read())
    report_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # what the student's code prints goes nowhere
    os.dup2(devnull, 2)
    try:
        _limit(params["memory_mb"], params["cpu_seconds"])
        report = _grade(params)
    except MemoryError:
        report = Report.fatal(params["target"], params["convention"],
                              f"{params['target']} needs more memory than the limit of {params['memory_mb']} MB",
                              seed=params["seed"])
    except BaseException as exc:  # noqa: BLE001 - the report must say what happened
        report = Report.fatal(params["target"], params["convention"],
                              f"the check failed: {type(exc).__name__}: {exc}", seed=params["seed"])
    data = report.to_json().encode()
    while data:
        data = data[os.write(report_fd, data):]
    os._exit(0)  # no waiting for threads the student's code may have started


if __name__ == "__main__":
    _child()
