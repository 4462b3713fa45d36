"""Other loop orders of a listing file, derived from the file itself: each loop nest
``for n, f, i, j in np.ndindex(N, F, H_out, W_out):`` is one line, the nested loops in
order, the last fastest; another order is the same line with its variables and their
sizes permuted alike (``for j, i, f, n in np.ndindex(W_out, H_out, F, N):``), nothing
else changes. A star argument (``np.ndindex(*dout.shape)``) is spelt out per axis first
(``dout.shape[0], dout.shape[1], ...``).

``reorder(lines, orders)`` -> the lines, each loop nest put in the order
``orders(letters)`` gives for its letters (a nest over n, f, i, j whose marks are
phase dx takes the dx order, for instance: ``convcore.listings.registry``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..python_ast import parse_python

__all__ = ["reorder"]


def _loop(text: str) -> ast.For | None:
    """The ``for … in np.ndindex(…):`` statement of one line, or None."""
    if not text.lstrip().startswith("for") or "ndindex" not in text:
        return None  # (most lines: no parse needed to see they are not such a loop)
    try:
        tree = parse_python(text.strip() + "\n    pass")
    except SyntaxError:
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, ast.For) or not isinstance(node.target, ast.Tuple):
        return None
    call = node.iter
    if not (isinstance(call, ast.Call) and ast.unparse(call.func) == "np.ndindex"):
        return None
    return node


def _spelt_out(call: ast.Call, count: int) -> list[ast.expr]:
    """The sizes of an ``np.ndindex`` call, a star argument spelt out per axis."""
    if len(call.args) == 1 and isinstance(call.args[0], ast.Starred):
        shape = call.args[0].value
        return [ast.Subscript(shape, ast.Constant(a)) for a in range(count)]
    return list(call.args)


def reorder(lines: tuple[str, ...], order_of: Callable[[int, str], str]) -> tuple[str, ...]:
    """``lines`` with each one-line loop nest over loop letters permuted to
    ``order_of(line number, its letters)``; the other lines unchanged."""
    out = list(lines)
    for number, text in enumerate(lines, start=1):
        node = _loop(text)
        if node is None:
            continue
        names = [elt.id for elt in node.target.elts]
        order = order_of(number, "".join(names))
        if order == "".join(names):
            continue
        if sorted(order) != sorted(names):
            raise ValueError(f"line {number}: {order!r} is not an order of the loop letters {''.join(names)!r}")
        sizes = _spelt_out(node.iter, len(names))
        where = {name: k for k, name in enumerate(names)}
        node.target.elts = [ast.Name(letter) for letter in order]
        node.iter.args = [sizes[where[letter]] for letter in order]
        indent = text[: len(text) - len(text.lstrip())]
        out[number - 1] = indent + ast.unparse(node).split("\n")[0]
    return tuple(out)
