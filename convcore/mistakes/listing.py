"""The code beside a mistake lesson's steps: the correct naive code whose loops the lab
runs (``PlainLoops``), and each mistake's code, that code with the lines its mistake
changes (the loops class's ``listing_change``, written beside the step it overrides in
``in_cs231n``, ``in_torch``, ...).

``listing_change`` is a tuple of (text, replacement) pairs: every line of the correct
listing that holds ``text`` gets it replaced (one line for one line, so the two listings
line up); each pair must change some line. ``mistake_listing(mistake)`` -> (the mistaken
Listing, the correct one, the changed line numbers), or None where the convention's lab
code has no listing yet or the mistake no ``listing_change``; ``mistake_code(...)`` the
header's ``code``: {convention, name, lines, changed, correct, correct_name}.
tests/test_mistake_listings.py runs every mistaken listing against the mistake's own
code on random specs, so that the two descriptions cannot drift.
"""

from __future__ import annotations

import inspect
from functools import cache
from typing import Any

from ..listings.registry import CLASSES, HEAD, Listing, compiled_listing
from .catalogue import Mistake

__all__ = ["LAB_ALIASES", "LAB_FILES", "correct_listing", "mistake_code", "mistake_listing"]

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


def changed_lines(lines: tuple[str, ...], change: tuple[tuple[str, str], ...], who: str) -> tuple[str, ...]:
    """``lines`` with every (text, replacement) of ``change`` applied (module notes)."""
    out = list(lines)
    for text, replacement in change:
        hits = [k for k, line in enumerate(out) if text in line]
        if not hits:
            raise ValueError(f"{who}: no line of the correct listing holds {text!r}")
        for k in hits:
            out[k] = out[k].replace(text, replacement)
    return tuple(out)


def mistake_listing(mistake: Mistake) -> tuple[Listing, Listing, tuple[int, ...]] | None:
    """(the mistaken listing, the correct one, the changed 1-based lines), or None."""
    return _mistake_listing(mistake.id, mistake.convention, mistake.loops)


@cache
def _mistake_listing(mistake_id: str, convention: str, loops: type):
    correct = correct_listing(convention)
    change = getattr(loops, "listing_change", ())
    if correct is None or not change:
        return None
    lines = changed_lines(correct.lines, change, mistake_id)
    changed = tuple(k for k, (a, b) in enumerate(zip(correct.lines, lines), start=1) if a != b)
    mistaken = compiled_listing(f"{correct.name}, mistake {mistake_id}", convention, lines, backward="by position")
    return mistaken, correct, changed


def mistake_code(mistake: Mistake) -> dict[str, Any] | None:
    """The header's ``code`` of the mistake's trace (module notes), or None."""
    found = mistake_listing(mistake)
    if found is None:
        return None
    mistaken, correct, changed = found
    return {
        "convention": mistaken.convention,
        "name": mistaken.name,
        "lines": list(mistaken.lines),
        "changed": list(changed),
        "correct": list(correct.lines),
        "correct_name": correct.name,
    }
