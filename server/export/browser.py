"""A headless Chromium driven over its DevTools pipe, with no dependency.

``chromium --headless --remote-debugging-pipe`` reads DevTools protocol commands from
file descriptor 3 and writes replies and events to file descriptor 4, each message one
JSON text ended by a NUL byte. This module starts the browser in a session of its own
(so that one signal reaches it and every process it forks), sends commands and waits
for their replies under a deadline, and always ends the browser: on success, on an
error, on a timeout and on Ctrl-C (``Headless`` is a context manager).

Which browser: ``$CONVSCOPE_CHROMIUM`` if set, else Debian's ``/usr/bin/chromium``,
else the first of chromium, chromium-browser, google-chrome (-stable) and chrome on
the PATH.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["BrowserError", "BrowserMissing", "Headless", "find_browser"]

DEBIAN_CHROMIUM = "/usr/bin/chromium"
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
# (the DevTools pipe's file descriptors, fixed by Chromium)
COMMANDS_FD, REPLIES_FD = 3, 4


class BrowserMissing(RuntimeError):
    """No Chromium or Chrome to run: the message says what to install or set."""


class BrowserError(RuntimeError):
    """The browser failed, left, or did not answer in time."""


def find_browser() -> str:
    """The browser's executable; BrowserMissing says what to install or set."""
    named = os.environ.get("CONVSCOPE_CHROMIUM")
    if named:
        found = named if Path(named).is_file() else shutil.which(named)
        if not found:
            raise BrowserMissing(
                f"CONVSCOPE_CHROMIUM={named} names no program: set it to a Chromium or Chrome executable"
            )
        return found
    if Path(DEBIAN_CHROMIUM).is_file():
        return DEBIAN_CHROMIUM
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise BrowserMissing(
        "animations are drawn by the page in a headless Chromium or Chrome, and none was found: "
        "install one (Debian, Ubuntu: apt-get install chromium) or set CONVSCOPE_CHROMIUM to its executable"
    )


def _end_group(group: int, wait: float = 5.0) -> None:
    """SIGKILL whatever is left of a process group, and wait until none of it is left."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.02)


class Headless:
    """A headless browser on a DevTools pipe, ended when the ``with`` block leaves.

    timeout : seconds for everything done inside the block (start, every command)
    """

    def __init__(self, executable: str, *, timeout: float = 120.0):
        self.executable = executable
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.pid: int | None = None
        self._ids = 0
        self._buffer = b""
        self._folder: tempfile.TemporaryDirectory | None = None
        self._to_browser = self._from_browser = -1

    # ---- the process ---------------------------------------------------------------

    def __enter__(self) -> Headless:
        self._folder = tempfile.TemporaryDirectory(prefix="convscope-chromium-")
        try:
            self._spawn(Path(self._folder.name))
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def folder(self) -> Path:
        """A folder of this browser's own, removed with it (its profile is inside)."""
        assert self._folder is not None
        return Path(self._folder.name)

    def _spawn(self, folder: Path) -> None:
        commands_r, commands_w = os.pipe()
        replies_r, replies_w = os.pipe()
        args = [
            self.executable,
            "--headless",
            "--remote-debugging-pipe",
            f"--user-data-dir={folder / 'profile'}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--mute-audio",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            *(["--no-sandbox"] if os.geteuid() == 0 else []),  # (Chromium refuses its sandbox to root)
            "about:blank",
        ]
        log = str(folder / "browser.log")
        actions = [
            (os.POSIX_SPAWN_DUP2, commands_r, COMMANDS_FD),
            (os.POSIX_SPAWN_DUP2, replies_w, REPLIES_FD),
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ]
        try:
            # setsid: its own session and process group, which close() ends as one
            self.pid = os.posix_spawn(
                self.executable,
                args,
                os.environ,
                file_actions=actions,
                setsid=True,
                setsigdef=(signal.SIGPIPE, signal.SIGINT),
            )
        except OSError as exc:
            raise BrowserError(f"could not start {self.executable}: {exc}") from exc
        finally:
            os.close(commands_r)
            os.close(replies_w)
        self._to_browser, self._from_browser = commands_w, replies_r

    def log_tail(self, lines: int = 5) -> str:
        """The browser's last lines of output (for an error message)."""
        try:
            text = (self.folder / "browser.log").read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    def alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            done = self.pid
        if done:
            self.pid = None
        return self.pid is not None

    def close(self) -> None:
        """End the browser and every process of its group, and remove its folder."""
        for fd in (self._to_browser, self._from_browser):
            if fd >= 0:
                os.close(fd)  # (Chromium also leaves when its pipe closes)
        self._to_browser = self._from_browser = -1
        if self.pid is not None:
            group = self.pid
            for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(group, sig)
                except ProcessLookupError:
                    break
                end = time.monotonic() + wait
                while self.alive() and time.monotonic() < end:
                    time.sleep(0.02)
                if not self.alive():
                    break
            if self.alive():
                os.waitpid(self.pid, 0)
                self.pid = None
            _end_group(group)
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    # ---- the protocol --------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """Send one command and wait for its reply; its result. Events are let go."""
        self._ids += 1
        message: dict[str, Any] = {"id": self._ids, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode("utf-8") + b"\0"
        while data:
            self._wait(self._to_browser, writing=True, what=method)
            try:
                data = data[os.write(self._to_browser, data) :]
            except BrokenPipeError:
                raise self._gone(method) from None
        while True:
            reply = self._read(method)
            if reply.get("id") == self._ids:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message', reply['error'])}")
                return reply.get("result", {})

    def _read(self, what: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            self._wait(self._from_browser, writing=False, what=what)
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise self._gone(what)
            self._buffer += chunk
        text, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(text)

    def _wait(self, fd: int, *, writing: bool, what: str) -> None:
        left = self.deadline - time.monotonic()
        ready = select.select([], [fd], [], max(0.0, left)) if writing else select.select([fd], [], [], max(0.0, left))
        if not any(ready):
            raise BrowserError(
                f"the browser did not finish in {self.timeout:.0f} s (at {what}); try --timeout with more seconds"
            )

    def _gone(self, what: str) -> BrowserError:
        tail = self.log_tail()
        return BrowserError(f"the browser left during {what}" + (f"; it said:\n{tail}" if tail else ""))
