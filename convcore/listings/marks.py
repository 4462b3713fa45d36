"""The line map of a listing, read from the listing's own code (its one source).

A line that ends with ``# step: <phase>`` is the line a trace step of that phase runs:
the innermost line, where the step writes. The tensor it writes is the name its
statement assigns to (``db[f] += g`` writes db, ``xp = np.pad(...)`` writes xp), and
its loops are the variables of the ``for`` statements around it, outermost first
(``for n, f, i, j in np.ndindex(...)`` gives n, f, i, j), and its scalars the names it
reads that its innermost loop assigned before it from a scalar expression (no slice, no
call: ``g = dout[n, f, i, j]``, ``bias = b[f] if c == k == l == 0 else 0.0``), each with the
source of that expression (a trace evaluates it per step: ``convcore.trace.code``).

``read_marks(lines)`` -> ``[Mark]``, from the listing's lines (one string a line, valid
Python as a whole). A marked line must be one whole statement that assigns to a name or
to a subscript of a name; anything else raises ``ListingMarkError`` naming the line.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from functools import lru_cache

from ..python_ast import parse_python

__all__ = ["MARK", "ListingMarkError", "Mark", "read_marks"]

MARK = re.compile(r"#\s*step:\s*(?P<phase>[a-z][a-z0-9 ]*[a-z0-9])\s*$")  # (im2col, col2im)


class ListingMarkError(ValueError):
    """A ``# step:`` mark on a line that is not one assignment statement."""


@dataclass(frozen=True)
class Mark:
    """One marked line: ``line`` (1-based, in the listing), the trace ``phase`` whose
    steps run it, the tensor it writes (``target``, the listing's own name), the
    loop variables around it (``loops``, outermost first) and the scalars it reads
    (``scalars``: (name, the source of the expression its loop assigned it))."""

    line: int
    phase: str
    target: str
    loops: tuple[str, ...]
    scalars: tuple[tuple[str, str], ...] = ()


def _target(node: ast.stmt) -> str | None:
    """The name an assignment statement writes (``db`` for ``db[f] += g``), else None."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
    if len(targets) != 1:
        return None
    target = targets[0]
    while isinstance(target, ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _loop_names(node: ast.For) -> tuple[str, ...]:
    """``for n, f, i, j in ...`` -> ("n", "f", "i", "j"); ``for f in ...`` -> ("f",)."""
    names = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
    return tuple(name.id for name in names if isinstance(name, ast.Name))


def read_marks(lines: list[str] | tuple[str, ...]) -> list[Mark]:
    """The marked lines of a listing, in line order."""
    return list(_read_marks(tuple(lines)))


# (the registry reads the same files' parts again for every listing it assembles, and a
# trace with its code assembles its listing: a parse per build, kept for the last ones)
@lru_cache(maxsize=256)
def _read_marks(lines: tuple[str, ...]) -> tuple[Mark, ...]:
    tree = parse_python(textwrap.dedent("\n".join(lines)))  # (a method: indented)
    statements: dict[int, ast.stmt] = {}
    loops: list[ast.For] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            statements.setdefault(node.lineno, node)
        if isinstance(node, ast.For):
            loops.append(node)
    marks = []
    for number, text in enumerate(lines, start=1):
        found = MARK.search(text)
        if not found:
            continue
        node = statements.get(number)
        target = _target(node) if node is not None and node.end_lineno == number else None
        if target is None:
            raise ListingMarkError(
                f"line {number} is marked '# step: {found['phase']}' but is not one assignment: {text!r}"
            )
        around = sorted(
            (loop for loop in loops if loop.body[0].lineno <= number <= loop.end_lineno), key=lambda n: n.lineno
        )
        loop_vars = tuple(v for loop in around for v in _loop_names(loop))
        marks.append(Mark(number, found["phase"], target, loop_vars, _scalars(node, around[-1] if around else None)))
    return tuple(marks)


def _scalars(node: ast.stmt, loop: ast.For | None) -> tuple[tuple[str, str], ...]:
    """The names ``node`` reads that ``loop``'s body assigned before it from an
    expression without a slice, each with that expression's source, in reading order."""
    if loop is None:
        return ()
    assigned: dict[str, str] = {}
    for inner in ast.walk(loop):
        if not isinstance(inner, ast.Assign) or inner.lineno >= node.lineno or len(inner.targets) != 1:
            continue
        target, value = inner.targets[0], inner.value
        pairs = [(target, value)]
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            pairs = list(zip(target.elts, value.elts))  # channel, row, col = ..., ..., ...
        for name, expression in pairs:
            if isinstance(name, ast.Name) and not any(
                isinstance(n, (ast.Slice, ast.Call)) for n in ast.walk(expression)
            ):
                assigned[name.id] = ast.unparse(expression)
    read = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return tuple((name, assigned[name]) for name in dict.fromkeys(read) if name in assigned)
