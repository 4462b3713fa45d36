"""Where the page lives: ``convscope/static`` inside an installed wheel (pyproject
force-includes the checkout's ``static/`` there), else the checkout's ``static/``
folder (an editable install)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["find_static_dir"]


def find_static_dir() -> Path | None:
    """The folder holding the page (index.html and its assets), or None if absent."""
    try:
        packaged = Path(str(resources.files(__package__.rpartition(".")[0]) / "static"))
    except (ModuleNotFoundError, TypeError):
        packaged = None
    checkout = Path(__file__).resolve().parents[2] / "static"
    for folder in (packaged, checkout):
        if folder is not None and folder.is_dir():
            return folder.resolve()
    return None
