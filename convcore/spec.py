"""ConvSpec: the one place where a conv layer's geometry is resolved and validated.

Everything that depends on the shapes of a 2-D convolution (padding resolution, the
kernel's extent with dilation, the output size, which input channels a filter reads)
is computed here and nowhere else.

Conventions are PyTorch's: NCHW input, OIHW weights ``(F, C // groups, KH, KW)``,
``dilation=1`` means no dilation, ``padding`` is per side. ``"same"`` follows
TensorFlow/Keras: the output is ``ceil(H / stride)`` and the odd pixel of padding goes
to the bottom/right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .messages import shorten
from .values import is_int

# shorten stays importable from here for callers written before convcore.messages
__all__ = ["ConvSpec", "ConvSpecError", "PaddingArg", "resolve_padding4", "resolve_pair", "shorten", "tap_slices"]


class ConvSpecError(ValueError):
    """An invalid convolution spec; the message names the parameter and the numbers."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


PaddingArg = int | str | Sequence[int]

MAX_INDEX = 2**63 - 1  # the largest index, size or byte count NumPy holds (int64)


def resolve_pair(value: Any, name: str) -> tuple[int, int]:
    """An int or an (h, w) pair as a pair of ints; raises ConvSpecError naming ``name``."""
    if is_int(value):
        return (int(value), int(value))
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(is_int(v) for v in value):
        return (int(value[0]), int(value[1]))
    raise ConvSpecError(f"{name} must be an int or an (h, w) pair of ints, got {shorten(value)}", name)


def resolve_padding4(padding: Any, name: str = "padding") -> tuple[int, int, int, int]:
    """A numeric padding as (top, bottom, left, right): an int p gives (p, p, p, p), a pair
    (ph, pw) gives (ph, ph, pw, pw), four ints are taken as given. Raises ConvSpecError
    naming ``name`` for anything else or a negative value."""
    if is_int(padding):
        pads = (int(padding),) * 4
    elif isinstance(padding, (list, tuple)) and all(is_int(v) for v in padding):
        vals = [int(v) for v in padding]
        if len(vals) == 2:
            pads = (vals[0], vals[0], vals[1], vals[1])
        elif len(vals) == 4:
            pads = tuple(vals)
        else:
            raise ConvSpecError(
                f"{name} as a list must have 2 (h, w) or 4 (top, bottom, left, right) ints, got {len(vals)}",
                name,
            )
    else:
        raise ConvSpecError(
            f"{name} must be an int, a pair, four ints, 'same' or 'valid', got {shorten(padding)}", name
        )
    if min(pads) < 0:
        raise ConvSpecError(f"{name} must not be negative, got {shorten(min(pads))} in {shorten(pads)}", name)
    return pads  # type: ignore[return-value]


def tap_slices(
    positions: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int], kernel: tuple[int, int]
) -> tuple[tuple[int, int, slice, slice], ...]:
    """Per kernel tap (k, l), row-major: (k, l, rows, columns), the cells tap (k, l)
    meets at each of ``positions`` (rows, columns) windows: row ``i·stride + k·dilation``
    for i < positions[0]. Step 1 when there is one position, so that a huge stride never
    reaches NumPy's index arithmetic."""
    (ho, wo), (sh, sw), (dh, dw) = positions, stride, dilation
    return tuple(
        (
            k,
            l,
            slice(k * dh, k * dh + (ho - 1) * sh + 1, sh if ho > 1 else 1),
            slice(l * dw, l * dw + (wo - 1) * sw + 1, sw if wo > 1 else 1),
        )
        for k in range(kernel[0])
        for l in range(kernel[1])
    )


def _shape4(shape: Any, name: str, axes: str) -> tuple[int, int, int, int]:
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise ConvSpecError(f"{name} shape must be a sequence of ints, got {shorten(shape)}", name)
    items = tuple(shape)
    if not all(is_int(d) for d in items):  # "3" or 3.7 would be silently turned into 3
        raise ConvSpecError(f"{name} shape must be a sequence of ints, got {shorten(items)}", name)
    dims = tuple(int(d) for d in items)
    if len(dims) != 4:
        raise ConvSpecError(f"{name} must have 4 dimensions {axes}, got {len(dims)}: shape {shorten(dims)}", name)
    if any(d < 1 for d in dims):
        raise ConvSpecError(f"{name} dimensions must all be at least 1, got shape {shorten(dims)}", name)
    return dims  # type: ignore[return-value]


def _same_padding(size: int, stride: int, extent: int) -> tuple[int, int]:
    """TensorFlow's "same": output ceil(size / stride), odd pixel after (bottom/right)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + extent - size, 0)
    before = total // 2
    return before, total - before


@dataclass(frozen=True)
class ConvSpec:
    """The resolved geometry of one 2-D convolution (NCHW input, OIHW weights).

    Attributes
    ----------
    x_shape : (N, C, H, W)
    w_shape : (F, C // groups, KH, KW)
    stride : (sh, sw), each >= 1
    padding : (top, bottom, left, right), each >= 0
    dilation : (dh, dw), each >= 1 (1 means none)
    groups : divides both C and F
    """

    x_shape: tuple[int, int, int, int]
    w_shape: tuple[int, int, int, int]
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    @classmethod
    def create(
        cls,
        x_shape: Sequence[int],
        w_shape: Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: PaddingArg = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
    ) -> ConvSpec:
        """Resolve and validate a spec from PyTorch-style arguments.

        ``padding`` is an int, an (h, w) pair, (top, bottom, left, right), ``"valid"``
        or ``"same"``. Raises ConvSpecError naming the parameter and the numbers.
        """
        xs = _shape4(x_shape, "x", "(N, C, H, W)")
        ws = _shape4(w_shape, "w", "(F, C/groups, KH, KW)")
        s = resolve_pair(stride, "stride")
        d = resolve_pair(dilation, "dilation")
        if min(s) < 1:
            raise ConvSpecError(f"stride must be at least 1, got {shorten(min(s))}", "stride")
        if min(d) < 1:
            raise ConvSpecError(
                f"dilation must be at least 1 (1 means none), got {shorten(min(d))}",
                "dilation",
            )
        if not is_int(groups) or int(groups) < 1:
            raise ConvSpecError(f"groups must be an int of at least 1, got {shorten(groups)}", "groups")
        for name, values in (("stride", s), ("dilation", d)):
            if max(values) > MAX_INDEX:
                raise ConvSpecError(
                    f"{name} must be at most 2^63 − 1 = {MAX_INDEX} (NumPy's largest index), "
                    f"got {shorten(max(values))}",
                    name,
                )
        g = int(groups)
        n, c, h, w = xs
        f, cg, kh, kw = ws
        if c % g:
            raise ConvSpecError(f"groups={shorten(g)} does not divide the input channels C={c}", "groups")
        if f % g:
            raise ConvSpecError(f"groups={shorten(g)} does not divide the filters F={f}", "groups")
        if cg != c // g:
            raise ConvSpecError(f"w has {cg} input channels, expected C/groups = {c}/{g} = {c // g}", "w")
        eh, ew = d[0] * (kh - 1) + 1, d[1] * (kw - 1) + 1
        pad = cls._resolve_padding(padding, (h, w), s, (eh, ew))
        spec = cls(xs, ws, s, pad, d, g)
        hp, wp = spec.padded_hw
        if max(pad) > MAX_INDEX:
            raise ConvSpecError(
                f"padding must be at most 2^63 − 1 = {MAX_INDEX} (NumPy's largest index), got {shorten(max(pad))}",
                "padding",
            )
        if n * c * hp * wp * 8 > MAX_INDEX:
            raise ConvSpecError(
                f"padding {shorten(pad)} makes the padded input {n}×{c}×{shorten(hp)}×{shorten(wp)}: "
                f"more than 2^63 − 1 bytes, larger than any array can be",
                "padding",
            )
        for axis, size, extent, k, dil, name in (
            ("rows", hp, eh, kh, d[0], "H"),
            ("columns", wp, ew, kw, d[1], "W"),
        ):
            if extent > size:
                how = f" with dilation {dil}" if dil > 1 else ""
                raise ConvSpecError(
                    f"kernel spans {extent} {axis}{how} (kernel {k}), padded input has {size} "
                    f"({name} plus padding): output size would be less than 1",
                    "w",
                )
        return spec

    @staticmethod
    def _resolve_padding(
        padding: PaddingArg,
        hw: tuple[int, int],
        stride: tuple[int, int],
        extent: tuple[int, int],
    ) -> tuple[int, int, int, int]:
        if isinstance(padding, str):
            mode = padding.lower()
            if mode == "valid":
                return (0, 0, 0, 0)
            if mode == "same":
                top, bottom = _same_padding(hw[0], stride[0], extent[0])
                left, right = _same_padding(hw[1], stride[1], extent[1])
                return (top, bottom, left, right)
            raise ConvSpecError(
                f"padding must be an int, a pair, four ints, 'same' or 'valid', got {shorten(padding)}",
                "padding",
            )
        return resolve_padding4(padding, "padding")

    # -- shapes -----------------------------------------------------------------------

    # the conventional one-letter names: x is (N, C, H, W), w is (F, C/groups, KH, KW)
    N = property(lambda self: self.x_shape[0], doc="images in the batch")
    C = property(lambda self: self.x_shape[1], doc="input channels")
    H = property(lambda self: self.x_shape[2], doc="input rows")
    W = property(lambda self: self.x_shape[3], doc="input columns")
    F = property(lambda self: self.w_shape[0], doc="filters (output channels)")
    KH = property(lambda self: self.w_shape[2], doc="kernel rows")
    KW = property(lambda self: self.w_shape[3], doc="kernel columns")

    @property
    def channels_per_group(self) -> int:
        return self.C // self.groups

    @property
    def filters_per_group(self) -> int:
        return self.F // self.groups

    @cached_property  # (a frozen spec: computed once; the tight paths ask often)
    def kernel_extent(self) -> tuple[int, int]:
        """Rows and columns one window spans on the padded input: d·(K−1)+1."""
        return (
            self.dilation[0] * (self.KH - 1) + 1,
            self.dilation[1] * (self.KW - 1) + 1,
        )

    @cached_property
    def padded_hw(self) -> tuple[int, int]:
        top, bottom, left, right = self.padding
        return (self.H + top + bottom, self.W + left + right)

    @cached_property
    def padded_shape(self) -> tuple[int, int, int, int]:
        """Shape of the padded input xp: (N, C, H + top + bottom, W + left + right)."""
        return (self.N, self.C, *self.padded_hw)

    @cached_property
    def out_hw(self) -> tuple[int, int]:
        """(Ho, Wo) = floor((padded − extent) / stride) + 1 per axis."""
        (hp, wp), (eh, ew) = self.padded_hw, self.kernel_extent
        return ((hp - eh) // self.stride[0] + 1, (wp - ew) // self.stride[1] + 1)

    @cached_property
    def out_shape(self) -> tuple[int, int, int, int]:
        """Shape of z and out: (N, F, Ho, Wo)."""
        return (self.N, self.F, *self.out_hw)

    @cached_property
    def reached_hw(self) -> tuple[int, int]:
        """Rows and columns of the padded input that some window reads; the rest
        (floor truncation) never contribute and get zero gradient."""
        (ho, wo), (eh, ew) = self.out_hw, self.kernel_extent
        return ((ho - 1) * self.stride[0] + eh, (wo - 1) * self.stride[1] + ew)

    @cached_property
    def tap_slices(self) -> tuple[tuple[int, int, slice, slice], ...]:
        """Per kernel tap (k, l), row-major: (k, l, rows, columns), the rows and columns
        of the padded input it reads, one per output row and column."""
        return tap_slices(self.out_hw, self.stride, self.dilation, (self.KH, self.KW))

    @cached_property
    def macs_per_output(self) -> int:
        """Multiply-accumulates in one output value: C/groups · KH · KW."""
        return self.channels_per_group * self.KH * self.KW

    def group_of_filter(self, f: int) -> int:
        return f // self.filters_per_group

    def channels_of_filter(self, f: int) -> range:
        """The input channels filter ``f`` reads (those of its group)."""
        c0 = self.group_of_filter(f) * self.channels_per_group
        return range(c0, c0 + self.channels_per_group)

    def window_origin(self, i: int, j: int) -> tuple[int, int]:
        """Top-left cell, on the padded input, of the window of output position (i, j)."""
        return (i * self.stride[0], j * self.stride[1])

    def check_shape(self, name: str, shape: Sequence[int], expected: Sequence[int]) -> None:
        """Raise ConvSpecError unless ``shape`` equals ``expected``."""
        if tuple(shape) != tuple(expected):
            raise ConvSpecError(f"{name} has shape {tuple(shape)}, expected {tuple(expected)}", name)

    def to_dict(self) -> dict[str, Any]:
        """The resolved spec as plain JSON-ready data."""
        return {
            "x_shape": list(self.x_shape),
            "w_shape": list(self.w_shape),
            "stride": list(self.stride),
            "padding": list(self.padding),
            "dilation": list(self.dilation),
            "groups": self.groups,
            "kernel_extent": list(self.kernel_extent),
            "padded_shape": list(self.padded_shape),
            "out_shape": list(self.out_shape),
        }
