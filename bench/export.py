"""Export benchmark: `convscope export` end to end, every contender side by side in one run.

Contenders, run as the command a teacher types (a new process each time: Python's
start, the trace, the page bundle, and for animations a headless Chromium that opens the
lesson file and draws and encodes every frame), in turn, ``--repeats`` rounds:

- the CS231n lesson file (``lesson.html``);
- one frame (step 34 as a GIF at 1280x720): the cost of starting the browser and
  opening the page, which every animation pays once;
- the CS231n backward phase (steps 34-51, 18 frames) as a GIF and as a WebM, at
  1280x720 and at 1920x1080, 4 steps per second.

Printed: median wall time, bytes, frames (Pillow decodes the GIFs; the WebM's
SimpleBlocks are counted), each animation's time per frame after the one-frame run's
start-up, and the ratios 1920x1080 / 1280x720 and animation / lesson file. The load
average is printed before and after: the machine's other work shares the cores.

Run: .venv/bin/python bench/export.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import webm_reader  # noqa: E402

PHASE = ["--preset", "cs231n", "--phase", "backward", "--fps", "4"]
CONTENDERS = {
    "lesson file": ("lesson.html", ["--preset", "cs231n"]),
    "1 frame GIF 1280x720": ("one.gif", ["--preset", "cs231n", "--steps", "34-34", "--size", "1280x720"]),
    "GIF 1280x720": ("b720.gif", [*PHASE, "--size", "1280x720"]),
    "GIF 1920x1080": ("b1080.gif", [*PHASE, "--size", "1920x1080"]),
    "WebM 1280x720": ("b720.webm", [*PHASE, "--size", "1280x720"]),
    "WebM 1920x1080": ("b1080.webm", [*PHASE, "--size", "1920x1080"]),
}


def frames_of(path: Path) -> int | None:
    data = path.read_bytes()
    if path.suffix == ".gif":
        from PIL import Image

        return Image.open(io.BytesIO(data)).n_frames
    if path.suffix == ".webm":
        return webm_reader.frame_count(data)
    return None


def run_once(folder: Path, name: str, options: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "convscope.cli", "export", str(folder / name), *options],
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"convscope export {name} failed ({done.returncode}): {done.stderr.strip()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}  ({os.cpu_count()} cores)")
    times: dict[str, list[float]] = {label: [] for label in CONTENDERS}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for _ in range(args.repeats):  # (in turn, so a busy moment falls on all of them)
            for label, (name, options) in CONTENDERS.items():
                times[label].append(run_once(folder, name, options))
        median = {label: statistics.median(ts) for label, ts in times.items()}
        start_up = median["1 frame GIF 1280x720"]
        lesson = median["lesson file"]
        print(f"convscope export, CS231n, median of {args.repeats} (all runs in s)")
        for label, (name, _) in CONTENDERS.items():
            path = folder / name
            frames = frames_of(path)
            size = path.stat().st_size
            line = f"  {label:<22} {median[label]:6.2f} s  {size:>9} bytes  "
            line += f"{frames:>3} frames  " if frames is not None else " " * 13
            if frames and frames > 1:
                line += f"{(median[label] - start_up) / (frames - 1) * 1000:5.0f} ms a frame after start-up  "
            line += "(" + ", ".join(f"{t:.2f}" for t in times[label]) + ")"
            print(line)
    for kind in ("GIF", "WebM"):
        print(f"  {kind} 1920x1080 / 1280x720: {median[f'{kind} 1920x1080'] / median[f'{kind} 1280x720']:.2f}x time")
    print(
        f"  GIF 1280x720 / lesson file: {median['GIF 1280x720'] / lesson:.1f}x;  browser start-up and page (1 frame) / lesson file: {start_up / lesson:.1f}x"
    )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
