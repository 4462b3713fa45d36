"""PyTorch's padding modes: where each padded cell's value comes from, and back.

``padding_mode`` as ``torch.nn.Conv2d`` takes it: ``"zeros"`` (the padding is zeros),
``"reflect"`` (mirrored about the edge cell, which is not repeated: ``[c b | a b c | b a]``),
``"replicate"`` (the edge cell repeated: ``[a a | a b c | c c]``) and ``"circular"`` (the
input wrapped around: ``[b c | a b c | a b]``). A convolution with a mode pads its
input so, then convolves with no padding, as ``torch.nn.Conv2d`` does with ``F.pad``.

The backward of a copy is a sum: ``fold_padding`` adds the gradient of every padded cell
onto the input cell it was copied from (zeros padding copies nothing: its gradient is
dropped, a crop).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .messages import shorten
from .spec import ConvSpecError

__all__ = ["PADDING_MODES", "check_mode_fits", "check_padding_mode", "fold_padding", "pad_with_mode", "source_index"]

PADDING_MODES = ("zeros", "reflect", "replicate", "circular")

_SIDES = ("top", "bottom", "left", "right")


def check_padding_mode(mode: object) -> str:
    """``mode`` if it is one of ``PADDING_MODES``; ConvSpecError naming it otherwise."""
    if isinstance(mode, str) and mode in PADDING_MODES:
        return mode
    choices = ", ".join(repr(m) for m in PADDING_MODES)
    raise ConvSpecError(f"padding_mode must be one of {choices}, got {shorten(mode)}", "padding_mode")


def check_mode_fits(
    mode: str, padding: Sequence[int], hw: Sequence[int], size_names: Sequence[str] = ("H", "W")
) -> None:
    """Refuse what PyTorch's ``F.pad`` refuses: reflect padding of the input's size or
    more on a side (a mirror about the edge has size − 1 cells to show), circular padding
    of more than the input's size (it would wrap around more than once).

    ``padding``: (top, bottom, left, right); ``hw``: the input's (rows, columns), named
    ``size_names`` in the message.
    """
    for side, pad in zip(_SIDES, padding):
        axis = 0 if side in ("top", "bottom") else 1
        size, name = hw[axis], size_names[axis]
        if mode == "reflect" and pad >= size:
            raise ConvSpecError(
                f"padding_mode='reflect' needs each padding smaller than the input: {side} padding {pad}, "
                f"{name} = {size} (a mirror about the edge cell shows at most {name} − 1 = {size - 1} cells)",
                "padding",
            )
        if mode == "circular" and pad > size:
            raise ConvSpecError(
                f"padding_mode='circular' wraps around at most once: {side} padding {pad} is more than {name} = {size}",
                "padding",
            )


def source_index(size: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each of the ``before + size + after`` cells of one padded axis, the input cell
    it copies: ``(before + size + after,)`` ints in ``0 … size − 1``, or −1 for a zero
    (mode "zeros"). Assumes ``check_mode_fits`` passed."""
    t = np.arange(-before, size + after)
    if mode == "reflect":
        return np.where(t < 0, -t, np.where(t >= size, 2 * (size - 1) - t, t))
    if mode == "replicate":
        return np.clip(t, 0, size - 1)
    if mode == "circular":
        return t % size
    return np.where((t >= 0) & (t < size), t, -1)


def pad_with_mode(x: np.ndarray, padding: Sequence[int], mode: str) -> np.ndarray:
    """``x: (N, C, H, W)`` padded by ``padding`` (top, bottom, left, right) in ``mode``:
    ``xp: (N, C, H + top + bottom, W + left + right)``, a new array."""
    top, bottom, left, right = padding
    n, c, h, w = x.shape
    if mode == "zeros":
        xp = np.zeros((n, c, h + top + bottom, w + left + right), dtype=np.float64)
        xp[:, :, top : top + h, left : left + w] = x
        return xp
    rows, columns = source_index(h, top, bottom, mode), source_index(w, left, right, mode)
    return x[:, :, rows[:, None], columns[None, :]]


def fold_padding(dxp: np.ndarray, padding: Sequence[int], mode: str) -> np.ndarray:
    """The gradient of ``pad_with_mode``: ``dxp: (N, C, Hp, Wp)`` -> ``dx: (N, C, H, W)``,
    each padded cell's gradient added onto the input cell it copied (a new array)."""
    top, bottom, left, right = padding
    h, w = dxp.shape[2] - top - bottom, dxp.shape[3] - left - right
    if mode == "zeros":
        return dxp[:, :, top : top + h, left : left + w].copy()
    rows, columns = source_index(h, top, bottom, mode), source_index(w, left, right, mode)
    by_rows = np.zeros((h, *dxp.shape[:2], dxp.shape[3]), dtype=np.float64)
    np.add.at(by_rows, rows, dxp.transpose(2, 0, 1, 3))  # (Hp, N, C, Wp) folded onto (H, N, C, Wp)
    dx = np.zeros((w, *dxp.shape[:2], h), dtype=np.float64)
    np.add.at(dx, columns, by_rows.transpose(3, 1, 2, 0))  # (Wp, N, C, H) folded onto (W, N, C, H)
    return np.ascontiguousarray(dx.transpose(1, 2, 3, 0))
