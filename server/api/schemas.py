"""Pydantic models of every request and response body of the API.

Request fields that convcore validates (tensors, stride, padding, view...) are typed
``Any`` with a documented JSON schema: the OpenAPI schema says what is accepted, and
the error for a bad value comes from convcore, whose messages name the field, the
index path and the numbers (a pydantic union error would not). Unknown keys are
refused (``extra="forbid"``), so a typo like ``strides`` is an error, not a default.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from convcore.activations import ACTIVATIONS
from convcore.fill import FILLS, MAX_SEED
from convcore.mistakes import lab_mistakes
from convcore.spec import MAX_INDEX
from convcore.trace.config import CHOICES
from convcore.trace.questions import KINDS as QUESTION_KINDS
from convcore.trace.questions import MAX_CLICK_CELLS
from convcore.trace.views import get_view, view_names

__all__ = [
    "ConvRequest",
    "ConvResult",
    "ErrorBody",
    "ErrorItem",
    "Health",
    "Limits",
    "MistakeEntry",
    "MistakeList",
    "Preset",
    "PresetList",
    "PresetSummary",
    "TraceConfig",
    "TraceDocument",
]

# -- documented shapes of the permissive request fields --------------------------------
# Every enum comes from convcore's registries and every bound stated here is the one
# convcore enforces: stride, dilation, padding and groups up to NumPy's largest index
# (ConvSpec; a padding that makes the padded input too large is a 413 below that), the
# seed by convcore.fill. Sizes and magnitudes are settings (max_tensor_elements,
# max_abs_value: see /api/health), so the schema names them instead of stating numbers.

BELOW = {"exclusiveMaximum": MAX_INDEX + 1}  # 2^63, exact as a JSON float (2^63 − 1 is not)
GRANULARITIES = sorted({g for name in view_names() for g in get_view(name).granularities})

_NUMBER = {"type": "number", "description": "A finite number, |value| at most max_abs_value (see /api/health)."}
_NESTED = {
    "type": "array",
    "description": "Nested lists of numbers, row-major; the shape comes from the nesting. At most "
    "max_tensor_elements numbers (see /api/health).",
    "minItems": 1,
    "items": {"anyOf": [_NUMBER, {"type": "array", "minItems": 1}]},
}
_FILL = {
    "type": "object",
    "title": "FillSpec",
    "description": (
        "A generated tensor: randint (low, high inclusive), normal (mean, std), "
        "uniform (low, high), arange (start, step), linspace (start, stop), zeros, "
        "ones, constant (value). The shape is bounded by max_tensor_elements before "
        "anything is generated."
    ),
    "required": ["fill", "shape"],
    "properties": {
        "fill": {"type": "string", "enum": list(FILLS)},
        "shape": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1},
            "minItems": 1,
            "maxItems": 4,
        },
        "seed": {"type": "integer", "minimum": 0, "maximum": MAX_SEED},
        **{name: {"type": "number"} for name in sorted({p for f in FILLS.values() for p in f.defaults})},
    },
}
_TENSOR = {"anyOf": [_NESTED, _FILL]}
# dout's fill spec may omit its shape: then it is the output's (the caller need not know it)
_DOUT_FILL = {
    **_FILL,
    "title": "DoutFillSpec",
    "required": ["fill"],
    "description": _FILL["description"] + " Without shape: the output's shape.",
}
_PAIR = {"type": "array", "items": {"type": "integer", "minimum": 1, **BELOW}, "minItems": 2, "maxItems": 2}
_ONE = {**_PAIR, "minItems": 1, "maxItems": 1}  # (conv1d's (s,))
_INT_OR_PAIR = {"anyOf": [{"type": "integer", "minimum": 1, **BELOW}, _ONE, _PAIR]}
_PAD = {"type": "integer", "minimum": 0, **BELOW}
_PADDING = {
    "anyOf": [
        _PAD,
        {"type": "array", "items": _PAD, "minItems": 1, "maxItems": 2},
        {"type": "array", "items": _PAD, "minItems": 4, "maxItems": 4},
        {"type": "string", "enum": ["same", "valid", "causal"]},
    ]
}


def _doc(schema: dict[str, Any], description: str) -> Any:
    """A permissive ``Any`` field documented with ``schema``."""
    return Annotated[Any, WithJsonSchema({**schema, "description": description})]


def _choice(values: list[str], description: str) -> Any:
    return _doc({"type": "string", "enum": values}, description)


TensorField = _doc(_TENSOR, "Nested lists of numbers or a fill spec.")


class ConvRequest(BaseModel):
    """A convolution layer and its inputs, with PyTorch's parameter names.

    Omitted keys take convcore's defaults (see the trace contract).
    """

    model_config = ConfigDict(extra="forbid")

    layer: _choice(
        list(CHOICES["layer"]),
        "'conv2d' (default), 'conv_transpose2d': PyTorch's ConvTranspose2d, x (N, C_in, H, W), w (C_in, "
        "C_out/groups, KH, KW), b (C_out,), dout (N, C_out, H_out, W_out); NCHW, the identity activation, zero "
        "padding, the direct or transposed view at window granularity; or 'conv1d': PyTorch's Conv1d, x (N, C, L), "
        "w (F, C/groups, K), dout (N, F, L_out) in layout NCL (the default for it) or (N, L, C), (K, C/groups, F), "
        "(N, L_out, F) in NLC; padding 'causal' pads the left side alone.",
    ) = None

    x: _doc(_TENSOR, "Input, (N, C, H, W) for NCHW or (N, H, W, C) for NHWC; conv1d: (N, C, L) or (N, L, C).") = None
    w: _doc(
        _TENSOR,
        "Weights, (F, C/groups, KH, KW) for NCHW (OIHW) or (KH, KW, C/groups, F) for NHWC (HWIO); conv1d: "
        "(F, C/groups, K) for NCL, (K, C/groups, F) for NLC.",
    ) = None
    b: _doc({"anyOf": [_TENSOR, {"type": "null"}]}, "Bias (F,); null means no bias.") = None
    dout: _doc(
        {"anyOf": [_NESTED, _DOUT_FILL, {"type": "null"}]},
        "Upstream gradient of out, the output's shape; omitted or null means ones (loss = sum of outputs).",
    ) = None
    layout: _choice(
        list(CHOICES["layout"]),
        "NCHW (x NCHW, w OIHW) or NHWC (x NHWC, w HWIO); for conv1d NCL (the default) or NLC.",
    ) = None
    stride: _doc(_INT_OR_PAIR, "int or [h, w], at least 1; conv1d: an int or [s].") = None
    padding: _doc(
        _PADDING,
        "int, [h, w], [top, bottom, left, right], 'same' or 'valid'; conv1d: int, [p], [left, right], 'same', "
        "'valid' or 'causal' (dilation·(K−1) on the left only).",
    ) = None
    dilation: _doc(_INT_OR_PAIR, "int or [h, w]; 1 means none; conv1d: an int or [d].") = None
    groups: _doc({"type": "integer", "minimum": 1}, "Divides both C and F.") = None
    activation: _choice(list(ACTIVATIONS), "Applied after the convolution: out = act(z).") = None
    output_padding: _doc(
        {"anyOf": [{"type": "integer", "minimum": 0, **BELOW}, {**_PAIR, "items": {"type": "integer", "minimum": 0}}]},
        "conv_transpose2d only: rows (columns) added below (right of) the stamps before the crop, int or [h, w], "
        "smaller than the stride: it picks the output size H_out = (H−1)·stride − 2·padding + dilation·(KH−1) + "
        "output_padding + 1.",
    ) = None
    padding_mode: _choice(
        list(CHOICES["padding_mode"]),
        "How the padding is filled, as torch.nn.Conv2d's padding_mode: 'zeros' (default), 'reflect' (mirrored "
        "about the edge cell), 'replicate' (the edge cell repeated) or 'circular' (wrapped around). A mode that "
        "copies sends the padding's gradient back onto the cells it copied (the trace's 'fold' phase). Reflect "
        "padding must be smaller than the input, circular at most its size.",
    ) = None
    flip: _doc(
        {"type": "boolean"},
        "true: a convolution as signal processing defines it, the kernel rotated 180° (PyTorch's conv2d of "
        "torch.flip(w, (2, 3))); false (default): cross-correlation, what deep learning calls convolution. dw is "
        "the gradient of w as given.",
    ) = None

    def config(self) -> dict[str, Any]:
        """The keys the caller sent, as the plain config dict convcore takes."""
        return {name: getattr(self, name) for name in self.model_fields_set}


class TraceConfig(ConvRequest):
    """The trace config of ``convcore.trace``: a layer, its inputs and how to show it."""

    view: _choice(view_names(), "Which algorithm the steps follow.") = None
    granularity: _choice(GRANULARITIES, "One event per output position or per multiply-accumulate.") = None
    loop_order: _doc(
        {"type": "string", "pattern": "^[a-z]{1,8}$"},
        "A permutation of the view's loop letters, e.g. 'nfij' (direct, window).",
    ) = None
    dx_loop_order: _doc(
        {"type": "string", "pattern": "^[a-z]{1,8}$"},
        "Loop order of the separate dX phase (default: loop_order).",
    ) = None
    backward: _choice(
        list(CHOICES["backward"]), "Fused: db, dW, dX per output position; separate: one after another."
    ) = None
    phases: _choice(list(CHOICES["phases"]), "Which passes to trace.") = None
    copies: _choice(
        list(CHOICES["copies"]),
        "The pad and crop phases, which only copy numbers: one step each (default) or one step per row.",
    ) = None
    code: _choice(
        list(CHOICES["code"]),
        "The listing beside the steps (header `code`, each event's `line`): 'cs231n' (conv_forward_naive / "
        "conv_backward_naive), 'torch' (conv2d_forward / conv2d_backward), 'layer' (seed 001's NHWC layer) "
        "or 'auto' (default: NCHW lessons in CS231n's code, NHWC in the layer's, what CS231n cannot say "
        "(a stride or padding per axis, dilation, groups) in the torch style). A named convention without a "
        "listing for the setting is refused (field `code`); 'auto' without one gives `code` null.",
    ) = None
    compare: _doc(
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                name: {
                    "anyOf": [
                        {
                            "type": "array",
                            "description": "Nested lists of numbers, row-major, of any shape: one that is not "
                            "the trace's (an empty crop's [[[]]] too) is compared as a wrong shape.",
                        },
                        {"type": "null", "description": "Nothing was returned for it."},
                    ]
                }
                for name in ("out", "y", "dx", "dw", "db")
            },
        },
        "Your own result tensors (out, dx, dw, db; a conv_transpose2d's output is y), in the request's "
        "layout, to compare with the trace's: the document's `comparison` says per tensor which cells "
        "differ, with the expected and your value, or that its shape is not the trace's, or that it is None.",
    ) = None

    mistake: _doc(
        {"type": "string", "enum": [m.id for m in lab_mistakes()]},
        "A catalogued mistake (GET /api/mistakes): the events are then the steps of the mistaken code, "
        "and the header adds mistake, truth, differences, failures, first_divergence and divergence "
        "(docs/trace-format.md, 'Mistake traces').",
    ) = None

    def config(self) -> dict[str, Any]:
        """The trace config without ``compare`` and ``mistake`` (which the trace does not compute with)."""
        return {name: value for name, value in super().config().items() if name not in ("compare", "mistake")}


# -- errors ---------------------------------------------------------------------------


class ErrorItem(BaseModel):
    loc: list[str | int] = Field(description="Where the problem is, e.g. ['body', 'stride'].")
    msg: str = Field(description="What is wrong, with the numbers.")
    type: str


class ErrorBody(BaseModel):
    """FastAPI's error shape, also used for 413 (too large)."""

    detail: list[ErrorItem]


# -- health and presets ---------------------------------------------------------------


class Limits(BaseModel):
    max_tensor_elements: int = Field(description="Elements allowed in any one tensor of a trace.")
    max_events: int = Field(description="Events allowed in one trace.")
    max_trace_bytes: int = Field(description="Predicted bytes allowed for one trace (an upper bound of its reply).")
    max_work: int = Field(description="Predicted work allowed for one trace (events + cells written / 32).")
    max_body_bytes: int = Field(description="Bytes allowed in one request body.")
    max_abs_value: float = Field(description="Largest magnitude of an input number.")
    max_builds: int = Field(description="Traces built at once by one worker; more wait, then get 503.")
    queue_timeout: float = Field(description="Seconds a request waits for a build slot before its 503.")
    request_timeout: float = Field(description="Seconds a client has to send the whole request (headers and body).")
    idle_timeout: float = Field(description="Seconds a reply waits for a client that does not read.")
    min_send_rate: float = Field(
        description="Bytes per second a client must read a reply at, after send_grace seconds."
    )
    send_grace: float = Field(description="Seconds a reply may take before min_send_rate applies.")


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    trace_schema: str = Field(description="The schema of trace documents, e.g. convscope.trace/3.")
    encoder: str = Field(description="The JSON encoder of large bodies (orjson or json).")
    limits: Limits


class PresetSummary(BaseModel):
    name: str
    title: str
    teaches: str = Field(description="One sentence on what the preset teaches.")
    dout: str = Field(description="What the upstream gradient dout is in this preset.")


class Preset(PresetSummary):
    config: dict[str, Any] = Field(description="A trace config (the body of POST /api/trace).")


class PresetList(BaseModel):
    presets: list[PresetSummary]


# -- results --------------------------------------------------------------------------

_Nested = Annotated[list[Any], WithJsonSchema({"type": "array", "description": "Nested lists of numbers."})]


class ConvResult(BaseModel):
    """Forward and backward results of one convolution layer, in the request's layout."""

    spec: dict[str, Any] = Field(description="The resolved spec (shapes NCHW/OIHW, padding [t, b, l, r]...).")
    layout: str
    activation: str
    z: _Nested = Field(description="Pre-activation output.")
    out: _Nested = Field(description="out = activation(z).")
    dout: _Nested = Field(description="The upstream gradient used (ones when omitted).")
    dz: _Nested = Field(description="Gradient of z: dout times the activation's derivative.")
    dx: _Nested
    dw: _Nested
    db: list[float] = Field(description="Bias gradient (F,), given whether or not the layer has a bias.")


class Box(BaseModel):
    model_config = ConfigDict(extra="allow")
    tensor: str
    start: list[int]
    stop: list[int]
    step: list[int]


class Write(Box):
    delta: list[float]
    value: list[float]


class Event(BaseModel):
    model_config = ConfigDict(extra="allow")
    phase: str
    loop: dict[str, int]
    reads: list[Box]
    writes: list[Write]
    text: str
    line: int | None = Field(
        None,
        description="The 1-based line of the header's `code` this step runs (where it writes; of its last "
        "write); null for a step the listing has no line for. Absent when the header's `code` is null.",
    )
    lines: list[int] | None = Field(
        None, description="The lines of its writes, in order (a fused backward step: the db, dw and dxp lines)."
    )
    scalars: dict[str, float] | None = Field(
        None, description="The values of the scalars its lines read, e.g. {'g': 2} for g = dout[n, f, i, j]."
    )


class TraceCode(BaseModel):
    """The listing beside the steps: the plain loops a student writes for this setting."""

    model_config = ConfigDict(extra="allow")
    convention: str = Field(description="cs231n, torch or layer.")
    name: str = Field(description="The listing's files, e.g. cs231n/forward_window + cs231n/backward_window_fused.")
    lines: list[str] = Field(description="The listing, one string a line; events' `line` is 1-based in it.")


class TensorData(BaseModel):
    model_config = ConfigDict(extra="allow")
    shape: list[int]
    data: list[float] = Field(description="Flat, row-major.")
    axes: list[str]
    grid: list[str | None]
    role: str


class Phase(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    start: int
    stop: int


class GradientCheck(BaseModel):
    """The server's check of the trace's dx, dw and db against directional derivatives
    of the forward pass along random directions (``convcore.gradcheck.directional_check``)."""

    method: str
    directions: int
    max_rel_error: float


class TraceDocument(BaseModel):
    """A whole trace (schema convscope.trace/3): header fields plus every event."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    schema_: str = Field(alias="schema")
    spec: dict[str, Any]
    tensors: dict[str, TensorData]
    aliases: dict[str, str] = Field(
        description="Tensors that are another tensor of this trace and so are not in `tensors`: {name: the "
        "tensor that stands for it}. Without padding xp is x and dxp is dx (no pad or crop phase); with the "
        "identity activation z is out and dz is dout (no activation phases).",
    )
    loop_names: dict[str, str] = Field(description="Each letter of the events' `loop` in words (i: output row, ...).")
    phases: list[Phase]
    code: TraceCode | None = Field(
        None,
        description="The listing of the trace's setting in the config's `code` convention; null when there is "
        "none (the im2col and transposed views, ...). A mistake trace's is the mistaken code, with `changed` "
        "(its lines that differ from the correct listing) and `correct` (that listing's lines).",
    )
    events: list[Event]
    total_events: int
    check: GradientCheck | None = Field(
        None, description="The gradients verified against the forward pass; null without a backward pass."
    )
    comparison: dict[str, Any] | None = Field(
        None,
        description="Only with `compare` in the request: per tensor sent, {name, match, kind ('match', "
        "'wrong shape', 'wrong values', 'not numbers'), expected_shape, got_shape, differing: [{index, flat, "
        "expected, got}] (at most 20), differing_count, differing_flat (every differing cell's flat index), message}.",
    )
    mistake: dict[str, Any] | None = Field(
        None,
        description="Only with `mistake` in the request: the catalogue entry (id, title, wrong, should, "
        "source, convention); the events are the mistaken code's steps.",
    )
    truth: dict[str, Any] | None = Field(
        None, description="Mistake traces: the true out, dx, dw, db as {shape, data}, the request's layout."
    )
    differences: dict[str, Any] | None = Field(
        None,
        description="Mistake traces: per output the code returned, its comparison with the truth "
        "(the format of `comparison`).",
    )
    failures: dict[str, Any] | None = Field(
        None,
        description="Mistake traces: per output the code did not return, {kind (the exception's name or "
        "'empty array'), message (NumPy's), event (where the trace stopped, or null)}.",
    )
    first_divergence: int | None = Field(
        None,
        description="Mistake traces: the first event whose writes differ from the correct code's at that "
        "step (null when none does).",
    )
    divergence: dict[str, Any] | None = Field(
        None,
        description="Mistake traces: {event, stopped, phase, did, should, wrong, fix, line}: that step, what "
        "the code did there and what it should have done, and the line of `code` where it diverged.",
    )


class MistakeEntry(BaseModel):
    """One catalogued mistake, for the page's "Common mistakes" lessons."""

    id: str
    title: str
    wrong: str = Field(description="What the code does wrong, in one sentence.")
    should: str = Field(description="What it should do instead, in one sentence.")
    source: str = Field(description="Where it comes from: a seed file and its construct, or a public source.")
    convention: str = Field(description="cs231n, layer or torch: the code's calling convention.")
    convention_title: str
    conditions: dict[str, dict[str, Any]] = Field(
        description="Per affected output: {words: when it shows, exact: whether that is also necessary}."
    )
    setup: dict[str, Any] = Field(description="The smallest setup in which it shows (sizes, stride, padding ...).")
    request: dict[str, Any] = Field(description="That setup as a ready body of POST /api/trace, `mistake` included.")
    first_divergence: int | None = Field(description="The event where its trace of the setup first differs.")
    divergence_phase: str | None = Field(description="The phase of that event.")
    failures: list[str] = Field(description="The outputs its code does not return on the setup (raises or empty).")


class MistakeList(BaseModel):
    mistakes: list[MistakeEntry]


NDJSON_DESCRIPTION = (
    "NDJSON, one JSON object per line: a header line "
    '{"type": "header", ...the document without events}, one line per event '
    '{"type": "event", ...event}, then {"type": "end", "total_events": n}. An error '
    'after the header is a last line {"type": "error", "detail": [{"loc", "msg", "type"}]}.'
)

NDJSON_LINE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"type": "string", "enum": ["header", "event", "end", "error"]}},
}


# -- questions (predict, then reveal) ---------------------------------------------------


class QuestionsRequest(BaseModel):
    """A trace config and one of its steps: what to ask about before the step is shown."""

    model_config = ConfigDict(extra="forbid")

    config: TraceConfig = Field(description="The trace config, as POST /api/trace takes it.")
    step: int = Field(ge=0, le=MAX_INDEX, description="The step asked about: an event's index, from 0.")


class Question(BaseModel):
    """One question about a step, with its answer and what explains it."""

    model_config = ConfigDict(extra="allow")

    kind: Literal[QUESTION_KINDS] = Field(
        description="value: what a written cell holds after the step (a number, right to six significant "
        "digits, the trace's precision: `accept` is the interval of numbers judged right; `cell` names it); "
        "reads: the cells of `answer.tensor` the step reads (`answer.cells`, indices in the header's axis order); "
        "writes: every cell the step writes ([{tensor, index}]); reads and writes are asked of at most "
        f"{MAX_CLICK_CELLS} cells (they are clicked one by one); shape: out's shape (at the forward's first step); changes: whether the step "
        "changes any cell (at the activation steps: false where the ReLU is dead)."
    )
    prompt: str = Field(description="The question, as the page asks it.")
    answer: Any = Field(description="The answer, from the trace (see `kind`).")
    explanation: str = Field(description="What the answer is made of, then the step's own text.")
