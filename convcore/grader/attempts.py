"""What a submission tried beyond computing its arrays, said in its report.

The isolation blocks these attempts (``convcore.grader.isolation``); this module makes
them seen, where that is cheap:

- the parent looks, once the child has ended, at the empty stand-ins that replaced the
  homes and /tmp (``left_files``): whatever is there was written outside the
  submission's own folder;
- the parent lists, before it ends the child, the processes the submission left
  running (``left_processes``): a detached sleeper among them;
- the parent finds the child's environment (a canary variable, ``CANARY``) in what the
  child answered: the environment was read into the output;
- the child records, with an audit hook (``sys.addaudithook``, which code cannot
  remove), each file it opened for writing outside its folder and each connection it
  tried (``audit_hook``), and sends them with its answers: the attempts the read-only
  file system and the missing network refused, which leave nothing to look at.

Each attempt is a pair (kind, detail); ``said`` turns them into the report's lines,
e.g. "tried to write ~/.bashrc: blocked (it went to an empty stand-in home, discarded)".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "CANARY",
    "MAX_ATTEMPTS",
    "audit_hook",
    "checked_attempts",
    "left_files",
    "left_processes",
    "said",
]

CANARY = "CONVSCOPE_SANDBOX"  # the child's variable whose random value marks its environment
MAX_ATTEMPTS = 20  # attempts kept per submission (and per reply)
MAX_DETAIL = 200  # characters of a path, an address or a command line
KINDS = ("write", "connect", "process", "environment")

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _writes(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and flags >= 0 and bool(flags & _WRITE_FLAGS)


def audit_hook(own: str) -> tuple[Callable[[str, tuple], None], list[tuple[str, str]]]:
    """The child's hook and the list it fills with ("write", path) for every file opened
    for writing outside ``own`` (its folder) and ("connect", address) for every
    connection tried; at most MAX_ATTEMPTS of them."""
    seen: list[tuple[str, str]] = []
    own = os.path.realpath(own)

    def note(kind: str, detail: str) -> None:
        if len(seen) < MAX_ATTEMPTS and (kind, detail) not in seen:
            seen.append((kind, detail[:MAX_DETAIL]))

    def hook(event: str, args: tuple) -> None:
        if event == "open" and len(args) >= 3 and isinstance(args[0], (str, bytes)) and _writes(args[1], args[2]):
            path = os.path.realpath(os.fsdecode(args[0]))
            if path != os.devnull and path != own and not path.startswith(own + os.sep):
                note("write", path)
        elif event == "socket.connect" and len(args) >= 2:
            address = args[1]
            if isinstance(address, tuple) and len(address) >= 2:
                note("connect", f"{address[0]}:{address[1]}")
            elif not isinstance(address, (str, bytes)):  # (a Unix socket is a file, and the files are read-only)
                note("connect", repr(address))

    return hook, seen


def checked_attempts(value: Any) -> list[tuple[str, str]]:
    """The attempts a child sent (a list of [kind, detail]), checked and bounded; [] when
    the field is not that."""
    if not isinstance(value, list):
        return []
    return [
        (item[0], item[1][:MAX_DETAIL])
        for item in value[:MAX_ATTEMPTS]
        if isinstance(item, list) and len(item) == 2 and item[0] in KINDS and isinstance(item[1], str)
    ]


def _ancestors(path: str) -> set[str]:
    parts = Path(path).parts
    return {str(Path(*parts[:k])) for k in range(1, len(parts) + 1)}


def left_files(standins: dict[str, str], bound: list[str]) -> list[tuple[str, str]]:
    """("write", path) for each file, and each empty folder, left in the stand-ins
    ({hidden folder: its stand-in}) once the child has ended, by the path the submission
    wrote; not the folders bubblewrap made there to bind the ``bound`` paths back in, or
    a hidden folder within another."""
    made = set().union(set(), *(_ancestors(p) for p in (*bound, *standins)))  # (nested hidden ones too)
    found: list[tuple[str, str]] = []
    for hidden, standin in sorted(standins.items()):
        for folder, dirs, files in os.walk(standin):
            dirs.sort()
            left = sorted(files) + ([] if dirs or files or folder == standin else [""])  # ("": an empty folder)
            for name in left:
                path = os.path.normpath(os.path.join(hidden, os.path.relpath(os.path.join(folder, name), standin)))
                if path not in made:
                    found.append(("write", path))
    return found[:MAX_ATTEMPTS]


def _processes() -> dict[int, tuple[int, str]]:
    """{pid: (parent pid, command line)} of every process this one can see."""
    table: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        table[int(entry)] = (parent, command.strip())
    return table


def _inner_pid(pid: int) -> int | None:
    """``pid``'s number in its innermost PID namespace."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


def left_processes(root: int, isolated: bool) -> list[tuple[int, str]]:
    """(pid, command line) of the processes running under ``root`` (the child the grader
    started) that the grader did not start: under bubblewrap all but bwrap and the
    grader's child (1 and 2 in its PID namespace), else all below ``root``."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        if isolated and _inner_pid(pid) in (1, 2, None):
            continue
        found.append((pid, table[pid][1][:MAX_DETAIL]))
    return sorted(found)


def _shown(path: str, home: str) -> str:
    return "~" + path[len(home) :] if home and (path == home or path.startswith(home + os.sep)) else path


def _within(path: str, folders: list[str]) -> str | None:
    """The innermost of ``folders`` holding ``path``."""
    return max((f for f in folders if path == f or path.startswith(f + os.sep)), key=len, default=None)


def said(attempts: list[tuple[str, str]], isolated: bool, hidden: list[str], bound: list[str], home: str) -> list[str]:
    """The report's lines for ``attempts`` (deduplicated, in order): what was tried and
    what became of it. ``hidden``: the folders the isolation replaced by stand-ins;
    ``bound``: the paths in them bound back in (read-only but the submission's own
    folder); ``home``: the teacher's home, shown as ~."""
    lines: list[str] = []
    for kind, detail in attempts:
        if kind == "write":
            where = None if _within(detail, bound) else _within(detail, hidden)
            if not isolated:
                fate = "not blocked: this check was not isolated"
            elif where is not None:
                fate = f"blocked (it went to an empty stand-in for {_shown(where, home)}, discarded)"
            else:
                fate = "blocked (read-only)"
            line = f"tried to write {_shown(detail, home)}: {fate}"
        elif kind == "connect":
            line = f"tried to connect to {detail}: " + ("blocked (no network)" if isolated else "not blocked")
        elif kind == "process":
            line = f"left a process running ({detail}): ended with the check"
        else:
            line = "read its environment into its output: " + detail
        if line not in lines:
            lines.append(line)
    return lines[:MAX_ATTEMPTS]
