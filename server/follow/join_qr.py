"""The join link as a QR code the class scans from the projector: an SVG drawn by segno.

Level M at least (segno raises the level when the same version holds more), a quiet
zone of four modules as the standard asks, dark on white whatever the page's theme,
and no fixed size: the page sizes it (a viewBox, no width or height)."""

from __future__ import annotations

import io

import segno

__all__ = ["MAX_LINK_CHARS", "join_qr_svg"]

# a join link is the public address (at most 200 characters, settings.public_url) or the
# Host the request came with (one of the allowed names), plus "?follow=" and the code
MAX_LINK_CHARS = 400


def join_qr_svg(link: str) -> bytes:
    """The SVG document of the QR code of ``link`` (at most MAX_LINK_CHARS characters)."""
    if len(link) > MAX_LINK_CHARS:
        raise ValueError(f"a join link has at most {MAX_LINK_CHARS} characters; this one has {len(link)}")
    code = segno.make(link, error="m", micro=False)
    out = io.BytesIO()
    code.save(
        out,
        kind="svg",
        border=4,
        dark="#000",
        light="#fff",
        xmldecl=False,
        omitsize=True,
        title=f"QR code of {link}",
        svgclass="join-qr-code",
        lineclass=None,
    )
    return out.getvalue()
