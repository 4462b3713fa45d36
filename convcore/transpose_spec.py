"""TransposeSpec: the geometry of one transposed 2-D convolution, resolved and validated.

PyTorch's ``ConvTranspose2d`` / ``F.conv_transpose2d``: input ``x: (N, C_in, H, W)``,
weight ``w: (C_in, C_out/groups, KH, KW)`` (input channels first, the reverse of
Conv2d's), bias ``(C_out,)``. Each input cell ``x[n, c, h, w]`` stamps ``x · w[c]`` onto
the output at rows ``h·stride + k·dilation``; the stamps cover

    (H − 1)·stride + dilation·(KH − 1) + 1 rows,

``output_padding`` rows are added below (and columns on the right: they get no stamp,
only the bias), then ``padding`` rows are cropped from the top and from the bottom:

    H_out = (H − 1)·stride − 2·padding + dilation·(KH − 1) + output_padding + 1.

``output_padding`` must be smaller than the stride or the dilation of its axis (it only
chooses among the input sizes a Conv2d of that stride maps to one output size).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .messages import shorten
from .spec import MAX_INDEX, ConvSpec, ConvSpecError, _shape4, resolve_pair, tap_slices
from .values import is_int

__all__ = ["TransposeSpec"]

_AXES = (("rows", "H", "KH"), ("columns", "W", "KW"))


def _pair_at_least(value: Any, name: str, low: int, meaning: str = "") -> tuple[int, int]:
    if isinstance(value, str):
        raise ConvSpecError(
            f"{name} of conv_transpose2d must be an int or an (h, w) pair of ints{meaning}, got {shorten(value)}", name
        )
    pair = resolve_pair(value, name)
    if min(pair) < low:
        raise ConvSpecError(f"{name} must be at least {low}, got {shorten(min(pair))} in {shorten(pair)}", name)
    if max(pair) > MAX_INDEX:
        raise ConvSpecError(
            f"{name} must be at most 2^63 − 1 = {MAX_INDEX} (NumPy's largest index), got {shorten(max(pair))}", name
        )
    return pair


@dataclass(frozen=True)
class TransposeSpec:
    """The resolved geometry of one transposed 2-D convolution.

    Attributes
    ----------
    x_shape : (N, C_in, H, W)
    w_shape : (C_in, C_out // groups, KH, KW)
    stride : (sh, sw), each >= 1
    padding : (ph, pw), each >= 0: rows (columns) cropped from both sides of the stamps
    output_padding : (oh, ow), each smaller than the stride or the dilation of its axis
    dilation : (dh, dw), each >= 1 (1 means none)
    groups : divides C_in (and C_out = groups · w_shape[1])
    """

    x_shape: tuple[int, int, int, int]
    w_shape: tuple[int, int, int, int]
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    output_padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    @classmethod
    def create(
        cls,
        x_shape: Sequence[int],
        w_shape: Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        output_padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
    ) -> TransposeSpec:
        """Resolve and validate PyTorch-style arguments; ConvSpecError names the argument
        and the numbers, and refuses what ``F.conv_transpose2d`` refuses."""
        xs = _shape4(x_shape, "x", "(N, C_in, H, W)")
        ws = _shape4(w_shape, "w", "(C_in, C_out/groups, KH, KW)")
        s = _pair_at_least(stride, "stride", 1)
        p = _pair_at_least(padding, "padding", 0, " (rows and columns cropped from each side of the output)")
        op = _pair_at_least(output_padding, "output_padding", 0)
        d = _pair_at_least(dilation, "dilation", 1)
        if not is_int(groups) or int(groups) < 1:
            raise ConvSpecError(f"groups must be an int of at least 1, got {shorten(groups)}", "groups")
        g = int(groups)
        c_in = xs[1]
        if c_in % g:
            raise ConvSpecError(f"groups={g} does not divide the input channels C_in={c_in}", "groups")
        if ws[0] != c_in:
            raise ConvSpecError(
                f"w has {ws[0]} input channels (its first axis), expected C_in = {c_in}: "
                f"conv_transpose2d's weight is (C_in, C_out/groups, KH, KW)",
                "w",
            )
        for axis, (what, _, _) in enumerate(_AXES):
            if op[axis] >= s[axis] and op[axis] >= d[axis]:
                raise ConvSpecError(
                    f"output_padding must be smaller than the stride or the dilation: on the {what} "
                    f"output_padding {op[axis]}, stride {s[axis]}, dilation {d[axis]}",
                    "output_padding",
                )
        spec = cls(xs, ws, s, p, op, d, g)
        for axis, (what, size_name, k_name) in enumerate(_AXES):
            out, size, k = spec.out_hw[axis], xs[2 + axis], ws[2 + axis]
            if out < 1:
                raise ConvSpecError(
                    f"output would have {out} {what}: ({size_name}−1)·stride − 2·padding + dilation·({k_name}−1) "
                    f"+ output_padding + 1 = ({size}−1)·{s[axis]} − 2·{p[axis]} + {d[axis]}·({k}−1) + "
                    f"{op[axis]} + 1; padding crops {p[axis]} {what} from each side of "
                    f"{spec.stamped_hw[axis] + op[axis]}",
                    "padding",
                )
        n, c_out = spec.N, spec.C_out
        if n * c_out * (spec.stamped_hw[0] + op[0]) * (spec.stamped_hw[1] + op[1]) * 8 > MAX_INDEX:
            raise ConvSpecError(
                f"the output would be {n}×{c_out}×{shorten(spec.out_hw[0])}×{shorten(spec.out_hw[1])}: "
                f"more than 2^63 − 1 bytes, larger than any array can be",
                "stride",
            )
        return spec

    # the layer's one-letter names: x is (N, C_in, H, W), w is (C_in, C_out/groups, KH, KW)
    N = property(lambda self: self.x_shape[0], doc="images in the batch")
    C_in = property(lambda self: self.x_shape[1], doc="input channels")
    H = property(lambda self: self.x_shape[2], doc="input rows")
    W = property(lambda self: self.x_shape[3], doc="input columns")
    KH = property(lambda self: self.w_shape[2], doc="kernel rows")
    KW = property(lambda self: self.w_shape[3], doc="kernel columns")

    @property
    def C_out(self) -> int:
        """Output channels: groups · w_shape[1]."""
        return self.groups * self.w_shape[1]

    @property
    def in_per_group(self) -> int:
        return self.C_in // self.groups

    @property
    def out_per_group(self) -> int:
        return self.w_shape[1]

    @cached_property
    def stamped_hw(self) -> tuple[int, int]:
        """Rows and columns the stamps cover before the crop: (H−1)·stride + dilation·(K−1) + 1."""
        return tuple(
            (size - 1) * s + d * (k - 1) + 1
            for size, s, d, k in zip((self.H, self.W), self.stride, self.dilation, (self.KH, self.KW))
        )  # type: ignore[return-value]

    @cached_property
    def out_hw(self) -> tuple[int, int]:
        """(H_out, W_out) = stamped + output_padding − 2·padding per axis."""
        return tuple(stamped + op - 2 * p for stamped, op, p in zip(self.stamped_hw, self.output_padding, self.padding))  # type: ignore[return-value]

    @cached_property
    def out_shape(self) -> tuple[int, int, int, int]:
        """Shape of the output y: (N, C_out, H_out, W_out)."""
        return (self.N, self.C_out, *self.out_hw)

    @cached_property
    def tap_slices(self) -> tuple[tuple[int, int, slice, slice], ...]:
        """Per kernel tap (k, l), row-major: (k, l, rows, columns), where the stamps of
        that tap land among the stamped rows and columns, one per input row and column."""
        return tap_slices((self.H, self.W), self.stride, self.dilation, (self.KH, self.KW))

    check_shape = ConvSpec.check_shape  # (name, shape, expected): ConvSpecError unless equal
