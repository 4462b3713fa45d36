"""`convscope export anim.gif|anim.webm`: the page draws the frames in a headless Chromium
(Debian's) over the DevTools pipe. Its GIF is decoded by Pillow (an independent decoder:
size, frame count, frame durations, frames that differ step to step); its WebM starts
with the EBML header, names its size in its video track, and plays in the browser's own
<video> with that size and its duration. No browser process is left behind: after a
file is made, after a timeout, after Ctrl-C and after SIGTERM."""

from __future__ import annotations

import base64
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import webm_reader
from test_browser_helpers import require_chromium

pytestmark = pytest.mark.browser

require_chromium()


from convscope.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROFILE_PREFIX = "convscope-chromium-"  # (server/export/browser.py's folder for each browser)


def _our_browsers(folder: Path) -> dict[int, str]:
    """Processes whose command line names an export browser's folder inside ``folder``
    (this test's own): {pid: command line}."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"{folder}/{PROFILE_PREFIX}" in line:
            found[int(entry.name)] = line
    return found


def _our_folders(folder: Path) -> set[str]:
    return {p.name for p in folder.glob(f"{PROFILE_PREFIX}*")}


@pytest.fixture
def browser_tmp(monkeypatch) -> Iterator[Path]:
    """A temporary folder of this test's own, where the export browser keeps its profile
    (the CLI in this process through ``tempfile.tempdir``, in a child through TMPDIR):
    the browsers of other tests, on other pytest-xdist workers, are not this test's. (A
    short path: Chromium's singleton socket lives under it, and a socket's path is at
    most 107 bytes.)"""
    folder = Path(tempfile.mkdtemp(prefix="cs-"))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def nothing_left_behind(browser_tmp):
    yield
    deadline = time.monotonic() + 5
    while _our_browsers(browser_tmp) and time.monotonic() < deadline:
        time.sleep(0.05)  # (a process SIGKILLed a moment ago is gone once it is reaped)
    left = _our_browsers(browser_tmp)
    assert not left, f"browser processes left running: {left}"
    assert not _our_folders(browser_tmp), "the browser's folder was left behind"


def _frames(gif: bytes) -> tuple[tuple[int, int], list[bytes], list[int]]:
    from PIL import Image

    img = Image.open(io.BytesIO(gif))
    assert img.format == "GIF"
    pixels, durations = [], []
    for k in range(img.n_frames):
        img.seek(k)
        durations.append(img.info["duration"])
        pixels.append(img.convert("RGB").tobytes())
    return img.size, pixels, durations


def test_a_phase_as_a_gif_decodes_with_its_size_frames_and_durations(tmp_path, capsys, nothing_left_behind):
    out = tmp_path / "backward.gif"
    assert (
        main(["export", str(out), "--preset", "cs231n", "--phase", "backward", "--size", "1280x720", "--fps", "5"]) == 0
    )
    said = capsys.readouterr().out
    assert "steps 20-37, 18 frames at 1280x720, 5 per second (3.6 s)" in said, said
    size, pixels, durations = _frames(out.read_bytes())
    # cs231n's backward phase: steps 20 to 37 of 38 (the header's phases)
    assert size == (1280, 720)
    assert len(pixels) == 18 and durations == [200] * 18, durations
    # each frame is its own step: every one differs from the one before
    same = [k for k in range(1, 18) if pixels[k] == pixels[k - 1]]
    assert not same, f"frames {same} repeat the frame before"
    # the stage is laid out for the frame: its right fifth holds figures, not background
    from PIL import Image

    frame = Image.frombytes("RGB", size, pixels[5])
    assert len(frame.crop((1024, 200, 1280, 600)).getcolors(maxcolors=1 << 20)) > 8, "the right fifth is empty"

    # projector mode is the page's projector drawing: the same step looks otherwise
    projected = tmp_path / "projected.gif"
    assert (
        main(
            [
                "export",
                str(projected),
                "--preset",
                "cs231n",
                "--steps",
                "20-21",
                "--size",
                "1280x720",
                "--fps",
                "5",
                "--projector",
            ]
        )
        == 0
    )
    _, projector_pixels, _ = _frames(projected.read_bytes())
    assert len(projector_pixels) == 2 and projector_pixels[0] != pixels[0]


def test_a_step_range_as_a_webm_has_its_size_in_its_track_and_plays_for_its_duration(
    tmp_path, browser, nothing_left_behind
):
    out = tmp_path / "steps.webm"
    assert (
        main(["export", str(out), "--preset", "cs231n", "--steps", "16-23", "--size", "1920x1080", "--fps", "4"]) == 0
    )
    webm = out.read_bytes()
    assert webm[:4] == b"\x1a\x45\xdf\xa3", "an EBML header"
    assert webm_reader.find(webm, [webm_reader.EBML, webm_reader.DOC_TYPE]) == b"webm"
    assert webm_reader.video_size(webm) == (1920, 1080)
    assert webm_reader.frame_count(webm) == 8
    # played by the browser's own decoder
    page = browser.new_page()
    got = page.evaluate(
        """async (b64) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const v = document.createElement('video');
          v.muted = true;
          v.src = URL.createObjectURL(new Blob([bytes], {type: 'video/webm'}));
          await new Promise((r, e) => { v.onloadeddata = r; v.onerror = () => e(new Error('video error ' + (v.error && v.error.message))); });
          return {w: v.videoWidth, h: v.videoHeight, d: v.duration};
        }""",
        base64.b64encode(webm).decode("ascii"),
    )
    page.close()
    assert (got["w"], got["h"]) == (1920, 1080), got
    assert abs(got["d"] - 2.0) < 0.05, got  # 8 steps at 4 per second


def test_a_timeout_ends_the_browser_and_writes_nothing(tmp_path, capsys, nothing_left_behind):
    out = tmp_path / "late.gif"
    code = main(["export", str(out), "--preset", "cs231n", "--timeout", "1"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "did not finish in 1 s" in err and "--timeout" in err, err
    assert not out.exists()


def _browser_of(cli: subprocess.Popen, folder: Path, timeout: float = 60) -> int:
    """The pid of the browser the CLI started (its profile in ``folder``), once the page
    is drawing (its renderer runs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid, line in _our_browsers(folder).items():
            if "--type=renderer" in line:
                try:
                    return os.getpgid(pid)
                except ProcessLookupError:
                    continue
        assert cli.poll() is None, cli.communicate()
        time.sleep(0.05)
    raise AssertionError("the CLI's browser did not start")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_ends_the_browser_and_writes_nothing(tmp_path, sig, browser_tmp, nothing_left_behind):
    out = tmp_path / "stopped.gif"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cli = subprocess.Popen(
        [sys.executable, "-m", "convscope.cli", "export", str(out), "--preset", "cs231n", "--size", "1920x1080"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: a pytest-xdist worker ignores SIGINT, and a child that starts
        # with SIGINT ignored keeps ignoring it (Python installs no handler then)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        group = _browser_of(cli, browser_tmp)
        cli.send_signal(sig)
        _, err = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    assert cli.returncode == 130, err
    assert f"stopped; {out} not written" in err, err
    assert not out.exists() and not list(tmp_path.iterdir())
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)  # nothing of the browser's process group is left
