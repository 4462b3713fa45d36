"""Animations for slides, made by the page in Debian's Chromium: a GIF decoded by Pillow
(an independent decoder: its frame count, size and frame durations) and a WebM video
played by the browser's own <video> (its size and duration); typed values the dialog
cannot use are refused with a message naming the field and the numbers."""

from __future__ import annotations

import base64
import io

import pytest
from test_browser_helpers import choose_preset, require_chromium, wait_until

pytestmark = pytest.mark.browser

require_chromium()


def _make(page, **fields) -> bytes:
    page.click("#export-menu > summary")
    page.click("#export-anim")
    for name, value in fields.items():
        sel = f'#anim-form [name="{name}"]'
        if name in ("size", "format"):
            page.select_option(sel, value)
        else:
            page.fill(sel, str(value))
    with page.expect_download(timeout=60_000) as dl:
        page.click("#anim-make")
    path = dl.value.path()
    page.click("#anim-close")
    return open(path, "rb").read()


def test_a_gif_and_a_webm_of_a_step_range_decode_with_their_frames_size_and_duration(open_page):
    from PIL import Image

    page = open_page(viewport=(1366, 768)).page
    choose_preset(page, "cs231n")
    page.evaluate("window.convscope.seek(30)")  # a backward step of its 38
    gif = _make(page, **{"from": 3, "to": 8, "size": "1280x720", "fps": 5, "format": "gif"})
    img = Image.open(io.BytesIO(gif))
    assert img.format == "GIF" and img.size == (1280, 720)
    durations = []
    for k in range(img.n_frames):
        img.seek(k)
        durations.append(img.info["duration"])
    assert img.n_frames == 6 and durations == [200] * 6, (img.n_frames, durations)
    # the frames differ (each is its own step) and the page is back at its step
    img.seek(0)
    first = img.convert("RGB").tobytes()
    img.seek(5)
    assert img.convert("RGB").tobytes() != first
    assert page.evaluate("window.convscope.step") == 30

    webm = _make(page, **{"from": 1, "to": 8, "size": "1920x1080", "fps": 5, "format": "webm"})
    assert webm[:4] == b"\x1a\x45\xdf\xa3", "an EBML (WebM) file"
    # played in a blank page of the same browser (the app's own policy allows no media)
    player = page.context.new_page()
    got = player.evaluate(
        """async (b64) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const v = document.createElement('video');
          v.muted = true;
          v.src = URL.createObjectURL(new Blob([bytes], {type: 'video/webm'}));
          await new Promise((r, e) => { v.onloadedmetadata = r; v.onerror = () => e(new Error('video error')); });
          // (a recorded WebM has no duration in its header: seeking past the end finds it)
          if (!Number.isFinite(v.duration)) {
            v.currentTime = 1e6;
            await new Promise((r) => { v.ondurationchange = () => Number.isFinite(v.duration) && r(); setTimeout(r, 3000); });
          }
          return {w: v.videoWidth, h: v.videoHeight, d: v.duration};
        }""",
        base64.b64encode(webm).decode("ascii"),
    )
    player.close()
    assert (got["w"], got["h"]) == (1920, 1080), got
    assert abs(got["d"] - 1.6) < 0.05, got  # 8 steps at 5 per second, however long each took to draw


def test_the_dialog_refuses_what_it_cannot_make_naming_the_field(open_page):
    page = open_page(viewport=(1366, 768)).page
    choose_preset(page, "d2l")
    total = page.evaluate("window.convscope.total")
    page.click("#export-menu > summary")
    page.click("#export-anim")
    page.fill('#anim-form [name="from"]', "0")
    page.click("#anim-make")
    wait_until(page, "document.getElementById('anim-note').textContent.length > 0")
    assert page.inner_text("#anim-note") == f'from step must be a whole number from 1 to {total}, not "0"'
    page.fill('#anim-form [name="from"]', "5")
    page.fill('#anim-form [name="to"]', "2")
    page.click("#anim-make")
    wait_until(page, "document.getElementById('anim-note').textContent.includes('comes before')")
    assert page.inner_text("#anim-note") == "to step (2) comes before from step (5)"
    page.fill('#anim-form [name="to"]', "6")
    page.fill('#anim-form [name="fps"]', "100")
    page.click("#anim-make")
    wait_until(page, "document.getElementById('anim-note').textContent.includes('steps per second')")
    assert 'steps per second must be from 0.5 to 30, not "100"' == page.inner_text("#anim-note")


def test_each_frame_is_laid_out_for_it_with_its_whole_equation_and_legible_digits(open_page, base_url):
    """CS231n's backward phase at 1280x720, recorded by the page's recorder (the one the
    dialog and `convscope export anim.gif` call): every frame's equation, as wrapped, is the
    trace's step text whole (the server's document); the stage is laid out for the frame
    and drawn at its own size (no shrinking), its numbers at 16 px or more in the page it
    drew, with the tags of what a step added; the frames decode (Pillow) at 1280x720, one
    per step, each unlike the one before; the page is back at its step and size after."""
    from PIL import Image
    from test_browser_helpers import server_document

    from convscope.traces.presets import PRESETS

    doc = server_document(base_url, PRESETS["cs231n"].config)
    backward = next(p for p in doc["phases"] if p["name"] == "backward")
    first, last = backward["start"], backward["stop"] - 1
    page = open_page(viewport=(1366, 768)).page
    choose_preset(page, "cs231n")
    page.evaluate("window.convscope.seek(5)")
    room = page.evaluate("window.convscope.state.room")
    encoded = page.evaluate(
        "(a) => window.convscope.recordAnimation(a)",
        {"from": first, "to": last, "size": {"width": 1280, "height": 720}, "fps": 5, "format": "gif"},
    )
    frames = page.evaluate("window.convscope.recordedFrames()")
    assert [f["step"] for f in frames] == list(range(first, last + 1))
    for f in frames:
        want = doc["events"][f["step"]]["text"]
        assert "".join(f["lines"]) == want, (f["step"], f["lines"], want)
        assert not any("…" in line for line in f["lines"]), f["lines"]
        assert f["scale"] == 1, f"step {f['step']}: the stage was shrunk into the frame ({f['scale']:.2f})"
        assert f["cellFont"] >= 16, f"step {f['step']}: digits at {f['cellFont']} px"
        assert f["tags"] > 0, f"step {f['step']}: no tags of what the step added"
    # (the equation of a fused backward step is longer than a line at 1280 px: wrapped, not cut)
    assert max(len(f["lines"]) for f in frames) >= 2
    img = Image.open(io.BytesIO(base64.b64decode(encoded)))
    assert img.size == (1280, 720) and img.n_frames == len(frames)
    pixels = []
    for k in range(img.n_frames):
        img.seek(k)
        pixels.append(img.convert("RGB").tobytes())
    same = [k for k in range(1, len(pixels)) if pixels[k] == pixels[k - 1]]
    assert not same, f"frames {same} repeat the frame before"
    # the stage drawn: its right fifth holds figures (the frame is used, not shrunk into)
    img.seek(5)
    right = img.convert("RGB").crop((1024, 200, 1280, 600))
    assert len(right.getcolors(maxcolors=1 << 20)) > 8, "the right fifth of the frame is empty"
    assert page.evaluate("window.convscope.step") == 5
    assert page.evaluate("window.convscope.state.recording") is None
    # (the stage is back in the page: its room as before)
    wait_until(
        page,
        f"window.convscope.state.room.width === {room['width']} && window.convscope.state.room.height === {room['height']}",
    )
    assert not page.evaluate("document.getElementById('stage').classList.contains('recording')")
