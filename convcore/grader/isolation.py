"""Where a submission runs: inside bubblewrap when this machine has it, else plainly.

bubblewrap (``bwrap``, Debian's package of that name; the sandbox Flatpak is built on)
is used rather than anything written here: it is small, audited, needs no daemon, and
builds the child's world from Linux namespaces in one command. Inside it the child
sees the whole file system read-only, the teacher's home replaced by an empty folder
(and /tmp too; the Python installation, ConvScope's code and the submission's folder
are bound back in, read-only, when they live there),
one writable folder of its own, no network (a namespace with only a loopback that is
down), no other process (its own PID namespace: when the check ends, everything it
started ends with it, however it detached) and an environment of a few variables.

``isolation()`` says which of the two this machine gives; ``wrap(command, ...)`` is
the command to run.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Isolation", "bound_back", "hidden_folders", "isolation", "standins_for", "wrap"]

NOT_ISOLATED = (
    "not isolated: bubblewrap (bwrap) is not available here, so the submission runs as you and can "
    "read and write your files, use the network, and leave processes running that it started in a "
    "new session (its environment is still only a few variables, and the verdict is still the "
    "grader's: apt-get install bubblewrap)"
)
ISOLATED = (
    "bubblewrap: a read-only file system but its own folder, your home hidden, no network, its processes ended with it"
)


@dataclass(frozen=True)
class Isolation:
    bwrap: str | None  # the bwrap executable that works here, or None
    summary: str  # what the submission can and cannot do, for the report

    @property
    def isolated(self) -> bool:
        return self.bwrap is not None


@functools.cache
def isolation() -> Isolation:
    """bubblewrap if it is installed and can make its namespaces here (a container may
    forbid them), tried once per process."""
    found = shutil.which("bwrap")
    if found is None:
        return Isolation(None, NOT_ISOLATED)
    try:
        tried = subprocess.run([found, *_world("/", ()), "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return Isolation(None, NOT_ISOLATED)
    if tried.returncode != 0:
        why = tried.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no reason given"]
        return Isolation(None, f"{NOT_ISOLATED}; bwrap is installed but cannot run here: {why[0]}")
    return Isolation(found, ISOLATED)


def hidden_folders() -> list[str]:
    """Folders replaced by empty ones: every home, and /tmp (the child's own folder and
    what it must read are bound back in)."""
    homes = {os.path.realpath(os.path.expanduser("~")), "/root", "/home", "/tmp"}
    return sorted(h for h in homes if h not in ("", "/") and os.path.isdir(h))


def _needed_paths() -> list[str]:
    """Folders the child must read even when they lie in a hidden home: the Python
    installation and the folder holding convcore. Not the rest of sys.path: its first
    entry is the folder the teacher runs the check from, which may hold the answers."""
    import convcore

    wanted = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        str(Path(convcore.__file__).resolve().parent.parent),
        str(Path(sys.executable).resolve().parent),
    }
    return sorted(p for p in {os.path.realpath(p) for p in wanted} if os.path.isdir(p))


def bound_back(workdir: str, readable: tuple[str, ...]) -> list[str]:
    """The paths bound back in that lie in a hidden folder: the Python installation,
    convcore, ``readable`` (read-only) and ``workdir``."""
    hidden = hidden_folders()
    paths = sorted({os.path.realpath(p) for p in (*_needed_paths(), *readable)})
    if workdir != "/":
        paths.append(workdir)
    return [p for p in paths if any(p == h or p.startswith(h + os.sep) for h in hidden)]


def _world(workdir: str, readable: tuple[str, ...], standins: dict[str, str] | None = None) -> list[str]:
    args = [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]
    hidden = hidden_folders()
    for folder in hidden:
        args += ["--bind", standins[folder], folder] if standins else ["--tmpfs", folder]
    for path in bound_back("/", readable):
        args += ["--ro-bind", path, path]
    if workdir != "/":
        args += ["--bind", workdir, workdir, "--chdir", workdir]
    return args


def standins_for(folder: str) -> dict[str, str]:
    """An empty folder in ``folder`` for each hidden one ({hidden: its stand-in}): bound
    in its place, it keeps what the child writes there for the parent to see
    (``convcore.grader.attempts.left_files``) and goes with ``folder``."""
    made = {}
    for k, hidden in enumerate(hidden_folders()):
        made[hidden] = os.path.join(folder, f"hidden-{k}")
        os.mkdir(made[hidden])
    return made


def wrap(
    command: list[str],
    workdir: str,
    readable: tuple[str, ...],
    env: dict[str, str],
    standins: dict[str, str] | None = None,
) -> list[str]:
    """``command`` run in bubblewrap: ``workdir`` its one writable folder, ``readable``
    folders bound back in (read-only) where they lie in a hidden one, ``env`` its whole
    environment, ``standins`` the folders that stand in for the hidden ones (else empty
    ones in memory). Inherited descriptors (the channel's pipes) pass through."""
    found = isolation().bwrap
    if found is None:
        raise RuntimeError("bubblewrap is not available here")
    setenv = [part for name, value in sorted(env.items()) for part in ("--setenv", name, value)]
    return [found, *_world(workdir, readable, standins), *setenv, "--", *command]
