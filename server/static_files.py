"""Where the page lives: ``server/static`` inside an installed wheel (pyproject
force-includes the checkout's ``static/`` there), else the checkout's ``static/``
folder (editable install or running from the source tree)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["find_static_dir"]


def find_static_dir() -> Path | None:
    """The folder holding the page (index.html and its assets), or None if absent."""
    try:
        packaged = Path(str(resources.files("server") / "static"))
    except (ModuleNotFoundError, TypeError):
        packaged = None
    checkout = Path(__file__).resolve().parent.parent / "static"
    for folder in (packaged, checkout):
        if folder is not None and folder.is_dir():
            return folder.resolve()
    return None
