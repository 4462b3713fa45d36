"""What kind of value a person gave: the one integer check of ConvScope."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["is_int"]


def is_int(value: Any) -> bool:
    """True for Python and NumPy integers (anything with ``__index__``: ``3``,
    ``np.int64(3)``, a 0-d integer array), False for bools (Python's and NumPy's),
    floats and strings: ``3.0`` or ``"3"`` would be silently turned into 3."""
    return hasattr(value, "__index__") and not isinstance(value, (bool, np.bool_))
