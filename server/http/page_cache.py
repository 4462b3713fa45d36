"""How browsers keep the page's files.

index.html links its modules, style and images under ``/v/<version>/``, where the
version names the contents of the page's files: an upgrade, or a file edited while the
server runs, makes a new one. A file asked for under the current version is kept a
year and never asked for again (``immutable``), so a reload of a page already seen is
one request, not 75; index.html, a file under another version and the unversioned
paths are asked for again on each load (``no-cache``), so a browser never runs a mix of
an old page's modules and a new one's.

The version is a hash of the files' paths and contents. Each worker reads it once at
start, and again when a file's path, size or modification time has changed, looked at
no more than once a second: each worker names the same files the same, and a file
edited in place is not kept under the old name for more than a second.
"""

from __future__ import annotations

import hashlib
import re
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["ASK_AGAIN", "KEEP", "VERSIONED", "PageVersion", "linked_index"]

VERSIONED = "/v/"  # the prefix of the page's files under a version: /v/<version>/<path>
KEEP = "public, max-age=31536000, immutable"
ASK_AGAIN = "no-cache"
LOOK_EVERY_S = 1.0  # how often the files' sizes and times are looked at, at most

# a src or href attribute of index.html naming a path relative to the page's folder
_LINK = re.compile(r'(?<![\w-])(src|href)="([A-Za-z0-9_][A-Za-z0-9_./-]*)"')


def _stamps(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """(path, size, modification time) of each file under ``folder``, in path order; a
    file removed while this looks is left out."""
    stamps = []
    for path in sorted(folder.rglob("*")):
        try:
            found = path.stat()
        except OSError:
            continue
        if stat.S_ISREG(found.st_mode):  # (from the one stat: no second look per file)
            stamps.append((path.relative_to(folder).as_posix(), found.st_size, found.st_mtime_ns))
    return tuple(stamps)


def _contents_hash(folder: Path, stamps: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _, _ in stamps:
        try:
            data = (folder / name).read_bytes()
        except OSError:
            continue
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:16]


class PageVersion:
    """The version of the files under ``folder`` (module notes): ``current()``, 16 hex
    digits."""

    def __init__(self, folder: Path, clock: Callable[[], float] = time.monotonic):
        self.folder, self.clock = folder, clock
        self._lock = threading.Lock()
        self._stamps = _stamps(folder)
        self._version = _contents_hash(folder, self._stamps)
        self._looked = clock()

    def current(self) -> str:
        if self.clock() - self._looked < LOOK_EVERY_S:
            return self._version
        with self._lock:
            if self.clock() - self._looked >= LOOK_EVERY_S:
                stamps = _stamps(self.folder)
                if stamps != self._stamps:
                    self._version = _contents_hash(self.folder, stamps)
                    self._stamps = stamps
                self._looked = self.clock()
        return self._version


def linked_index(html: str, folder: Path, version: str) -> str:
    """``html`` (index.html) with each link to a file of ``folder`` under
    ``/v/<version>/``; links to anything else (anchors, other sites) unchanged."""

    def link(match: re.Match[str]) -> str:
        attribute, target = match.groups()
        if ".." in target.split("/") or not (folder / target).is_file():
            return match.group(0)
        return f'{attribute}="{VERSIONED}{version}/{target}"'

    return _LINK.sub(link, html)
