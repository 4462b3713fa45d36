"""Every file of this repository that a comment, docstring or document names by its path
(``static/js/io/classroom.js``, ``docs/service.md``, …) exists: a module moved or
renamed leaves no pointer to where it was."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = (".py", ".js", ".mjs", ".md", ".html", ".css", ".toml")
# a path from one of the repository's own folders, ending in a file name (no globs)
NAMED = re.compile(
    r"(?<![\w/.-])((?:static|convcore|server|tests|bench|docs|\.ci)/[\w./-]*[\w-]"
    r"\.(?:py|js|mjs|md|html|css|txt|json|svg|png|gif))\b"
)


def _tracked() -> list[str]:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True)
    return [f for f in listed.stdout.split() if f.endswith(SUFFIXES) or f in ("Makefile", ".ci/run")]


def test_every_path_named_in_the_repository_exists():
    named, missing = 0, []
    for name in _tracked():
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        for match in NAMED.finditer(text):
            named += 1
            if not (ROOT / match[1]).exists():
                line = text.count("\n", 0, match.start()) + 1
                missing.append(f"{name}:{line} names {match[1]}")
    assert named > 300, f"only {named} paths named: the pattern no longer finds them"
    assert not missing, "\n".join(missing)
