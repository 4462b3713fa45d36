"""The code beside a mistake lesson's steps: the correct naive code whose loops the lab
runs (``PlainLoops``), and each mistake's code, that code with the lines its mistake
changes (the loops class's ``listing_change``, written beside the step it overrides in
``in_cs231n``, ``in_torch``, ...).

``listing_change`` is a tuple of (text, replacement) pairs: every line of the correct
listing that holds ``text`` gets it replaced; each pair must change some line. A
replacement is one line for one line, or several (a "\n" in it: the lines after the
first are indented as the replaced line, plus their own indent), for a mistake that
adds code (``rotated_kernel_ignores_stride``'s gather). Each line of the correct listing
becomes a block of the mistaken one; every line of a block that is not that one line
unchanged is a changed line, and stands for the correct line of its block.
``mistake_listing(mistake)`` -> ``MistakeListing`` (the mistaken Listing, the correct
one, the changed line numbers, the correct line each stands for), or None where the
convention's lab code has no listing yet or the mistake no ``listing_change``;
``mistake_code(...)`` the header's ``code``: {convention, name, lines, changed,
correct_of, correct, correct_name}.
tests/test_mistake_listings.py runs every mistaken listing against the mistake's own
code on random specs, so that the two descriptions cannot drift.
"""

from __future__ import annotations

import inspect
from functools import cache
from typing import Any, NamedTuple

from ..listings.registry import CLASSES, HEAD, Listing, compiled_listing
from .catalogue import Mistake

__all__ = ["LAB_ALIASES", "LAB_FILES", "MistakeListing", "correct_listing", "mistake_code", "mistake_listing"]

# per convention, the lab's code: the files of its forward and backward functions
LAB_FILES: dict[str, tuple[str, str]] = {
    "cs231n": ("convcore.listings.cs231n.forward_window", "convcore.listings.cs231n.backward_by_position"),
    "torch": ("convcore.listings.torch_style.forward_window", "convcore.listings.torch_style.backward_by_position"),
    "layer": ("convcore.listings.layer.forward_window", "convcore.listings.layer.backward_by_position"),
}
# per convention, {the listing's name: the lab's}: CS231n and torch code compute no
# activation, so the lab's z is their out (their activation phases have no line); the
# layer's listing names z, out and dz as the lab does
LAB_ALIASES: dict[str, dict[str, str]] = {"cs231n": {"out": "z"}, "torch": {"out": "z"}, "layer": {}}


@cache
def correct_listing(convention: str) -> Listing | None:
    """The correct code of the lab's loops in ``convention``, or None."""
    if convention not in LAB_FILES:
        return None
    import importlib

    lines = list(HEAD)
    if convention in CLASSES:  # one class: its constructor, then each file's method (as the registry's)
        module_name, class_name = CLASSES[convention]
        package = LAB_FILES[convention][0].rsplit(".", 1)[0]
        init = getattr(importlib.import_module(f"{package}.{module_name}"), class_name).__init__
        lines += ["", "", f"class {class_name}:", *(line.rstrip("\n") for line in inspect.getsourcelines(init)[0])]
    for module_name in LAB_FILES[convention]:
        module = importlib.import_module(module_name)
        holder = vars(getattr(module, CLASSES[convention][1])) if convention in CLASSES else vars(module)
        function = next(v for v in holder.values() if inspect.isfunction(v) and v.__module__ == module.__name__)
        blank = [""] if convention in CLASSES else ["", ""]
        lines += [*blank, *(line.rstrip("\n") for line in inspect.getsourcelines(function)[0])]
    name = " + ".join(m.removeprefix("convcore.listings.").replace(".", "/") for m in LAB_FILES[convention])
    return compiled_listing(name, convention, tuple(lines), backward="by position")


def changed_lines(
    lines: tuple[str, ...], change: tuple[tuple[str, str], ...], who: str
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``lines`` with every (text, replacement) of ``change`` applied (module notes), and
    for each line of the result the 1-based line of ``lines`` it comes from."""
    out = [(line, k) for k, line in enumerate(lines, start=1)]
    for text, replacement in change:
        hits = [k for k, (line, _) in enumerate(out) if text in line]
        if not hits:
            raise ValueError(f"{who}: no line of the correct listing holds {text!r}")
        for k in reversed(hits):
            line, origin = out[k]
            indent = line[: len(line) - len(line.lstrip())]
            first, *more = line.replace(text, replacement).split("\n")
            out[k : k + 1] = [(first, origin), *((indent + part, origin) for part in more)]
    return tuple(line for line, _ in out), tuple(origin for _, origin in out)


class MistakeListing(NamedTuple):
    """A mistake's code: ``mistaken`` and ``correct`` listings, the 1-based lines of
    ``mistaken`` that differ (``changed``) and for each the line of ``correct`` it stands
    for (``correct_of``)."""

    mistaken: Listing
    correct: Listing
    changed: tuple[int, ...]
    correct_of: tuple[int, ...]


def mistake_listing(mistake: Mistake) -> MistakeListing | None:
    """The mistake's code (module notes), or None."""
    return _mistake_listing(mistake.id, mistake.convention, mistake.loops)


@cache
def _mistake_listing(mistake_id: str, convention: str, loops: type) -> MistakeListing | None:
    correct = correct_listing(convention)
    change = getattr(loops, "listing_change", ())
    if correct is None or not change:
        return None
    lines, origins = changed_lines(correct.lines, change, mistake_id)
    block = {origin: [line for line, o in zip(lines, origins) if o == origin] for origin in set(origins)}
    same = {origin for origin, found in block.items() if found == [correct.lines[origin - 1]]}
    changed = tuple(k for k, origin in enumerate(origins, start=1) if origin not in same)
    mistaken = compiled_listing(f"{correct.name}, mistake {mistake_id}", convention, lines, backward="by position")
    return MistakeListing(mistaken, correct, changed, tuple(origins[k - 1] for k in changed))


def mistake_code(mistake: Mistake) -> dict[str, Any] | None:
    """The header's ``code`` of the mistake's trace (module notes), or None."""
    found = mistake_listing(mistake)
    if found is None:
        return None
    mistaken, correct, changed, correct_of = found
    return {
        "convention": mistaken.convention,
        "name": mistaken.name,
        "lines": list(mistaken.lines),
        "changed": list(changed),
        "correct_of": list(correct_of),
        "correct": list(correct.lines),
        "correct_name": correct.name,
    }
