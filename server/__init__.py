"""ConvScope's web service, installed as the package ``convscope`` (the checkout's
``server/`` folder; pyproject.toml maps it): the FastAPI app
(``convscope.app.create_app``), its schemas, routes, settings, streaming, the command
line (``convscope``) and the notebook player (``from convscope import show``).

Every module here imports its siblings relatively, so the folder is one package under
one name; imported as ``server`` from a checkout it would be a second copy of every
module (settings, brokers, caches), so that is refused."""

from __future__ import annotations

from typing import Any

if __name__ != "convscope":
    raise ImportError(
        f"ConvScope's service is the package `convscope`, not `{__name__}` "
        "(`pip install -e .` in a checkout, `pip install convscope` elsewhere; `python -m convscope`)"
    )

__all__ = ["show"]


def __getattr__(name: str) -> Any:  # (`import convscope` stays light: no web stack until used)
    if name == "show":
        from .notebook import show

        return show
    raise AttributeError(f"module 'convscope' has no attribute {name!r}")
