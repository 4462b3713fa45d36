"""How browsers keep the page's files.

index.html links its modules, style and images under ``/v/<version>/``, where the
version names this set of files (each one's path, size and modification time): an
upgrade, or a file edited while the server runs, makes a new one. A file asked for under
the current version is kept a year and never asked for again (``immutable``), so a
reload of a page already seen is one request, not 75; index.html, a file under another
version and the unversioned paths are asked for again on each load (``no-cache``), so
a browser never runs a mix of an old page's modules and a new one's.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

__all__ = ["ASK_AGAIN", "KEEP", "VERSIONED", "linked_index", "page_version"]

VERSIONED = "/v/"  # the prefix of the page's files under a version: /v/<version>/<path>
KEEP = "public, max-age=31536000, immutable"
ASK_AGAIN = "no-cache"

# a src or href attribute of index.html naming a path relative to the page's folder
_LINK = re.compile(r'\b(src|href)="([A-Za-z0-9_][A-Za-z0-9_./-]*)"')


def page_version(folder: Path) -> str:
    """A name for the files under ``folder`` as they are now: 16 hex digits from each
    file's path, size and modification time (one stat a file, no reading)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.relative_to(folder).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def linked_index(html: str, folder: Path, version: str) -> str:
    """``html`` (index.html) with each link to a file of ``folder`` under
    ``/v/<version>/``; links to anything else (anchors, other sites) unchanged."""

    def link(match: re.Match[str]) -> str:
        attribute, target = match.groups()
        if ".." in target.split("/") or not (folder / target).is_file():
            return match.group(0)
        return f'{attribute}="{VERSIONED}{version}/{target}"'

    return _LINK.sub(link, html)
