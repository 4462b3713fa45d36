"""Grade a student's file in a child process that only computes; the parent decides.

The parent (``check_file``) never runs the student's code: it searches the cases,
shrinks a failure, names the mistake, compares every output with its own truth and
writes the report. The child (``python -m convcore.grader.sandbox``) loads numpy and
convcore first, then the student's file, and answers one request per Case with the
arrays the student's functions returned (``convcore.grader.channel``). Whatever the
student's code does to numpy, convcore, its own descriptors or the report pipe, it
can change only the arrays it returns, never the verdict.

The child runs inside bubblewrap when the machine has it (``convcore.grader.isolation``:
no network, a read-only file system but its own temporary folder, the homes hidden,
its processes ended with it), with a few environment variables only, its address
space (``RLIMIT_AS``) and CPU time (``RLIMIT_CPU``) limited, what it prints sent to
/dev/null, and each call stopped after ``call_seconds`` (SIGALRM). The parent waits at
most ``time_limit`` seconds in all, then kills the child's whole process group.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .attempts import CANARY, audit_hook, checked_attempts, left_files, left_processes, said
from .channel import (
    ChannelBroken,
    ChannelClosed,
    ChannelTimeout,
    decode_array,
    decode_results,
    encode_array,
    encode_results,
    read_frame,
    write_frame,
)
from .defaults import MEMORY_MB, TIME_LIMIT
from .isolation import bound_back, hidden_folders, isolation, standins_for, wrap
from .loader import NAMES
from .report import Report

__all__ = ["check_file"]

# the child's whole environment (nothing of the teacher's: no tokens, no keys)
CHILD_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
CHILD_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONNOUSERSITE": "1",
    "PYTHONHASHSEED": "0",
}
START_SECONDS = 30.0  # at most this for the child to start, within the time limit


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _ended(returncode: int | None, memory_mb: int) -> str:
    if returncode is None:
        return "stopped answering the grader"
    if returncode < 0:
        sig = signal.Signals(-returncode)
        if sig == signal.SIGXCPU:
            return "used more CPU time than the limit and was stopped"
        if sig == signal.SIGKILL:
            return f"was killed (SIGKILL), e.g. for memory beyond the limit of {memory_mb} MB"
        return f"crashed with {sig.name}"
    return f"ended the process (exit code {returncode}) before the check finished, e.g. with os._exit"


class _Stopped(BaseException):
    """The child cannot go on; the message completes "<target> ..." (a BaseException
    like the grader's LimitExceeded, which it is raised as)."""


class _Child:
    """The running child: requests go down one pipe, replies come up another."""

    def __init__(self, params: dict[str, Any], workdir: str, time_limit: float, standins: dict[str, str]):
        self.memory_mb = params["memory_mb"]
        self.deadline = time.monotonic() + time_limit
        self.time_limit = time_limit
        self.attempts: list[tuple[str, str]] = []  # what the child's audit hook saw (convcore.grader.attempts)
        self.left: list[tuple[int, str]] = []  # the processes it left running, ended by close()
        requests_read, self.requests = os.pipe()
        self.replies, replies_write = os.pipe()
        self.canary = secrets.token_hex(16)  # (found in its answers: it read its environment into them)
        env = {CANARY: self.canary, **{k: os.environ[k] for k in CHILD_ENV_KEEP if k in os.environ}}
        env.update(CHILD_ENV, HOME=workdir, TMPDIR=workdir, PYTHONPATH=_convcore_root())
        command = [sys.executable, "-m", "convcore.grader.sandbox", str(requests_read), str(replies_write)]
        self.isolation = isolation()
        if self.isolation.isolated:
            home = os.path.realpath(os.path.expanduser("~"))
            if home in standins:  # ~ is the teacher's home, seen as its empty stand-in: writes there are seen
                env["HOME"] = home
            command = wrap(command, workdir, (str(Path(params["path"]).parent),), env, standins)
        self.log = open(os.path.join(workdir, ".child-log"), "w+b")  # (the harness's own errors)
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self.log,
                pass_fds=(requests_read, replies_write),
                start_new_session=True,
                env=env,
                cwd=workdir,
            )
        finally:
            os.close(requests_read)
            os.close(replies_write)
        self.send(params)

    def send(self, message: dict[str, Any]) -> None:
        try:
            write_frame(self.requests, message)
        except OSError:  # (BrokenPipe: it has gone; the next read says how)
            pass

    def receive(self) -> dict[str, Any]:
        """The child's next reply, without the attempts it carries (kept in ``attempts``)."""
        try:
            reply = read_frame(self.replies, self.deadline)
            if "attempts" in reply:
                self.attempts += checked_attempts(reply.pop("attempts"))
            return reply
        except ChannelTimeout:
            raise _Stopped(
                f"did not finish within the time limit of {self.time_limit:g} s and was stopped "
                "(does it loop forever, or is it very slow? --time-limit gives it more)"
            ) from None
        except ChannelClosed:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            raise _Stopped(self._ended_text()) from None
        except ChannelBroken as exc:
            raise _Stopped(
                f"wrote something into the grader's channel that is not an answer ({exc}), and was stopped"
            ) from None

    def _ended_text(self) -> str:
        text = _ended(self.process.returncode, self.memory_mb)
        self.log.seek(0)
        detail = self.log.read()[-4000:].decode(errors="replace").strip().splitlines()[-1:]
        return text + (f": {detail[0]}" if detail and detail[0] else "")

    def run(self, case: Any, names: tuple[str, ...]) -> dict[str, Any]:
        """The student's results on ``case`` (arrays or Failures, by output name)."""
        self.send({"case": case.to_dict(), "arrays": [encode_array(a) for a in case.arrays]})
        reply = self.receive()
        if set(reply) == {"results"}:
            try:
                return decode_results(reply["results"], names)
            except ChannelBroken as exc:
                raise _Stopped(
                    f"wrote something into the grader's channel that is not an answer ({exc}), and was stopped"
                ) from None
        if set(reply) == {"limit"} and isinstance(reply["limit"], str):
            raise _Stopped(reply["limit"][:2000])
        raise _Stopped("wrote something into the grader's channel that is not an answer, and was stopped")

    def record(self, case: Any, passes: tuple[str, ...] = ("forward", "backward"), reads: bool = True) -> Any:
        """The child's recorded run of its subject on ``case``, those passes recorded
        (``code_runs.CodeRun``)."""
        from .code_runs import CodeRun

        arrays = [encode_array(a) for a in case.arrays]
        self.send({"record": case.to_dict(), "arrays": arrays, "passes": list(passes), "reads": bool(reads)})
        reply = self.receive()
        if set(reply) == {"recorded"} and isinstance(reply["recorded"], dict):
            try:
                return CodeRun.from_dict(reply["recorded"])
            except (KeyError, TypeError, ValueError) as exc:
                raise _Stopped(f"wrote something into the grader's channel that is not a recording ({exc})") from None
        if set(reply) == {"limit"} and isinstance(reply["limit"], str):
            raise _Stopped(reply["limit"][:2000])
        raise _Stopped("wrote something into the grader's channel that is not a recording, and was stopped")

    def close(self) -> None:
        self.left = left_processes(self.process.pid, self.isolation.isolated)
        for pid, _ in self.left:  # (a new session leaves the group: each is ended by its number too)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for fd in (self.requests, self.replies):
            try:
                os.close(fd)
            except OSError:
                pass
        _kill_group(self.process.pid)  # whatever the student's code started in its group goes with it
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.log.close()


def _convcore_root() -> str:
    import convcore

    return str(Path(convcore.__file__).resolve().parent.parent)


def check_file(
    path: str,
    function: str | None = None,
    convention: str = "cs231n",
    *,
    seed: int = 0,
    examples: int | None = None,
    time_limit: float = TIME_LIMIT,
    memory_mb: int = MEMORY_MB,
    call_seconds: float | None = None,
    page: str | None = None,
) -> Report:
    """The Report of ``path[:function]``: its code run in a limited (and, with
    bubblewrap, isolated) child, graded here; ``attempts`` in it says what the code tried
    beyond computing (writes outside its folder, connections, processes left running, its
    environment read into its answers) and what became of each."""
    target = f"{path}:{function}" if function else path
    params = _child_params(path, function, convention, time_limit, memory_mb, call_seconds)
    readable = (str(Path(params["path"]).parent),)
    with tempfile.TemporaryDirectory(prefix="convscope-check-") as scratch:
        child, workdir, standins = _child_in(scratch, params, time_limit)
        try:
            report, cache_from = _graded(child, target, convention, seed, examples, page)
        finally:
            child.close()
        attempts = _attempts(child, report, standins, bound_back(workdir, readable))
    if "needs more memory" in (report.data.get("error") or ""):
        report.data["error"] += f"; the limit is {memory_mb} MB (--memory-limit)"
    report.data["isolation"] = child.isolation.summary
    if attempts:
        report.data["attempts"] = attempts
    if cache_from and not report.data.get("error"):
        report.data["note"] = (
            f"{function} was given the cache of the file's own {NAMES[convention][0]} "
            "(as the assignment's notebook does)"
        )
    return report


def _child_in(scratch: str, params: dict[str, Any], time_limit: float) -> tuple[_Child, str, dict[str, str]]:
    """The child started in the folder ``scratch``, with its working folder
    ``scratch/work`` (made here) and, when isolated, the stand-ins of the folders it must
    not see (none otherwise): (child, working folder, stand-ins)."""
    workdir = os.path.join(scratch, "work")
    os.mkdir(workdir)
    standins = standins_for(scratch) if isolation().isolated else {}
    return _Child(params, workdir, time_limit, standins), workdir, standins


def not_traced(convention: str) -> str:
    """Why code of ``convention`` has no trace of its own (its layer is not Conv2d)."""
    from ..mistakes import get_convention

    layer = get_convention(convention).layer
    return f"tracing your own code knows Conv2d only; {layer} code ({convention} convention) is graded, not traced yet"


def _child_params(
    path: str, function: str | None, convention: str, time_limit: float, memory_mb: int, call_seconds: float | None
) -> dict[str, Any]:
    """What the limited child is told: the file, the function, the convention and its
    limits (its CPU seconds: the wall-clock limit and two more)."""
    return {
        "path": os.path.abspath(path),
        "function": function,
        "convention": convention,
        "memory_mb": memory_mb,
        "call_seconds": call_seconds,
        "cpu_seconds": int(time_limit) + 2,
    }


def record_file(
    path: str,
    function: str | None,
    convention: str,
    case: Any,
    *,
    time_limit: float = TIME_LIMIT,
    memory_mb: int = MEMORY_MB,
    call_seconds: float | None = None,
) -> tuple[dict[str, Any] | None, str | None]:
    """The trace document of ``path[:function]``'s own code on ``case``
    (``convcore.grader.code_trace``): the runs recorded in the same limited child as
    ``check_file``'s, judged here. Returns (document, None), or (None, why not)."""
    from ..mistakes import get_convention
    from .code_trace import code_trace_document, run_and_judge

    target = f"{path}:{function}" if function else path
    params = _child_params(path, function, convention, time_limit, memory_mb, call_seconds)
    with tempfile.TemporaryDirectory(prefix="convscope-trace-") as scratch:
        child, _, _ = _child_in(scratch, params, time_limit)
        try:
            ready = child.receive()
            if set(ready) == {"fatal"}:
                return None, str(ready["fatal"])[:4000]
            parts, resolved = ready_parts(ready, convention)
            if parts is None:
                return None, f"{target} wrote something into the grader's channel that is not an answer"
            if not get_convention(resolved).on_the_page:
                return None, not_traced(resolved)
            real, verdicts = run_and_judge(None, convention, case, [params["path"]], runner=child.record)
        except _Stopped as exc:
            return None, f"{target} {exc}"
        finally:
            child.close()
    source = Path(params["path"]).read_text(encoding="utf-8", errors="replace").splitlines()
    shown = f"{Path(path).name}:{function}" if function else Path(path).name  # (no folders on a projector)
    document = code_trace_document(real, case, convention, verdicts, target=shown, source=source, path=path)
    return document, None


def _graded(
    child: _Child, target: str, convention: str, seed: int, examples: int | None, page: str | None
) -> tuple[Report, bool]:
    """The Report of the child's subject, and whether a backward got its file's forward's cache."""
    from ..mistakes import Subject, get_convention
    from .defaults import DEFAULT_EXAMPLES
    from .grading import LimitExceeded, grade

    try:
        ready = child.receive()
    except _Stopped as exc:
        return Report.fatal(target, convention, f"{target} {exc}", seed=seed), False
    if set(ready) == {"fatal"} and isinstance(ready["fatal"], str):
        return Report.fatal(target, convention, ready["fatal"][:4000], seed=seed), False
    parts, convention = ready_parts(ready, convention)
    cache_from = ready.get("cache_from")
    if parts is None:
        message = f"{target} wrote something into the grader's channel that is not an answer, and was stopped"
        return Report.fatal(target, convention, message, seed=seed), False
    # the parent's Subject names which parts exist; their code never runs here
    subject = Subject(**{k: _elsewhere if parts[k] else None for k in ("forward", "backward", "layer")})
    names = get_convention(convention).graded(subject)

    def run(case: Any) -> dict[str, Any]:
        try:
            return child.run(case, names)
        except _Stopped as exc:
            raise LimitExceeded(str(exc)) from None

    report = grade(
        convention,
        subject,
        target=target,
        seed=seed,
        examples=examples or DEFAULT_EXAMPLES,
        run=run,
        **({"page": page} if page else {}),
    )
    return report, bool(cache_from)


def ready_parts(ready: dict[str, Any], asked: str) -> tuple[dict[str, bool] | None, str]:
    """The child's ready message read: which parts the file has (None when the message
    is not one the child sends) and the convention it is graded in: the one asked, or
    for ``torch`` the layer of the functions the child found (one of ``TORCH_FAMILY``)."""
    from ..mistakes.layer_conventions import TORCH_FAMILY

    parts, said = ready.get("ready"), ready.get("convention")
    allowed = TORCH_FAMILY if asked == "torch" else (asked,)
    if (
        set(ready) != {"ready", "cache_from", "convention"}
        or not isinstance(ready.get("cache_from"), bool)
        or said not in allowed
        or not isinstance(parts, dict)
        or not all(isinstance(parts.get(k), bool) for k in ("forward", "backward", "layer"))
    ):
        return None, asked
    return parts, said


def _attempts(child: _Child, report: Report, standins: dict[str, str], bound: list[str]) -> list[str]:
    """What the submission tried beyond computing (convcore.grader.attempts), in words:
    what its audit hook saw, the files left in the stand-ins, the processes it left
    running, its environment in its answers."""
    seen = list(child.attempts) + [("process", command) for _, command in child.left]
    seen += left_files(standins, bound)
    if child.canary in json.dumps(report.data):
        seen.append(
            ("environment", "it held only the grader's few variables (PATH, locale, thread counts), none of yours")
        )
    home = os.path.realpath(os.path.expanduser("~"))
    return said(seen, child.isolation.isolated, list(standins) or hidden_folders(), bound, home)


def _elsewhere(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the student's code runs in the sandbox's child, never in the grader")


# -- the child ------------------------------------------------------------------------


def _limit(memory_mb: int, cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))


def _load(params: dict[str, Any]) -> tuple[Any, Any] | str:
    """(convention, subject) of the student's file, or the fatal message."""
    from ..mistakes import get_convention
    from .defaults import CALL_SECONDS
    from .grading import LimitExceeded, _alarm
    from .loader import LoadError, find_convention, find_subject, load_module

    try:
        with _alarm(params["call_seconds"] or CALL_SECONDS):
            module = load_module(params["path"])
        convention = find_convention(module, params["convention"], params["function"])
        return get_convention(convention), find_subject(module, convention, params["function"], params["path"])
    except LoadError as exc:
        return str(exc)
    except LimitExceeded as exc:
        return f"importing {params['path']}: it {exc}"


def _answer(convention: Any, subject: Any, request: dict[str, Any], call: Any, path: str) -> dict[str, Any]:
    from .grading import LimitExceeded

    recording = "record" in request
    case = convention.case_type.from_dict(request["record"] if recording else request["case"])
    case.__dict__["arrays"] = type(case.arrays)(*(decode_array(a) for a in request["arrays"]))  # the parent's own
    try:
        if recording:
            from .code_runs import record_run

            passes = tuple(p for p in request.get("passes", ()) if p in ("forward", "backward"))
            run = record_run(
                convention.name, subject, case, [path], call, only=passes, reads=request.get("reads") is True
            )
            return {"recorded": run.to_dict()}
        return {"results": encode_results(convention.run(subject, case, call))}
    except LimitExceeded as exc:
        return {"limit": str(exc)}


def _child(requests: int, replies: int) -> None:
    from .defaults import CALL_SECONDS
    from .grading import timed_call

    devnull = os.open(os.devnull, os.O_WRONLY)
    params = read_frame(requests)
    os.dup2(devnull, 1)  # what the student's code prints goes nowhere
    os.dup2(devnull, 2)
    hook, seen = audit_hook(os.getcwd())  # (its own folder; added before its code, it cannot be removed)
    sys.addaudithook(hook)
    sent = 0

    def reply(message: dict[str, Any]) -> None:
        nonlocal sent
        new, sent = seen[sent:], len(seen)
        write_frame(replies, {**message, "attempts": [list(a) for a in new]} if new else message)

    try:
        _limit(params["memory_mb"], params["cpu_seconds"])
        loaded = _load(params)
    except MemoryError:
        loaded = f"{params['path']} needs more memory than the limit of {params['memory_mb']} MB"
    if isinstance(loaded, str):
        reply({"fatal": loaded})
        os._exit(0)
    convention, subject = loaded
    reply(
        {
            "ready": {k: getattr(subject, k) is not None for k in ("forward", "backward", "layer")},
            "cache_from": subject.cache_from is not None,
            "convention": convention.name,  # (--convention torch: the layer whose functions the file defines)
        },
    )
    call = timed_call(params["call_seconds"] or CALL_SECONDS)
    while True:
        try:
            request = read_frame(requests)
        except ChannelBroken:  # the parent is done
            os._exit(0)
        try:
            answer = _answer(convention, subject, request, call, params["path"])
        except MemoryError:
            answer = {"limit": f"needs more memory than the limit of {params['memory_mb']} MB"}
        reply(answer)


if __name__ == "__main__":
    _child(int(sys.argv[1]), int(sys.argv[2]))
