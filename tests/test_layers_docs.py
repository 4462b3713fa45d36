"""docs/layers.md: its example runs, and its table names each new function with the
signature it has."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import convcore

DOC = (Path(__file__).resolve().parent.parent / "docs" / "layers.md").read_text(encoding="utf-8")


def test_the_example_runs():
    (code,) = re.findall(r"```python\n(.*?)```", DOC, re.S)
    exec(compile(code, "docs/layers.md", "exec"), {})


def test_the_table_gives_each_function_its_signature():
    for name in ("conv_transpose2d_forward", "conv_transpose2d_backward", "conv1d_forward", "conv1d_backward"):
        function = getattr(convcore, name)
        parameters = ", ".join(
            p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}".replace("'", '"')
            for p in inspect.signature(function).parameters.values()
        )
        assert f"`{name}({parameters})" in DOC, name
