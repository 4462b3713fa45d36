"""Where the checked code raised: its own last line, and what the names on it held.

A student whose backward raises ``ValueError: cannot reshape array of size 1 into
shape (3,3)`` needs the line that did it and the shapes it met there, not only the
message: ``crash_site`` walks the traceback to the last frame that is not numpy's,
Python's or convcore's (the student's file, or a notebook cell), and reads the
values of the names written on that line from the frame's locals: arrays by shape
(and values when they are small), numbers and short tuples as they are.
"""

from __future__ import annotations

import functools
import linecache
import os
import re
import sysconfig
from typing import Any

import numpy as np

__all__ = ["crash_site", "format_site"]

MAX_NAMES = 8
MAX_TEXT = 160
_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")


@functools.cache  # the folders do not move while a process runs
def _library_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {
        paths.get("stdlib"),
        paths.get("platstdlib"),
        paths.get("purelib"),
        paths.get("platlib"),
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        os.path.dirname(np.__file__),
    }
    return tuple(os.path.realpath(f) + os.sep for f in folders if f)


@functools.lru_cache(maxsize=1024)  # a traceback's frames are mostly the same few files
def _is_theirs(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return False
    if filename.startswith("<"):  # a notebook cell, an exec'd string
        return True
    real = os.path.realpath(filename)
    return not real.startswith(_library_folders())


def _describe(value: Any) -> str | None:
    if isinstance(value, np.ndarray):
        text = f"shape {value.shape}"
        if value.size <= 9:
            text += f", {np.array2string(value, separator=', ', threshold=9)}".replace("\n", "")
        return text[:MAX_TEXT]
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return repr(value.item() if isinstance(value, np.generic) else value)
    if (
        isinstance(value, (tuple, list))
        and len(value) <= 6
        and all(isinstance(v, (int, float, np.integer, np.floating, np.ndarray)) for v in value)
    ):
        parts = [f"array of shape {v.shape}" if isinstance(v, np.ndarray) else repr(v) for v in value]
        return (
            f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"
            if isinstance(value, tuple)
            else f"[{', '.join(parts)}]"
        )[:MAX_TEXT]
    if isinstance(value, dict) and len(value) <= 6 and all(isinstance(k, str) for k in value):
        return repr({k: v for k, v in value.items() if isinstance(v, (int, float, str, tuple))})[:MAX_TEXT]
    return None


def crash_site(exc: BaseException) -> dict[str, Any] | None:
    """{file, line, source, values: {name: description}} of the last frame of the
    checked code in ``exc``'s traceback, or None when every frame is a library's."""
    tb = exc.__traceback__
    site = None
    while tb is not None:
        if _is_theirs(tb.tb_frame.f_code.co_filename):
            site = tb
        tb = tb.tb_next
    if site is None:
        return None
    frame, line = site.tb_frame, site.tb_lineno
    filename = frame.f_code.co_filename
    source = linecache.getline(filename, line, frame.f_globals).strip()
    values: dict[str, str] = {}
    for name in dict.fromkeys(_NAME.findall(source)):
        if name in frame.f_locals and len(values) < MAX_NAMES:
            described = _describe(frame.f_locals[name])
            if described is not None:
                values[name] = described
    return {
        "file": os.path.basename(filename) if not filename.startswith("<") else filename,
        "line": line,
        "source": source[: MAX_TEXT * 2],
        "values": values,
    }


def format_site(site: dict[str, Any]) -> list[str]:
    """The crash site as lines a person reads: ``at file.py:42: <source>`` and the
    names' values."""
    lines = [f"at {site['file']}:{site['line']}: {site['source']}"]
    lines += [
        f"  {name}: {value}" if value.startswith("shape") else f"  {name} = {value}"
        for name, value in site["values"].items()
    ]
    return lines
