"""Import a student's file and find the code to grade in it.

- cs231n: ``conv_forward_naive`` and ``conv_backward_naive`` (either may be missing);
  ``FUNCTION`` alone grades that one (a forward if its name says so or it takes four
  parameters, a backward if its name says so or it takes two);
- torch: ``conv2d_forward`` and ``conv2d_backward``, or ``FUNCTION`` alone (by its name);
  a file defining ``conv_transpose2d_forward`` / ``_backward`` (or ``conv1d_*``) instead
  is graded in ``torch-transposed`` (``torch-conv1d``), as ``find_convention`` says;
- torch-transposed, torch-conv1d: those functions, or ``FUNCTION`` alone;
- layer: the class ``FUNCTION``, by default ``Conv2D`` or the file's only class with
  ``forward`` and ``backward`` methods.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ..mistakes import CONVENTIONS, Subject
from ..mistakes.layer_conventions import TORCH_FAMILY, torch_layer_of

__all__ = ["LoadError", "NAMES", "find_convention", "find_subject", "load_module", "split_target"]

# per convention of functions, the forward's and the backward's names
NAMES = {name: c.functions for name, c in CONVENTIONS.items() if c.functions}


class LoadError(Exception):
    """The file cannot be imported, or has nothing to grade; the message says why."""


def split_target(target: str) -> tuple[str, str | None]:
    """``student.py:FUNCTION`` -> ("student.py", "FUNCTION"); no colon -> (target, None)."""
    path, sep, function = target.rpartition(":")
    if sep and function.isidentifier() and path:
        return path, function
    return target, None


def load_module(path: str) -> ModuleType:
    """Import the file at ``path`` as a module (its folder first on sys.path, so that it
    can import its neighbours). Raises LoadError with the reason."""
    file = Path(path)
    if not file.is_file():
        raise LoadError(f"{path}: no such file")
    sys.path.insert(0, str(file.resolve().parent))
    spec = importlib.util.spec_from_file_location(f"convscope_student_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise LoadError(f"{path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SystemExit as exc:
        raise LoadError(f"{path} calls sys.exit({exc.code!r}) when it is imported") from exc
    except SyntaxError as exc:
        raise LoadError(f"{path}, line {exc.lineno}: SyntaxError: {exc.msg}") from exc
    except Exception as exc:  # noqa: BLE001 - whatever the student's import raises is the verdict
        raise LoadError(f"{path} cannot be imported: {type(exc).__name__}: {exc}") from exc
    return module


def _is_backward(convention: str, name: str, function: Any) -> bool:
    lowered = name.lower()
    if "backward" in lowered:
        return True
    if "forward" in lowered:
        return False
    try:
        count = len(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        count = -1
    return convention == "cs231n" and count == 2


def _layer_class(module: ModuleType, function: str | None, path: str) -> Subject:
    if function is not None:
        cls = getattr(module, function, None)
        if not inspect.isclass(cls):
            raise LoadError(f"{path} has no class {function}")
        return Subject(layer=cls)
    if inspect.isclass(getattr(module, "Conv2D", None)):
        return Subject(layer=module.Conv2D)
    found = [
        v
        for v in vars(module).values()
        if inspect.isclass(v)
        and v.__module__ == module.__name__
        and callable(getattr(v, "forward", None))
        and callable(getattr(v, "backward", None))
    ]
    if len(found) != 1:
        what = "no class" if not found else f"{len(found)} classes ({', '.join(c.__name__ for c in found)})"
        raise LoadError(f"{path} has {what} with forward and backward methods; name one: {path}:CLASS")
    return Subject(layer=found[0])


def find_convention(module: ModuleType, convention: str, function: str | None) -> str:
    """The convention ``module`` is graded in: ``convention``, or for ``torch`` the one of
    the layer whose PyTorch-named functions it defines (``FUNCTION``'s, when one is named)."""
    if convention != "torch":
        return convention
    names = [function] if function is not None else [n for c in TORCH_FAMILY for n in NAMES[c]]
    return torch_layer_of(n for n in names if callable(getattr(module, n, None)))


def _missing(path: str, convention: str) -> str:
    """Why ``path`` has nothing to grade in ``convention``: the functions it lacks."""
    if convention == "torch":
        pairs = " or ".join(f"{f} / {b}" for f, b in (NAMES[c] for c in TORCH_FAMILY))
        return f"{path} defines none of the PyTorch-named functions: {pairs}"
    forward_name, backward_name = NAMES[convention]
    return f"{path} has neither {forward_name} nor {backward_name}"


def find_subject(module: ModuleType, convention: str, function: str | None, path: str) -> Subject:
    """The Subject to grade in ``module`` in ``convention`` (for ``torch``, give the one
    ``find_convention`` resolved); raises LoadError when it is missing."""
    if convention == "layer":
        return _layer_class(module, function, path)
    forward_name, backward_name = NAMES[convention]
    if function is not None:
        code = getattr(module, function, None)
        if not callable(code):
            raise LoadError(f"{path} has no function {function}")
        if not _is_backward(convention, function, code):
            return Subject(forward=code)
        own_forward = getattr(module, forward_name, None) if convention == "cs231n" else None
        return Subject(backward=code, cache_from=own_forward if callable(own_forward) else None)
    forward, backward = getattr(module, forward_name, None), getattr(module, backward_name, None)
    if not callable(forward) and not callable(backward):
        raise LoadError(_missing(path, convention))
    return Subject(forward=forward if callable(forward) else None, backward=backward if callable(backward) else None)
