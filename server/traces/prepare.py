"""The service's use of ``convcore.trace``: check, resolve, cost, build, in that order.

Every route that computes goes through ``prepare``: the declared input sizes are held
to the limits on the request's numbers (``input_sizes.check_inputs``, before any fill is
generated), convcore resolves and validates the config once (``resolve_config``; the
input_sizes and the build share the result), the derived tensor sizes and the trace's cost
(``convcore.trace.cost.trace_cost``: events, predicted bytes, CPU work, nothing
generated) are held to the limits. Only then is a trace generated. convcore's errors
become 422s at ``["body", field]``, a limit a 413 naming the measure, its value and
the limit.

Builds are cancellable: ``document_bytes`` pulls and encodes the events in chunks and
stops at the next chunk once its ``cancel`` event is set (the client went away).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from convcore.conv_transpose import conv_transpose2d_backward, conv_transpose2d_forward
from convcore.gradcheck import directional_check
from convcore.layer import layer_results
from convcore.mistakes.lab import build_mistake_trace, iter_mistake_trace
from convcore.mistakes.lab_config import check_lab_config, lab_mistake, mistake_cost
from convcore.spec import ConvSpecError
from convcore.trace import iter_trace, resolve_config
from convcore.trace.axes import in_layout, kind_of, to_internal
from convcore.trace.cost import TraceCost, trace_cost
from convcore.trace.sequence_layer import sequence_spec

from ..http.encoding import encode_json
from ..http.errors import ApiError
from ..settings import Settings
from . import input_sizes
from .compare import comparison

__all__ = [
    "INPUT_ERRORS",
    "BuildCancelled",
    "DocumentCache",
    "Prepared",
    "conv_result",
    "document_bytes",
    "gradient_check",
    "prepare",
    "stream_lines",
]

# What convcore raises for input it cannot use: ConvSpecError (a 422 at its field) and
# MemoryError (a 413, see input_sizes.raise_for). Anything else is a bug and a 500.
INPUT_ERRORS = (ConvSpecError, MemoryError)

ENCODE_CHUNK_EVENTS = 256  # events encoded at once by a document build (and between looks at its cancel flag)


class BuildCancelled(Exception):
    """The client left; the build stopped."""


@dataclass(frozen=True)
class Prepared:
    """A config that passed every check: convcore's resolved config, its cost, and the
    tensors a request sent to compare with the trace's (if any)."""

    config: dict[str, Any]
    resolved: Any
    cost: TraceCost | None
    compare: Any = None
    mistake: str | None = None


def prepare(
    config: dict[str, Any], settings: Settings, count: bool = True, compare: Any = None, mistake: Any = None
) -> Prepared:
    """Check ``config`` against the limits and convcore's rules; raise ApiError if not.

    ``count``: also compute the trace's cost and hold it to the limits (the trace
    routes; ``/api/conv`` makes no events).
    ``compare``: a request's own tensors to compare with the trace's (``convscope.traces.compare``).
    ``mistake``: a catalogued mistake's id: the trace is then that mistake's
    (``convcore.mistakes.lab``), checked and costed as its code runs it.
    """
    input_sizes.check_inputs(config, settings)
    try:
        lab = lab_mistake(mistake) if mistake is not None else None
        resolved = resolve_config(
            config,
            max_elements=settings.max_tensor_elements,
            max_abs=settings.max_abs_value,
            check_spec=input_sizes.derived_check(settings),
        )
        if lab is not None:
            check_lab_config(resolved, lab)
    except INPUT_ERRORS as exc:
        raise input_sizes.raise_for(exc) from exc
    if lab is not None and compare is not None:
        raise ApiError(
            422,
            ["body", "compare"],
            "send compare or mistake, not both: a mistake trace compares "
            "the mistaken code with the truth itself (see its differences)",
            "value_error",
        )
    cost = None
    if count:
        cost = trace_cost(resolved) if lab is None else mistake_cost(resolved, lab)
        input_sizes.check_cost(cost, settings)
    return Prepared(config, resolved, cost, compare, None if lab is None else lab.id)


def gradient_check(prepared: Prepared, header: dict[str, Any]) -> dict[str, Any] | None:
    """Verify the gradients a trace header carries (dx, dw, db: what the page shows)
    against directional derivatives of the forward pass along random directions.

    Reads the header's own arrays (a trace made ``arrays=True``: 1-D float64 data,
    reshaped, the layout undone: ``axes.to_internal``): nothing is parsed or computed again.
    None when the trace has no backward results (phases "forward").
    """
    tensors = header["tensors"]
    rc = prepared.resolved
    if rc.layer == "conv_transpose2d":  # (dy at y, the layer's x, w, b: NCHW, identity)
        return _transposed_check(rc, tensors)
    dz_name = header["aliases"].get("dz", "dz")  # dout itself with the identity activation
    if "dx" not in tensors or "dw" not in tensors or dz_name not in tensors:
        return None

    def array(name: str, internal_shape: tuple[int, ...]) -> np.ndarray:
        data = np.asarray(tensors[name]["data"], dtype=np.float64)
        return to_internal(data.reshape(tensors[name]["shape"]), kind_of(name).perm(rc.layout), internal_shape)

    spec = rc.spec
    grads = {"dx": array("dx", spec.x_shape), "dw": array("dw", spec.w_shape)}
    if rc.b is not None and "db" in tensors:
        grads["db"] = array("db", (spec.F,))
    dz = array(dz_name, spec.out_shape)  # (N, F, Ho, Wo)
    return directional_check(rc.spec, rc.x, rc.w, rc.b, dz, grads, padding_mode=rc.padding_mode, flip=rc.flip)


def _transposed_check(rc: Any, tensors: dict[str, Any]) -> dict[str, Any] | None:
    """``gradient_check`` of a ConvTranspose2d trace: its dx, dw (and db) against the
    directional derivatives of its forward pass, linear in x and in w as a Conv2d's."""
    if "dx" not in tensors or "dw" not in tensors:
        return None
    kw = _transposed_args(rc)
    grads = {
        name: np.asarray(tensors[name]["data"], dtype=np.float64).reshape(tensors[name]["shape"])
        for name in ("dx", "dw")
    }
    if rc.b is not None and "db" in tensors:
        grads["db"] = np.asarray(tensors["db"]["data"], dtype=np.float64)
    forward = lambda xv, wv: conv_transpose2d_forward(xv, wv, None, **kw)  # noqa: E731
    return directional_check(rc.spec, rc.x, rc.w, rc.b, rc.dout, grads, forward=forward)


def _header_with_check(prepared: Prepared, lines: Iterator[dict[str, Any]]) -> dict[str, Any]:
    header = next(lines)
    header["check"] = gradient_check(prepared, header)
    if prepared.compare is not None:
        header["comparison"] = comparison(header, prepared.compare)
    return header


def document_bytes(prepared: Prepared, cancel: threading.Event | None = None) -> bytes:
    """The whole trace document of a prepared config, with its gradient check (and the
    comparison of the tensors sent to compare, if any), as JSON:
    the bytes ``encode_json`` gives for ``build_trace`` plus the check. Raises
    BuildCancelled within ``ENCODE_CHUNK_EVENTS`` events once ``cancel`` is set.

    The events are encoded a chunk at a time as they are generated, so only one chunk
    of event objects lives at once (the bytes are the document's size; whole, the
    objects were about three times it), and no single encoder call holds the GIL for
    long (the event loop gets it back between chunks).
    """
    if prepared.mistake is not None:
        return _mistake_document(prepared)
    try:
        lines = iter_trace(prepared.resolved, arrays=True)  # encode_json writes the arrays
        header = _header_with_check(prepared, lines)
    except INPUT_ERRORS as exc:
        raise input_sizes.raise_for(exc) from exc
    head = {key: value for key, value in header.items() if key not in ("type", "total_events", "check", "comparison")}
    parts = [encode_json(head)[:-1], b',"events":[']  # {"schema":…,"phases":[…] then the events
    chunk: list[dict[str, Any]] = []

    def flush() -> None:
        if chunk:
            parts.append((b"," if len(parts) > 2 else b"") + encode_json(chunk)[1:-1])
            chunk.clear()

    for line in lines:
        if line["type"] != "event":
            break
        del line["type"]
        chunk.append(line)
        if len(chunk) == ENCODE_CHUNK_EVENTS:
            flush()
            if cancel is not None and cancel.is_set():
                raise BuildCancelled()
    flush()
    ending = {key: header[key] for key in ("total_events", "check", "comparison") if key in header}
    tail = encode_json(ending)
    parts.append(b"]," + tail[1:])
    return b"".join(parts)


def _mistake_document(prepared: Prepared) -> bytes:
    """The mistake trace document (small: its cost was held to the limits), with a null
    gradient check: its gradients are the mistaken code's, not the truth's."""
    try:
        doc = build_mistake_trace(prepared.resolved, prepared.mistake)
    except INPUT_ERRORS as exc:
        raise input_sizes.raise_for(exc) from exc
    return encode_json({**doc, "check": None})


def stream_lines(prepared: Prepared) -> Iterator[dict[str, Any]]:
    """The lines (header with its gradient check, events, end) of a prepared config;
    the header is computed now, the events lazily as the iterator is pulled (a mistake
    trace's events are made with its header: it says where they diverge)."""
    try:
        if prepared.mistake is not None:
            lines = iter(iter_mistake_trace(prepared.resolved, prepared.mistake))
            header = {**next(lines), "check": None}
        else:
            lines = iter(iter_trace(prepared.resolved, arrays=True))  # encode_json writes the arrays
            header = _header_with_check(prepared, lines)
    except INPUT_ERRORS as exc:  # before the header: a 422 like the other routes
        raise input_sizes.raise_for(exc) from exc

    def with_header() -> Iterator[dict[str, Any]]:
        yield header
        yield from lines

    return with_header()


def conv_result(prepared: Prepared) -> dict[str, Any]:
    """Forward and backward results of a prepared config, no events: z, out, dout, dz,
    dx, dw and db as nested lists in the request's layout (x, z, out, dout, dz, dx NHWC
    and dw HWIO for NHWC; a Conv1d's NCL or NLC), with the resolved spec (NCHW/OIHW
    shapes; a Conv1d's in its own words, as its trace's header gives them).

    db is the bias gradient (F,), given whether or not the layer has a bias.
    """
    rc = prepared.resolved
    spec = rc.spec
    if rc.layer == "conv_transpose2d":
        return _transposed_result(rc)
    res = layer_results(spec, rc.x, rc.w, rc.b, rc.activation, rc.dout, rc.padding_mode, rc.flip)
    images = {"z": res.z, "out": res.out, "dout": rc.dout, "dz": res.dz, "dx": res.dx}
    dw, db = res.dw, res.db
    result: dict[str, Any] = {
        "spec": _sequence_geometry(rc) if rc.layer == "conv1d" else spec.to_dict(),
        "layout": rc.layout,
        "activation": rc.activation.name,
    }
    for name, array in {**images, "dw": dw}.items():
        result[name] = in_layout(array, kind_of(name).perm(rc.layout)).tolist()
    result["db"] = db.tolist()
    return result


def _sequence_geometry(rc: Any) -> dict[str, Any]:
    """A Conv1d's spec in its own words: the geometry keys of its trace's header."""
    keys = ("layer", "x_shape", "w_shape", "out_shape", "padding", "causal", "stride", "dilation", "groups")
    return {k: v for k, v in sequence_spec(rc).items() if k in keys}


def _transposed_args(rc: Any) -> dict[str, Any]:
    """A transposed layer's keyword arguments, as ``F.conv_transpose2d`` names them."""
    t = rc.transpose_spec
    return {k: getattr(t, k) for k in ("stride", "padding", "output_padding", "groups", "dilation")}


def _transposed_result(rc: Any) -> dict[str, Any]:
    """``conv_result`` of a ConvTranspose2d (NCHW, identity): z and out are y, dz is dout."""
    kw = _transposed_args(rc)
    y = conv_transpose2d_forward(rc.x, rc.w, rc.b, **kw)
    dx, dw, db = conv_transpose2d_backward(rc.dout, rc.x, rc.w, rc.b, **kw)
    t = rc.transpose_spec
    spec = {"layer": "conv_transpose2d", "x_shape": list(t.x_shape), "w_shape": list(t.w_shape)}
    spec |= {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()} | {"out_shape": list(t.out_shape)}
    result: dict[str, Any] = {"spec": spec, "layout": rc.layout, "activation": rc.activation.name}
    for name, array in {"z": y, "out": y, "dout": rc.dout, "dz": rc.dout, "dx": dx, "dw": dw, "db": db}.items():
        result[name] = array.tolist()
    return result


class DocumentCache:
    """Encoded trace documents by request body, least recently used out.

    A pure memo of a pure function (the same body gives the same document), so the
    service stays stateless; it spares the classroom case where 30 students load the
    same preset. Bodies over 64 KB and documents over 4 MB are not kept.
    """

    MAX_KEY_BYTES = 64 * 1024
    MAX_VALUE_BYTES = 4 * 1024 * 1024

    def __init__(self, entries: int):
        self.entries = entries
        self._items: OrderedDict[bytes, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: bytes) -> bytes | None:
        if not self.entries or len(key) > self.MAX_KEY_BYTES:
            return None
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: bytes, value: bytes) -> None:
        if not self.entries or len(key) > self.MAX_KEY_BYTES or len(value) > self.MAX_VALUE_BYTES:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)
