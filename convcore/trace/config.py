"""The trace config: a plain dict (the server's request body) -> a frozen ResolvedConfig.

Every key has a default; an invalid value raises ``TraceConfigError`` whose ``.field``
is the key at fault and whose message names the allowed values and the numbers.

| key           | values                                             | default            |
|---------------|----------------------------------------------------|--------------------|
| layer         | "conv2d", "conv_transpose2d" (``transpose_layer``) or "conv1d" (``sequence_layer``) | "conv2d" |
| x             | nested lists or a fill spec, (N,C,H,W) / NHWC      | 1×1×5×5 randint [−2, 2], seed 0 |
| w             | nested lists or a fill spec, (F,C/g,KH,KW) / HWIO  | 1×1×3×3 randint [−1, 1], seed 1 |
| b             | (F,) list, fill spec or null                       | null (no bias)     |
| dout          | nested lists, fill spec or null (= ones); a fill spec may omit its shape (= the output's) | null |
| layout        | "NCHW" or "NHWC" (then x is NHWC, w HWIO, dout NHWC); conv1d: "NCL" or "NLC" | "NCHW" ("NCL") |
| stride, padding, dilation, groups | as ``ConvSpec.create`` (conv1d: ``conv1d_spec``, padding "causal" too) | 1, 0, 1, 1 |
| output_padding | conv_transpose2d only: int or (h, w), below the stride | 0                |
| padding_mode  | zeros, reflect, replicate, circular (PyTorch's)    | "zeros"            |
| flip          | true: a convolution (the kernel rotated 180°)      | false              |
| activation    | identity, relu, leaky_relu, sigmoid, tanh          | "identity"         |
| view          | a registered view: direct (im2col, transposed)     | "direct"           |
| granularity   | "window" or "mac"                                  | "window"           |
| loop_order    | a permutation of the view's loop letters           | the letters        |
| dx_loop_order | the same letters; order of the separate dx phase (direct view, backward "separate" only) | = loop_order |
| backward      | "fused" or "separate"                              | "fused"            |
| phases        | "forward", "backward" or "both"                    | "both"             |
| copies        | "one" (a copy phase is one step) or "each" (one step per row) | "one"   |
| code          | "auto", "cs231n", "torch" or "layer": the listing beside the steps (``code``) | "auto" |

Padding modes. With ``padding_mode`` other than "zeros" the pad phase writes xp's
padding too, each cell copied from the input cell the mode names, and the backward
ends with a ``fold`` phase instead of ``crop``: dx is dxp's interior plus each padded
cell's gradient added onto the cell it copied. CS231n's and the layer's code cannot say
a mode, so such a trace has no listing (``code`` "auto" gives none; a named one is refused).

Flip. With ``flip`` true the layer convolves in the signal-processing sense: a ``flip``
phase writes ``wf``, the filters rotated 180°, the steps slide ``wf`` (and their
backward writes its gradient ``dwf``), and a last ``flip back`` phase rotates ``dwf``
onto ``dw``, the gradient of the filters as given. No listing either.

Layers. ``layer="conv_transpose2d"`` traces PyTorch's ConvTranspose2d
(``transpose_layer.py``): x (N, C_in, H, W), w (C_in, C_out/groups, KH, KW), b (C_out,),
dout the output's gradient dy (N, C_out, H_out, W_out); stride, padding (an int or an
(h, w) pair: rows and columns cropped from each side), ``output_padding``, dilation and
groups as ``F.conv_transpose2d`` takes them. Its ``spec`` is the Conv2d whose backward
to the input is the layer's forward (``transpose_layer.conv_spec``), its
``transpose_spec`` the layer's own geometry. NCHW, the direct view (the stamps) or the
transposed view (their gather) at window granularity, the identity activation and zero
padding only; no listing.

Layer ``conv1d`` traces PyTorch's Conv1d (``sequence_layer.py``): x (N, C, L), w
(F, C/groups, K), dout (N, F, L_out) in layout "NCL" (the default for the layer), or
(N, L, C), (K, C/groups, F), (N, L_out, F) in "NLC"; stride and dilation an int,
padding an int, (left, right), "valid", "same" or "causal" (``convcore.conv1d``). Its
``spec`` is the one-row Conv2d (N, C, 1, L) the engine computes; every view,
granularity, activation, padding mode and the flip apply; no listing. Its loop letters
are the view's without the row letters (``sequence_layer.ROW_LETTERS``): "nfj" for the
direct view's windows.

Copies. The pad and crop phases only copy numbers (x into the padded xp, dxp's interior
into dx). With ``copies="one"`` each is one step that writes the whole copy; with
``"each"`` one step per row of each input slice (N·C·H steps), for a lesson about
padding. Both replay to the same tensors.

Loop orders. The direct view's letters are n (image), f (filter), i, j (output row and
column) at window granularity, plus c (channel within the filter's group), k, l
(kernel row and column) at mac granularity. ``loop_order`` orders the forward pass, the
fused backward, and the separate db and dw phases (db uses the n, f, i, j letters in
the order they appear in it); ``dx_loop_order`` orders the separate dx phase. Seed 004's
loops are ``{"granularity": "mac", "backward": "separate", "loop_order": "nfijklc",
"dx_loop_order": "nijklfc"}``.

With NHWC the default x and w shapes are given in NHWC / HWIO ([1,5,5,1], [3,3,1,1]).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..activations import ACTIVATIONS, Activation, get_activation
from ..conv1d import conv1d_spec
from ..functional import check_flip
from ..messages import shorten
from ..padding_modes import PADDING_MODES, check_mode_fits
from ..spec import ConvSpec, ConvSpecError
from ..tensor_input import to_array
from ..transpose_spec import TransposeSpec
from .axes import SEQUENCE_LAYOUTS, kind_of, to_internal
from .code import CODE_CHOICES, CODE_TITLES, resolve_code
from .sequence_layer import SEQUENCE_AXES_WORDS, SEQUENCE_DEFAULT_SHAPES, engine_loop_order, sequence_letters
from .transpose_layer import conv_spec, transposed_settings_error
from .views import View, get_view, view_names

__all__ = [
    "CHOICES",
    "CHOICE_TITLES",
    "DEFAULTS",
    "DEFAULT_FILLS",
    "ResolvedConfig",
    "TraceConfigError",
    "resolve_config",
]


class TraceConfigError(ConvSpecError):
    """An invalid trace config; ``.field`` is the config key at fault."""


LAYERS = ("conv2d", "conv_transpose2d", "conv1d")
LAYER_TITLES = {
    "conv2d": "Conv2d",
    "conv_transpose2d": "ConvTranspose2d (transposed convolution)",
    "conv1d": "Conv1d (a sequence)",
}
IMAGE_LAYOUTS = ("NCHW", "NHWC")


DEFAULT_X = {"fill": "randint", "shape": [1, 1, 5, 5], "low": -2, "high": 2, "seed": 0}
DEFAULT_W = {"fill": "randint", "shape": [1, 1, 3, 3], "low": -1, "high": 1, "seed": 1}
_NHWC_SHAPES = {"x": [1, 5, 5, 1], "w": [3, 3, 1, 1]}

DEFAULTS: dict[str, Any] = {
    "layer": "conv2d",
    "x": DEFAULT_X,
    "w": DEFAULT_W,
    "b": None,
    "dout": None,
    "layout": "NCHW",
    "stride": 1,
    "padding": 0,
    "dilation": 1,
    "groups": 1,
    "output_padding": None,
    "padding_mode": "zeros",
    "flip": False,
    "activation": "identity",
    "view": "direct",
    "granularity": "window",
    "loop_order": None,
    "dx_loop_order": None,
    "backward": "fused",
    "phases": "both",
    "copies": "one",
    "code": "auto",
}

CHOICES = _CHOICES = {
    "layer": LAYERS,
    "layout": IMAGE_LAYOUTS + SEQUENCE_LAYOUTS,
    "padding_mode": PADDING_MODES,
    "granularity": ("window", "mac"),
    "backward": ("fused", "separate"),
    "phases": ("forward", "backward", "both"),
    "copies": ("one", "each"),
    "code": CODE_CHOICES,
}

# what each choice is called for people (a page's menus); the keys are _CHOICES's values
CHOICE_TITLES: dict[str, dict[str, str]] = {
    "layer": LAYER_TITLES,
    "layout": {
        "NCHW": "NCHW (x NCHW, w OIHW)",
        "NHWC": "NHWC (x NHWC, w HWIO)",
        "NCL": "NCL (x NCL, w FCK)",
        "NLC": "NLC (x NLC, w KCF)",
    },
    "padding_mode": {
        "zeros": "zeros",
        "reflect": "reflect (mirrored)",
        "replicate": "replicate (edge repeated)",
        "circular": "circular (wrapped)",
    },
    "granularity": {"window": "a window", "mac": "a multiply-add"},
    "backward": {"fused": "fused", "separate": "db, dW, dX apart"},
    "phases": {"both": "forward + backward", "forward": "forward only", "backward": "backward only"},
    "copies": {"one": "one step each", "each": "row by row"},
    "code": CODE_TITLES,
}

# the generator a tensor gets when a person turns it on or resizes typed values away
# (x and w as their defaults; b and dout random integers, each with its own seed)
DEFAULT_FILLS: dict[str, dict[str, Any]] = {
    "x": DEFAULT_X,
    "w": DEFAULT_W,
    "b": {"fill": "randint", "low": -1, "high": 1, "seed": 2},
    "dout": {"fill": "randint", "low": -2, "high": 2, "seed": 3},
}


_TRANSPOSED_AXES_WORDS = {
    "x": "(N, C_in, H, W)",
    "w": "(C_in, C_out/groups, KH, KW)",
    "dout": "(N, C_out, H_out, W_out)",
}

_AXES_WORDS = {
    ("x", "NCHW"): "(N, C, H, W)",
    ("x", "NHWC"): "(N, H, W, C)",
    ("w", "NCHW"): "(F, C/groups, KH, KW)",
    ("w", "NHWC"): "(KH, KW, C/groups, F)",
    ("dout", "NCHW"): "(N, F, Ho, Wo)",
    ("dout", "NHWC"): "(N, Ho, Wo, F)",
    **SEQUENCE_AXES_WORDS,
}


def _axes_words(key: str, layout: str, layer: str | None) -> str:
    """Input ``key``'s axes in words, as ``layer`` takes it in ``layout``."""
    if layer == "conv_transpose2d":
        return _TRANSPOSED_AXES_WORDS.get(key, "(C_out,)")
    return _AXES_WORDS.get((key, layout), "(F,)")


@dataclass(frozen=True, eq=False)
class ResolvedConfig:
    """A validated trace config; arrays are float64 in internal order.

    Attributes
    ----------
    spec : ConvSpec (NCHW / OIHW geometry)
    x : (N, C, H, W)
    w : (F, C/groups, KH, KW)
    b : (F,) or None (no bias)
    dout : (N, F, Ho, Wo) (ones when not given; ``dout_given`` says which)
    layout, view, granularity, loop_order, dx_loop_order, backward, phases, copies : str
    padding_mode : str ("zeros", "reflect", "replicate", "circular")
    flip : bool (True: the kernel rotated 180°, a true convolution)
    layer : "conv2d", "conv_transpose2d" or "conv1d"; for the second ``transpose_spec``
        is the layer's geometry, ``spec`` the Conv2d its steps reuse, x (N, C_in, H, W),
        w (C_in, C_out/groups, KH, KW), b (C_out,) and dout (N, C_out, H_out, W_out);
        for the third ``spec`` is the one-row Conv2d, x (N, C, 1, L), w (F, C/g, 1, K)
        and dout (N, F, 1, L_out), and ``layout`` "NCL" or "NLC"
    causal : conv1d's padding "causal" (the left padding alone)
    activation : convcore.activations.Activation
    code : the convention of the listing beside the steps ("cs231n", "torch", "layer"),
        or None when there is none for the setting (``convcore.trace.code``)
    """

    spec: ConvSpec
    x: np.ndarray
    w: np.ndarray
    b: np.ndarray | None
    dout: np.ndarray
    dout_given: bool
    layout: str
    activation: Activation
    view: str
    granularity: str
    loop_order: str
    dx_loop_order: str
    backward: str
    phases: str
    copies: str = "one"
    code: str | None = None
    padding_mode: str = "zeros"
    flip: bool = False
    layer: str = "conv2d"
    transpose_spec: TransposeSpec | None = None
    causal: bool = False

    @property
    def has_bias(self) -> bool:
        return self.b is not None

    def header_settings(self, loop_order: str, dx_loop_order: str) -> dict[str, Any]:
        """The trace's settings as the header's ``spec`` states them, after its layer's
        geometry (the loop orders in the layer's letters); ``padding_mode`` and ``flip``
        only when used, so that every trace without them is byte for byte what it was."""
        return {
            "bias": self.has_bias,
            "dout": "given" if self.dout_given else "ones",
            "activation": self.activation.name,
            "activation_formula": self.activation.formula,
            "activation_derivative": self.activation.derivative_formula,
            "view": self.view,
            "granularity": self.granularity,
            "loop_order": loop_order,
            "dx_loop_order": dx_loop_order,
            "backward": self.backward,
            "layout": self.layout,
            "phases": self.phases,
            **({"padding_mode": self.padding_mode} if self.padding_mode != "zeros" else {}),
            **({"flip": True} if self.flip else {}),
        }

    @property
    def view_impl(self) -> View:
        return get_view(self.view)  # type: ignore[return-value]

    @property
    def forward_included(self) -> bool:
        return self.phases in ("forward", "both")

    @property
    def backward_included(self) -> bool:
        return self.phases in ("backward", "both")


def _choice(config: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = config.get(key, DEFAULTS[key])
    if value is None:
        value = DEFAULTS[key]
    if not isinstance(value, str) or value not in allowed:
        raise TraceConfigError(f"{key} must be one of {', '.join(repr(a) for a in allowed)}; got {shorten(value)}", key)
    return value


def _internal(arr: np.ndarray, name: str, layout: str) -> np.ndarray:
    """Input ``name`` given in ``layout`` (its rank checked) as the engine's internal
    4-D array (NCHW / OIHW; a sequence's one row restored), contiguous."""
    perm = kind_of(name).perm(layout)
    if not perm:
        return arr
    shape = [1] * 4
    for axis, size in zip(perm, arr.shape):
        shape[axis] = size
    return np.ascontiguousarray(to_internal(arr, perm, shape))


def _ncl(shape: tuple[int, ...]) -> tuple[int, ...]:
    """An internal one-row shape (N, C, 1, L) as a sequence's (N, C, L)."""
    return (*shape[:2], *shape[3:])


def _layout(config: Mapping[str, Any], layer: str) -> str:
    """The layout: an image's (NCHW, NHWC) for the 2-D layers, a sequence's (NCL, NLC)
    for conv1d, each defaulting to its first."""
    allowed = SEQUENCE_LAYOUTS if layer == "conv1d" else IMAGE_LAYOUTS
    value = config.get("layout")
    if value is None:
        return allowed[0]
    if not isinstance(value, str) or value not in allowed:
        raise TraceConfigError(
            f"layout must be one of {', '.join(repr(a) for a in allowed)} for layer {layer!r}; got {shorten(value)}",
            "layout",
        )
    return value


def _loop_order(config: Mapping[str, Any], key: str, letters: str, where: str, default: str) -> str:
    value = config.get(key)
    if value is None:
        return default
    if not isinstance(value, str) or len(value) != len(letters) or sorted(value) != sorted(letters):
        raise TraceConfigError(
            f"{key} must be a permutation of the letters {letters!r} (each once) for {where}; got {shorten(value)}",
            key,
        )
    return value


def _tensor(
    config: Mapping[str, Any],
    key: str,
    layout: str,
    max_elements: int | None,
    max_abs: float | None,
    ndim: int,
    value: Any = None,
) -> np.ndarray:
    """The array of input ``key`` (``value`` instead of ``config[key]`` when given)."""
    value = config.get(key) if value is None else value
    if value is None:
        value = DEFAULTS[key]
    if layout == "NHWC" and key in _NHWC_SHAPES and config.get(key) is None:
        value = dict(value, shape=_NHWC_SHAPES[key])
    if layout in SEQUENCE_LAYOUTS and key in ("x", "w") and config.get(key) is None:
        value = dict(value, shape=SEQUENCE_DEFAULT_SHAPES[layout][key])
    words = _axes_words(key, layout, config.get("layer"))
    try:
        return to_array(
            value,
            key,
            ndim=ndim,
            axes=words,
            max_elements=max_elements,
            max_abs=max_abs,
        )
    except TraceConfigError:
        raise
    except ConvSpecError as exc:
        raise TraceConfigError(str(exc), exc.field or key) from exc


def resolve_config(
    config: Mapping[str, Any] | ResolvedConfig | None = None,
    *,
    max_elements: int | None = None,
    max_abs: float | None = None,
    check_spec: Callable[[ConvSpec, View], None] | None = None,
) -> ResolvedConfig:
    """Validate ``config`` and build its arrays (no reference results, no events).

    ``max_elements`` / ``max_abs`` bound every input tensor (checked before a fill is
    generated). ``check_spec(spec, view)``, when given, runs as soon as the geometry is
    known, before any output-sized array is made (a server's size limits raise there).
    A ResolvedConfig passes through unchanged. Raises TraceConfigError.
    """
    if isinstance(config, ResolvedConfig):
        return config
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise TraceConfigError(f"the config must be a dict of settings, got {type(config).__name__}", "config")
    unknown = [k for k in config if k not in DEFAULTS]
    if unknown:
        key = unknown[0]
        raise TraceConfigError(
            f"unknown config key {shorten(key)}; the keys are {', '.join(DEFAULTS)}",
            key if isinstance(key, str) and len(key) <= 40 else shorten(key),
        )

    layer = _choice(config, "layer", _CHOICES["layer"])
    layout = _layout(config, layer)
    padding_mode = _choice(config, "padding_mode", _CHOICES["padding_mode"])
    try:
        flip = check_flip(DEFAULTS["flip"] if config.get("flip") is None else config["flip"])
    except ConvSpecError as exc:
        raise TraceConfigError(str(exc), "flip") from exc
    granularity = _choice(config, "granularity", _CHOICES["granularity"])
    backward = _choice(config, "backward", _CHOICES["backward"])
    phases = _choice(config, "phases", _CHOICES["phases"])
    copies = _choice(config, "copies", _CHOICES["copies"])
    code = _choice(config, "code", _CHOICES["code"])
    view_name = config.get("view", DEFAULTS["view"])
    view_name = DEFAULTS["view"] if view_name is None else view_name
    view = get_view(view_name) if isinstance(view_name, str) else None
    if view is None:
        raise TraceConfigError(
            f"view must be one of {', '.join(repr(v) for v in view_names())}; got {shorten(view_name)}",
            "view",
        )
    if granularity not in view.granularities:
        raise TraceConfigError(
            f"granularity must be one of {', '.join(repr(g) for g in view.granularities)} "
            f"for the {view.name} view; got {granularity!r}",
            "granularity",
        )
    letters = view.loop_letters(granularity)
    where = f"the {view.name} view at {granularity} granularity"
    if layer == "conv1d":  # a sequence's letters, no row loops (sequence_layer.py)
        shown_letters = sequence_letters(letters)
        where += " of a sequence"
    else:
        shown_letters = letters
    loop_order = _loop_order(config, "loop_order", shown_letters, where, shown_letters)
    dx_loop_order = _loop_order(config, "dx_loop_order", shown_letters, where, loop_order)
    if layer == "conv1d":
        loop_order, dx_loop_order = engine_loop_order(loop_order, letters), engine_loop_order(dx_loop_order, letters)
    if config.get("dx_loop_order") is not None and (view.name != "direct" or backward != "separate"):
        # only the direct view's separate dx phase has an order of its own; elsewhere the
        # setting would be silently ignored
        got = f"view {view.name!r}" if view.name != "direct" else f"backward {backward!r}"
        raise TraceConfigError(
            "dx_loop_order orders the separate dx phase, so it applies only with view 'direct' "
            f"and backward 'separate'; got {got} (leave dx_loop_order out)",
            "dx_loop_order",
        )
    try:
        activation = get_activation(
            DEFAULTS["activation"] if config.get("activation") is None else config["activation"]
        )
    except ConvSpecError as exc:
        raise TraceConfigError(str(exc), "activation") from exc

    if layer == "conv_transpose2d":
        shown = {"layout": layout, "activation": activation.name, "view": view.name, "granularity": granularity}
        shown |= {"backward": backward, "padding_mode": padding_mode, "flip": flip}
        refused = transposed_settings_error(shown)
        if refused:
            raise TraceConfigError(refused[1], refused[0])
    elif config.get("output_padding") is not None:
        raise TraceConfigError(
            "output_padding applies to layer 'conv_transpose2d' (it picks the output size of a transposed "
            f"convolution); got {shorten(config['output_padding'])} with layer {layer!r}",
            "output_padding",
        )
    sequence = layer == "conv1d"
    rank = 3 if sequence else 4
    x = _tensor(config, "x", layout, max_elements, max_abs, rank)
    w = _tensor(config, "w", layout, max_elements, max_abs, rank)
    x, w = _internal(x, "x", layout), _internal(w, "w", layout)
    geometry = {
        k: DEFAULTS[k] if config.get(k) is None else config[k] for k in ("stride", "padding", "dilation", "groups")
    }
    transposed = None
    try:
        if layer == "conv_transpose2d":
            op = 0 if config.get("output_padding") is None else config["output_padding"]
            transposed = TransposeSpec.create(x.shape, w.shape, output_padding=op, **geometry)
            spec = conv_spec(transposed)
        elif sequence:  # (x, w: the one-row Conv2d the engine computes, its shapes in 1-D words)
            spec = conv1d_spec(_ncl(x.shape), _ncl(w.shape), *geometry.values())
        else:
            spec = ConvSpec.create(x.shape, w.shape, *geometry.values())
        check_mode_fits(padding_mode, spec.padding, spec.x_shape[2:], ("H", "L") if sequence else ("H", "W"))
    except ConvSpecError as exc:
        raise TraceConfigError(str(exc), exc.field) from exc
    if check_spec is not None:
        check_spec(spec, view)  # a caller's limits, before dout (output-sized) is made

    setting = {
        "view": view.name,
        "granularity": granularity,
        "backward": backward,
        "loop_order": loop_order,
        "dx_loop_order": dx_loop_order,
        "phases": phases,
    }
    if padding_mode != "zeros" or flip or layer != "conv2d":
        if code != "auto":
            if layer != "conv2d":
                what = f"layer {layer!r}: the listings are Conv2d's code"
            elif padding_mode != "zeros":
                what = f"padding_mode {padding_mode!r}: the listings pad with zeros"
            else:
                what = "flip (a true convolution): the listings correlate"
            raise TraceConfigError(
                f"code {code!r} has no listing for {what} (code 'auto' traces it without a listing)", "code"
            )
        code = None
    else:
        code, no_code = resolve_code(code, spec, layout, **setting)
        if no_code:
            raise TraceConfigError(no_code, "code")

    b = None
    if config.get("b") is not None:
        b = _tensor(config, "b", layout, max_elements, max_abs, 1)
        channels = spec.F if transposed is None else transposed.C_out
        if b.shape != (channels,):
            what = "one bias per filter" if transposed is None else "one bias per output channel, C_out"
            raise TraceConfigError(f"b has shape {b.shape}, expected ({channels},): {what}", "b")

    dout_given = config.get("dout") is not None
    out_shape = spec.out_shape if transposed is None else transposed.out_shape
    if dout_given:
        perm = kind_of("dout").perm(layout)
        expected = tuple(out_shape[p] for p in perm) if perm else out_shape
        value = config["dout"]
        if isinstance(value, Mapping) and "fill" in value and value.get("shape") is None:
            value = dict(value, shape=list(expected))  # a fill spec without shape: the output's
        dout = _tensor(config, "dout", layout, max_elements, max_abs, rank, value)
        if dout.shape != expected:
            words = _axes_words("dout", layout, layer)
            raise TraceConfigError(
                f"dout has shape {dout.shape}, expected {expected}: the output's shape {words}",
                "dout",
            )
        dout = _internal(dout, "dout", layout)
    else:
        dout = np.ones(out_shape)

    return ResolvedConfig(
        spec=spec,
        x=x,
        w=w,
        b=b,
        dout=dout,
        dout_given=dout_given,
        layout=layout,
        activation=activation,
        **setting,
        copies=copies,
        code=code,
        padding_mode=padding_mode,
        flip=flip,
        layer=layer,
        transpose_spec=transposed,
        causal=sequence and isinstance(config.get("padding"), str) and config["padding"].lower() == "causal",
    )


ACTIVATION_NAMES = tuple(ACTIVATIONS)
