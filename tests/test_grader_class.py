"""`convscope check FOLDER`: a class of submissions whose truth is known, graded at once.

The class (60 files): correct files, three files per catalogued CS231n mistake (each
the catalogue's own mistaken code), ten bugs of our own that no catalogued mistake is
(tests/test_grader_buggy.py), crashes, a file that never returns, one that prints
megabytes, a syntax error, hostile files (a forged report, writes into the teacher's
home, a TCP upload, the environment read, a detached sleeper, numpy patched to hide
wrong outputs), one in Gradescope's one-folder-per-student layout beside a helper
module, and a file whose name is HTML.
The summary's counts must equal the truth (per mistake, exactly the files that make
it), every hostile attempt must fail and be reported in that submission's report and
in the class report, nothing may be left running, the class folder and the teacher's
home (a fake $HOME) must be byte for byte as they were, and the HTML report must escape
what the files are called.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from test_grader_buggy import BUGGY, PRELUDE
from test_grader_isolation import FORGED, SECRET, WRONG_WITH_PATCHED_NUMPY, loopback_listener
from test_grader_sandbox import ROOT, STUDENTS, running_with

from convcore.mistakes.catalogue import mistakes_for

pytestmark = pytest.mark.slow

CS231N = [m.id for m in mistakes_for("cs231n")]
CORRECT = (STUDENTS / "seven_loops.py").read_text()
MISTAKE = (
    "from convcore.mistakes.catalogue import MISTAKES\n_s = MISTAKES[{id!r}].implementation\n"
    "conv_forward_naive, conv_backward_naive = _s.forward, _s.backward\n"
)


def make_class(folder: Path, marker: str, home_file: Path, port: int) -> dict[str, str]:
    """Write the class; {submission name: what it should get}. ``home_file``: a file in
    the teacher's home; ``port``: a listener on the loopback, which a hostile file tries."""
    truth: dict[str, str] = {}

    def put(name: str, text: str, expect: str) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        truth[name] = expect

    for k in range(8):
        put(f"correct_{k}.py", CORRECT, "pass")
    put("gradescope_17/helpers.py", "PAD = 0\n", "")  # a student's helper module, not a submission
    put("gradescope_17/submission.py", "import helpers\n" + CORRECT, "pass")
    for mistake in CS231N:
        for k in range(3):
            put(f"{mistake}_{k}.py", MISTAKE.format(id=mistake), f"fail:{mistake}")
    for name in BUGGY:  # bugs of our own, no catalogued mistake (tests/test_grader_buggy.py)
        everywhere = name in ("wrong_key", "float_output_size")  # these raise on every input
        put(
            f"bug_{name}.py",
            PRELUDE + textwrap.dedent(BUGGY[name]),
            "error:raises on every input" if everywhere else "fail:",
        )
    put("raises.py", (STUDENTS / "raises.py").read_text(), "error:raises on every input")
    put("syntax_error.py", (STUDENTS / "syntax_error.py").read_text(), "error:syntax error")
    put("loops_forever.py", (STUDENTS / "loops_forever.py").read_text(), "error:one call ran past its time limit")
    put("prints.py", (STUDENTS / "prints.py").read_text(), "pass")
    put("forged.py", "import os\n" + FORGED, "error:tampered with the grader")
    # (its dx is all zeros, as an unfinished backward's: dx_unfinished is the truth)
    put("patched_numpy.py", WRONG_WITH_PATCHED_NUMPY, "fail:dx_unfinished")
    # (isolated, writes to the home land in an empty stand-in that vanishes with the check;
    # the class folder and /etc are read-only)
    targets = (str(home_file), "~/.bashrc", str(folder / "correct_0.py"), "/etc/convscope-class-test")
    put(
        "writes_home.py",
        f"import os\nfor t in {targets!r}:\n    try:\n        with open(os.path.expanduser(t), 'a') as f:\n"
        "            f.write('pwned')\n    except OSError:\n        pass\n" + CORRECT,
        "pass",
    )
    put(
        "detaches.py",
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', "
        f"{marker!r}], start_new_session=True)\n" + CORRECT,
        "pass",
    )
    put("<b>bold</b>.py", CORRECT, "pass")
    # (isolated: no network, and none of the teacher's environment: graded as correct)
    put(
        "sends.py",
        f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'x')\n"
        "except OSError:\n    pass\n" + CORRECT,
        "pass",
    )
    put(  # (its environment in its error message: out fails with that crash at padding 2)
        "reads_environ.py",
        "import os\n"
        + CORRECT.replace(
            "def conv_forward_naive(x, w, b, conv_param):",
            "def conv_forward_naive(x, w, b, conv_param):\n"
            "    if conv_param['pad'] == 2:\n        raise ValueError(repr(dict(os.environ)))",
        ),
        "fail:",
    )
    del truth["gradescope_17/helpers.py"]
    return truth


def snapshot(*folders: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``folders``, by path."""
    return {
        str(p): (None if p.is_dir() else p.read_bytes())
        for folder in folders
        for p in sorted([folder, *folder.rglob("*")])
        if not p.is_symlink()
    }


# what each hostile file tried, as its report must say it (isolated)
def attempts_truth(marker: str, port: int, folder: Path, home_file: Path) -> dict[str, list[str]]:
    stand_in = "blocked (it went to an empty stand-in for ~, discarded)"
    return {
        "writes_home.py": [
            f"tried to write ~/{home_file.name}: {stand_in}",
            f"tried to write ~/.bashrc: {stand_in}",
            f"tried to write {folder / 'correct_0.py'}: blocked (read-only)",
            "tried to write /etc/convscope-class-test: blocked (read-only)",
        ],
        "sends.py": [f"tried to connect to 127.0.0.1:{port}: blocked (no network)"],
        "detaches.py": [f"left a process running ({sys.executable} -c import time; time.sleep(600) {marker}): "],
        "reads_environ.py": ["read its environment into its output: "],
    }


def test_a_class_folder_is_graded_to_its_known_truth(tmp_path):
    from convcore.grader.isolation import isolation

    folder = tmp_path / "class"
    home = tmp_path / "home"  # the teacher's $HOME for this run
    home.mkdir()
    (home / ".bashrc").write_text("export PS1='teacher$ '\n")
    marker = f"convscope-class-{uuid.uuid4().hex}"
    home_file = home / f".convscope-class-{uuid.uuid4().hex}"
    isolated = isolation().isolated
    outputs = tmp_path / "out"
    with loopback_listener() as (port, received):
        truth = make_class(folder, marker, home_file, port)
        before = snapshot(folder, home)
        started = time.monotonic()
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "convscope",
                    "check",
                    str(folder),
                    "--json",
                    "--call-time-limit",
                    "2",
                    "--csv",
                    str(outputs / "class.csv"),
                    "--class-report",
                    str(outputs / "class.html"),
                    "--gradescope",
                    str(outputs / "gradescope"),
                ],
                env=dict(os.environ, PYTHONPATH=str(ROOT), TEACHER_TOKEN=SECRET, HOME=str(home)),
                capture_output=True,
                text=True,
                timeout=600,
            )
            seconds = time.monotonic() - started
            assert done.returncode == 0, done.stderr[-2000:]
            print(f"{len(truth)} submissions graded in {seconds:.1f} s")
            data = json.loads(done.stdout)
            got = {s["name"]: s["report"] for s in data["submissions"]}
            assert set(got) == set(truth) and len(truth) >= 60
            assert SECRET not in done.stdout + done.stderr
            for name, expect in truth.items():
                report = got[name]
                status, _, detail = expect.partition(":")
                assert report["status"] == status, (name, report.get("error"), report["status"])
                if status == "error":
                    from convcore.grader.batch import error_kind

                    assert error_kind(report["error"]) == detail, (name, report["error"])
                named = {m["id"] for o in report.get("outputs", {}).values() for m in o.get("likely_mistakes", [])}
                if status == "fail" and detail:
                    assert named == {detail}, (name, named)
                if status == "fail" and not detail:
                    assert named == set(), (name, named)  # no catalogued name given wrongly
            summary = data["summary"]
            assert summary["count"] == len(truth)
            assert summary["passed"] == sum(v == "pass" for v in truth.values())
            assert summary["errors"] == sum(v.startswith("error") for v in truth.values())
            # each mistake: exactly the submissions whose truth it is
            makers: dict[str, set[str]] = {}
            for name, expect in truth.items():
                status, _, detail = expect.partition(":")
                if status == "fail" and detail:
                    makers.setdefault(detail, set()).add(name)
            by_id = {m["id"]: m for m in summary["mistakes"]}
            assert {i: set(m["submissions"]) for i, m in by_id.items()} == makers
            assert {i: m["count"] for i, m in by_id.items()} == {i: len(n) for i, n in makers.items()}
            assert summary["errors_by_kind"]["syntax error"] == ["syntax_error.py"]
            # the files
            rows = list(csv.DictReader(io.StringIO((outputs / "class.csv").read_text())))
            assert {r["submission"]: r["status"] for r in rows} == {n: v.partition(":")[0] for n, v in truth.items()}
            page = (outputs / "class.html").read_text()
            assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;.py" in page
            assert "<script" not in page and "http://127.0.0.1:8000/#s=0&amp;c=" in page
            for mistake in CS231N:
                assert f"<code>{mistake}</code>" in page
            gradescope = json.loads((outputs / "gradescope" / "correct_0" / "results.json").read_text())
            assert gradescope["score"] == 4
            assert json.loads((outputs / "gradescope" / "forged" / "results.json").read_text())["score"] == 0
            # what the hostile files tried: it failed, and it is reported
            assert snapshot(folder, home) == before  # the class folder and the teacher's home, byte for byte
            assert not Path("/etc/convscope-class-test").exists()
            deadline = time.monotonic() + 5
            while running_with(marker) and time.monotonic() < deadline:
                time.sleep(0.1)
            if isolated:
                assert not running_with(marker)
                assert received == []
                expected = attempts_truth(marker, port, folder, home_file)
                assert set(summary["attempts"]) == set(expected)
                for name, lines in expected.items():
                    said = summary["attempts"][name]
                    assert len(said) == len(lines) and all(s.startswith(t) for s, t in zip(said, lines)), (name, said)
                    assert got[name]["attempts"] == said
                    for line in said:
                        assert html.escape(line) in page
        finally:
            Path("/etc/convscope-class-test").unlink(missing_ok=True)
            for pid in running_with(marker):  # (by number: the sleepers of this run only)
                os.kill(int(pid), signal.SIGKILL)


def test_a_folder_without_submissions_is_refused(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "convscope", "check", str(tmp_path)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "holds no Python file to grade" in done.stderr
    shutil.rmtree(tmp_path, ignore_errors=True)
