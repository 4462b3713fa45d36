"""Error-message helpers: a person's value, shown briefly and safely.

Every message that echoes what someone typed goes through ``shorten``, so that a
900 000-character string, a list of 150 000 items or an integer of 5000 digits comes
back as a few dozen characters.
"""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["SHORT_LENGTH", "int_text", "shorten"]

SHORT_LENGTH = 40  # characters of a person's value that a message shows


def int_text(value: int) -> str:
    """An int's digits, or its first digits and how many there are when it is long."""
    if value.bit_length() <= 128:  # at most 39 digits
        return str(value)
    try:
        digits = str(value)
    except ValueError:  # beyond Python's int-to-text limit (4300 digits)
        sign = "a negative" if value < 0 else "an"
        return f"{sign} integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    sign = "-" if value < 0 else ""
    return f"{digits[: 12 + len(sign)]}… ({len(digits) - len(sign)} digits)"


class _ShortRepr(reprlib.Repr):
    """reprlib's bounded repr (long strings and lists cut, nesting limited), with ints
    that say how many digits they have."""

    def __init__(self) -> None:
        super().__init__()
        self.maxstring = self.maxother = 2 * SHORT_LENGTH
        self.maxlist = self.maxtuple = self.maxset = 8
        self.maxdict = 4
        self.maxlevel = 3

    def repr_int(self, x: int, level: int) -> str:
        return int_text(x)

    def repr_str(self, x: str, level: int) -> str:
        if len(x) <= self.maxstring:
            return repr(x)
        return repr(x[: self.maxstring])[:-1] + "…"


_SHORT_REPR = _ShortRepr()


def shorten(value: Any, limit: int = SHORT_LENGTH) -> str:
    """``repr(value)`` for an error message, at most about ``limit`` characters.

    A message that shows a person's value must not echo a 900 000-character string, a
    list of 150 000 items or an integer of 5000 digits back: long text is cut with "…",
    long integers keep their first digits and say how many they have
    (``1000000000000… (401 digits)``). The work is bounded too (reprlib).
    """
    try:
        text = _SHORT_REPR.repr(value)
    except (ValueError, RecursionError):  # an object whose repr refuses; say what it is
        text = f"a {type(value).__name__}"
    return text if len(text) <= limit else text[: limit - 1] + "…"
