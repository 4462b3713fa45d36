"""The page's GIF writer (static/js/encode/gif.js, run by node) read back by Pillow, an
independent decoder: frames of at most 256 colours come back pixel for pixel, with
their delays, also frames big and noisy enough that the LZW string table fills and is
cleared many times; a frame of other colours takes the nearest palette colour."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
if NODE is None and os.environ.get("CI") == "true":
    raise RuntimeError("the GIF writer tests need node (Debian's nodejs; make test installs it)")
pytestmark = pytest.mark.skipif(NODE is None, reason="node runs the page's GIF writer (Debian's nodejs)")

ENCODE = """
import { encodeGif } from %s;
import { readFileSync } from "node:fs";
const { width, height, delay, frames } = JSON.parse(readFileSync(0, "utf8"));
const rgba = frames.map((b64) => new Uint8ClampedArray(Buffer.from(b64, "base64")));
process.stdout.write(Buffer.from(encodeGif(rgba, width, height, delay)).toString("base64"));
"""


def _encode(frames: list[np.ndarray], delay: int) -> bytes:
    """frames: (H, W, 3) uint8 each -> the GIF bytes encode/gif.js writes."""
    height, width, _ = frames[0].shape
    rgba = [np.dstack([f, np.full(f.shape[:2], 255, np.uint8)]).tobytes() for f in frames]
    request = {"width": width, "height": height, "delay": delay, "frames": [base64.b64encode(b).decode() for b in rgba]}
    script = ENCODE % json.dumps((ROOT / "static/js/encode/gif.js").as_uri())
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return base64.b64decode(out.stdout)


def _decode(gif: bytes) -> tuple[list[np.ndarray], list[int]]:
    img = Image.open(io.BytesIO(gif))
    frames, delays = [], []
    for k in range(img.n_frames):
        img.seek(k)
        delays.append(img.info["duration"])
        frames.append(np.asarray(img.convert("RGB")))
    return frames, delays


def _flat_frames(rng: np.random.Generator, width: int, height: int, count: int, noise: float) -> list[np.ndarray]:
    """Blocks of 200 colours (as a stage is drawn), a fraction ``noise`` of pixels
    another of the colours; the first pixels show every colour once (the writer's
    palette is the first frame's colours)."""
    colours = rng.integers(0, 256, size=(200, 3), dtype=np.uint8)
    frames = []
    for _ in range(count):
        blocks = rng.integers(0, 200, size=(height // 8 + 1, width // 16 + 1))
        index = np.repeat(np.repeat(blocks, 8, axis=0), 16, axis=1)[:height, :width]
        speckle = rng.random((height, width)) < noise
        index[speckle] = rng.integers(0, 200, size=int(speckle.sum()))
        index.flat[:200] = np.arange(200)
        frames.append(colours[index])
    return frames


@pytest.mark.parametrize("width, height, noise", [(40, 24, 0.0), (320, 180, 0.05), (1280, 720, 0.3)])
def test_frames_of_at_most_256_colours_come_back_pixel_for_pixel(width, height, noise):
    rng = np.random.default_rng(width)
    frames = _flat_frames(rng, width, height, 3, noise)
    got, delays = _decode(_encode(frames, 250))
    assert delays == [250, 250, 250]
    assert len(got) == 3 and got[0].shape == (height, width, 3)
    for k, (want, have) in enumerate(zip(frames, got)):
        wrong = np.argwhere((want != have).any(axis=2))
        assert not len(wrong), f"frame {k}: {len(wrong)} pixels differ, first at {wrong[0].tolist()}"


def test_other_colours_take_the_nearest_palette_colour():
    rng = np.random.default_rng(7)
    first = _flat_frames(rng, 64, 32, 1, 0.0)[0]
    palette = np.unique(first.reshape(-1, 3), axis=0).astype(int)
    second = np.clip(first.astype(int) + rng.integers(-3, 4, size=first.shape), 0, 255).astype(np.uint8)
    _, have = _decode(_encode([first, second], 100))[0]
    distance = ((second[:, :, None, :].astype(int) - palette[None, None, :, :]) ** 2).sum(axis=3)
    nearest = palette[distance.argmin(axis=2)]
    # (a tie between two palette colours may go either way: compare the distances)
    got_distance = ((second.astype(int) - have.astype(int)) ** 2).sum(axis=2)
    assert (got_distance == distance.min(axis=2)).all(), int((got_distance != distance.min(axis=2)).sum())
    assert {tuple(c) for c in have.reshape(-1, 3)} <= {tuple(c) for c in palette}
    assert nearest.shape == have.shape
