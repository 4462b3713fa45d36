"""The installed name of the checkout's ``server/`` folder is ``convscope``.

A wheel maps the folder at build time (pyproject's ``sources``). An editable install
(``pip install -e .``, what the Makefile does) cannot rename a folder, so this hook
gives it a one-file ``convscope`` package whose search path is the checkout's
``server/``: ``convscope.cli`` is then ``server/cli.py`` itself, edited in place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SHIM = '''"""ConvScope's service in a development checkout: the package is the folder {folder}."""
__path__ = [{folder!r}]
__file__ = {init!r}
with open(__file__, encoding="utf-8") as _source:
    exec(compile(_source.read(), __file__, "exec"))
del _source
'''


class EditableConvscope(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version != "editable":
            return
        folder = Path(self.root, "server").resolve()
        shim = Path(self.directory, "convscope-editable", "__init__.py")
        shim.parent.mkdir(parents=True, exist_ok=True)
        shim.write_text(SHIM.format(folder=str(folder), init=str(folder / "__init__.py")), encoding="utf-8")
        build_data["force_include_editable"][str(shim)] = "convscope/__init__.py"
