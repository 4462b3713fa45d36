"""The conditions of the layer's mistakes: output sizes a mistaken layer computes, and
where a wrong gradient through the activation shows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..activations import get_activation
from .case import Case
from .catalogue import Condition, where_windows_read_x
from .geometry import windows_reading_x

__all__ = ["backward_raises", "dz_conditions", "size_conditions", "size_mistake_conditions", "sizes", "sizes_differ"]


def sizes(case: Case, conv: type) -> tuple[int, int]:
    """The output (rows, cols) the layer's loops ``conv`` (a PlainLoops class) compute for ``case``."""
    return tuple(conv.for_geometry(case.spec, "layer").out_hw())


def sizes_differ(conv: type) -> Callable[[Case], bool]:
    return lambda case: sizes(case, conv) != case.spec.out_hw


def backward_raises(conv: type) -> Condition:
    """db (a sum of dZ) is right unless backward raises: sure to when Z's wrong shape
    cannot broadcast with dL/dY's in f'(Z) · dL/dY; sure not to when the sizes agree."""

    def shows(case: Case) -> bool:
        (rows, cols), (ho, wo) = sizes(case, conv), case.spec.out_hw
        return (rows != ho and 1 not in (rows, ho)) or (cols != wo and 1 not in (cols, wo))

    return Condition(
        shows,
        "when Z's wrong size cannot broadcast with dL/dY's, so that backward raises (never when the sizes agree)",
        hides=lambda c: sizes(c, conv) == c.spec.out_hw,
    )


def size_conditions(conv: type, words: str) -> tuple[Condition, Condition]:
    """out shows exactly when the output size is wrong; dx and dw too where every window
    reads x and the gradient flows."""
    return Condition(sizes_differ(conv), words), where_windows_read_x(sizes_differ(conv), words, gradient=True)


def size_mistake_conditions(conv: type, words: str) -> dict[str, Condition]:
    """The conditions of a mistake that gets only the output size wrong: out, dx and dw's
    ``size_conditions``, db's ``backward_raises``."""
    out, gradient = size_conditions(conv, words)
    return {"out": out, "dx": gradient, "dw": gradient, "db": backward_raises(conv)}


def dz_conditions(wrong_derivative: Callable, words: str) -> dict[str, Condition]:
    """The conditions of a wrong dZ = dL/dY · g(Z, Y) instead of dL/dY · f'(Z): db's where
    g ≠ f'(Z) somewhere, dx's and dw's where it does at an output whose window reads x.
    They show where g and f'(Z) differ by more than 0.1 % (a smaller difference, as
    tanh'(tanh z) against tanh'(z) for z near 0, can fall inside the comparison's
    tolerance) and hide where g equals f'(Z) everywhere."""

    def differs(case: Case, rtol: float) -> np.ndarray:  # (N, F, Ho, Wo)
        t = case.truth
        act = get_activation(case.activation)
        return ~np.isclose(wrong_derivative(act, t.z, t.out), act.derivative(t.z), rtol=rtol, atol=0)

    def read(case: Case, rtol: float) -> bool:
        return bool(np.any(differs(case, rtol) & windows_reading_x(case)[None, None]))

    words += " (exact but for differences of less than 0.1 %, which the comparison can miss)"
    db = Condition(lambda c: bool(np.any(differs(c, 1e-3))), words, hides=lambda c: not np.any(differs(c, 1e-12)))
    dxw = Condition(
        lambda c: read(c, 1e-3),
        words.replace(" (exact", ", at an output whose window reads x (exact", 1),
        hides=lambda c: not read(c, 1e-12),
    )
    return {"db": db, "dx": dxw, "dw": dxw}
