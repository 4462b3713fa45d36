"""The page's own QR code (static/js/encode/qr.js, follow mode's join link) read by an
independent decoder (zxing-cpp): for links of every length up to version 10 and for
every mask, the code reads back as the link, at level M, in the smallest version segno
(an independent encoder) picks; with modules damaged its error correction still reads
it, and the mask the page picks has the lowest ISO penalty of the eight."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import os

import numpy as np
import pytest
import segno  # the test extra: an independent QR encoder
import zxingcpp  # the test extra: an independent QR decoder

QR_JS = Path(__file__).resolve().parents[1] / "static" / "js" / "encode" / "qr.js"
NODE = shutil.which("node")
if NODE is None and os.environ.get("CI") == "true":
    raise RuntimeError("the QR tests need node (Debian's nodejs; make test installs it)")
pytestmark = pytest.mark.skipif(NODE is None, reason="node runs the page's modules (Debian's nodejs; make test installs it)")


def _page_codes(cases: list[dict]) -> list[dict]:
    script = (
        f"import {{ qrMatrix, penalty }} from {json.dumps(QR_JS.as_uri())};\n"
        "const cases = JSON.parse(process.argv[1]);\n"
        "console.log(JSON.stringify(cases.map((c) => { const q = qrMatrix(c.text, {mask: c.mask});"
        " const all = [0,1,2,3,4,5,6,7].map((k) => penalty(qrMatrix(c.text, {mask: k}).dark, q.size));"
        " return {version: q.version, mask: q.mask, size: q.size, dark: Array.from(q.dark), penalties: all}; })));\n"
    )
    out = subprocess.run([NODE, "--input-type=module", "-e", script, json.dumps(cases)], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout)


def _read(dark: list[int], size: int) -> list:
    m = np.array(dark, dtype=np.uint8).reshape(size, size)
    img = np.pad((1 - m) * 255, 4, constant_values=255).repeat(5, 0).repeat(5, 1).astype(np.uint8)
    return zxingcpp.read_barcodes(img)


LINKS = [f"http://192.168.1.{n}:8000/?follow={'ABCDEFGH'[: n % 8 + 1]}" + "x" * n for n in (0, 3, 9, 17, 30, 60, 100, 150, 170)]


def test_every_mask_reads_back_as_the_link_in_segnos_version():
    cases = [{"text": t, "mask": m} for t in LINKS for m in range(8)]
    for case, got in zip(cases, _page_codes(cases)):
        want = segno.make(case["text"], error="m", mode="byte", boost_error=False, micro=False)
        assert (got["version"], got["size"]) == (want.version, len(want.matrix)), case
        read = _read(got["dark"], got["size"])
        assert [r.text for r in read] == [case["text"]], case
        assert read[0].ec_level == "M", read[0].ec_level


def test_damaged_modules_are_corrected_and_the_chosen_mask_has_the_lowest_penalty():
    cases = [{"text": t, "mask": None} for t in LINKS]
    rng = np.random.default_rng(0)
    for case, got in zip(cases, _page_codes(cases)):
        assert got["penalties"][got["mask"]] == min(got["penalties"]), case
        size = got["size"]
        dark = np.array(got["dark"]).reshape(size, size)
        # flip six modules in the lower right data area (a few codewords, within level M's reach)
        for r, c in zip(rng.integers(size - 8, size - 1, 6), rng.integers(size - 8, size - 1, 6)):
            dark[r, c] ^= 1
        assert [r.text for r in _read(dark.ravel().tolist(), size)] == [case["text"]], case


def test_too_long_is_refused_with_the_numbers():
    script = f"import {{ qrMatrix }} from {json.dumps(QR_JS.as_uri())}; try {{ qrMatrix('x'.repeat(300)); }} catch (e) {{ console.log(e.message); }}"
    out = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "300 bytes do not fit a QR code up to version 10 (213 bytes)"
