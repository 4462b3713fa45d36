"""``ast.parse`` for code that runs on the service's worker threads.

CPython 3.11 counts the depth of the AST objects it builds in one counter per
interpreter, not per thread. When another thread runs in the middle of a parse (a
finalizer run by a collection can let it), two parses change each other's count and
one fails with ``SystemError: AST constructor recursion depth mismatch`` (the error of
python/cpython#106905): a trace built beside another answered 500 (seen in CI, 30
careless clients on two workers; ``tests/test_python_ast.py`` shows it). Every parse
in ``convcore`` goes through ``parse_python``, one at a time; the sources parsed here
are a few lines each.
"""

from __future__ import annotations

import ast
import threading

__all__ = ["parse_python"]

_ONE_AT_A_TIME = threading.Lock()


def parse_python(source: str) -> ast.Module:
    """``ast.parse(source)``, never beside another parse of this process."""
    with _ONE_AT_A_TIME:
        return ast.parse(source)
