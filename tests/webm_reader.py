"""A small reader (no tests) of WebM files for the export tests and bench/export.py:
EBML elements by ID path, the video track's size, the count of frames (SimpleBlocks).
Written from the Matroska element table, apart from the page's muxer (js/encode/webm.js)."""

from __future__ import annotations

from collections.abc import Iterator

EBML, DOC_TYPE = 0x1A45DFA3, 0x4282
SEGMENT, TRACKS, TRACK_ENTRY, VIDEO, PIXEL_WIDTH, PIXEL_HEIGHT = 0x18538067, 0x1654AE6B, 0xAE, 0xE0, 0xB0, 0xBA
CLUSTER, SIMPLE_BLOCK = 0x1F43B675, 0xA3


def elements(data: bytes, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int, int]]:
    """(id, payload start, payload end) of each EBML element in data[start:end]."""
    at, end = start, len(data) if end is None else end
    while at < end:
        width = 9 - data[at].bit_length()  # an ID's length: its leading zero bits + 1
        ident = int.from_bytes(data[at : at + width], "big")
        at += width
        size_width = 9 - data[at].bit_length()
        size = int.from_bytes(data[at : at + size_width], "big") & ((1 << (7 * size_width)) - 1)
        at += size_width
        yield ident, at, at + size
        at += size


def find(data: bytes, path: list[int]) -> bytes:
    """The payload of the first element at an ID path (KeyError when there is none)."""
    start, end = 0, len(data)
    for ident in path:
        found = next(((s, e) for i, s, e in elements(data, start, end) if i == ident), None)
        if found is None:
            raise KeyError(f"no element {ident:#x} on the path {[hex(p) for p in path]}")
        start, end = found
    return data[start:end]


def video_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the first video track."""
    video = [SEGMENT, TRACKS, TRACK_ENTRY, VIDEO]
    return int.from_bytes(find(data, video + [PIXEL_WIDTH]), "big"), int.from_bytes(
        find(data, video + [PIXEL_HEIGHT]), "big"
    )


def frame_count(data: bytes) -> int:
    """The SimpleBlocks of every cluster: one a frame."""
    _, start, end = next(e for e in elements(data) if e[0] == SEGMENT)
    return sum(
        sum(1 for i, _, _ in elements(data, s, e) if i == SIMPLE_BLOCK)
        for ident, s, e in elements(data, start, end)
        if ident == CLUSTER
    )
