"""The service's use of ``convcore.trace``: check, count, build, stream, in that order.

Every route that computes goes through ``prepare``: the limits are checked on the
request's numbers first (``guard``), then convcore resolves and validates the config
(cheap, no events), then the event count is compared with the limit. Only then is a
trace generated. convcore's errors become 422s at ``["body", field]``.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from convcore.gradcheck import directional_check
from convcore.layer import layer_results
from convcore.layout import hwio_to_oihw, nchw_to_nhwc, nhwc_to_nchw, oihw_to_hwio
from convcore.spec import ConvSpecError
from convcore.trace import build_trace, count_events, iter_trace, resolve_config

from . import guard
from .encoding import encode_json
from .errors import too_large
from .gc_pause import paused_gc
from .settings import Settings

__all__ = ["INPUT_ERRORS", "DocumentCache", "Prepared", "conv_result", "document_bytes", "gradient_check", "prepare", "stream_lines"]

# What convcore raises for input it cannot use: ConvSpecError (a 422 at its field) and
# MemoryError (a 413, see guard.raise_for). Anything else is a bug and a 500.
INPUT_ERRORS = (ConvSpecError, MemoryError)


@dataclass(frozen=True)
class Prepared:
    """A config that passed every check, with its event count."""

    config: dict[str, Any]
    resolved: Any
    total_events: int | None


def prepare(config: dict[str, Any], settings: Settings, count: bool = True) -> Prepared:
    """Check ``config`` against the limits and convcore's rules; raise ApiError if not.

    ``count``: also count the trace's events and hold them to ``max_events``.
    """
    guard.check_inputs(config, settings)
    try:
        resolved = resolve_config(
            config, max_elements=settings.max_tensor_elements, max_abs=settings.max_abs_value
        )
    except INPUT_ERRORS as exc:
        raise guard.raise_for(exc) from exc
    total = None
    if count:
        try:
            total = int(count_events(resolved))
        except INPUT_ERRORS as exc:
            raise guard.raise_for(exc) from exc
        if total > settings.max_events:
            raise too_large(
                None,
                f"the trace would have {total} events, the limit is {settings.max_events} "
                f"(use granularity 'window', fewer phases or smaller tensors)",
            )
    return Prepared(config, resolved, total)


def gradient_check(prepared: Prepared, header: dict[str, Any]) -> dict[str, Any] | None:
    """Verify the gradients a trace header carries (dx, dw, db: what the page shows)
    against directional derivatives of the forward pass along random directions.

    None when the trace has no backward results (phases "forward").
    """
    tensors = header["tensors"]
    if "dx" not in tensors or "dw" not in tensors:
        return None
    rc = prepared.resolved
    spec = rc.spec

    def array(name: str) -> np.ndarray:
        return np.asarray(tensors[name]["data"], dtype=np.float64).reshape(tensors[name]["shape"])

    nhwc = rc.layout == "NHWC"
    grads = {
        "dx": nhwc_to_nchw(array("dx"), "dx") if nhwc else array("dx"),
        "dw": hwio_to_oihw(array("dw"), "dw") if nhwc else array("dw"),
    }
    if rc.b is not None and "db" in tensors:
        grads["db"] = array("db")
    dz = layer_results(spec, rc.x, rc.w, rc.b, rc.activation, rc.dout).dz  # (N, F, Ho, Wo)
    return directional_check(spec, rc.x, rc.w, rc.b, dz, grads)


# A whole document is built in memory (about three times its JSON size at the peak, e.g.
# 127 MB for a 40 MB document): at most this many are built at once per process, so a
# burst of large requests queues instead of multiplying the memory (builds are CPU-bound,
# so more at once would not finish sooner). Streams generate lazily and need no slot.
BUILD_SLOTS = threading.BoundedSemaphore(max(2, os.cpu_count() or 2))


def document_bytes(prepared: Prepared) -> bytes:
    """The whole trace document of a prepared config, with its gradient check, as JSON."""
    # the document has no cycles to collect: the collector waits until it is encoded and
    # freed (server/gc_pause.py)
    with BUILD_SLOTS, paused_gc():
        try:
            doc = build_trace(prepared.resolved, arrays=True)  # encode_json writes the arrays
            doc["check"] = gradient_check(prepared, doc)
        except INPUT_ERRORS as exc:
            raise guard.raise_for(exc) from exc
        body = encode_json(doc)
        del doc
        return body


def stream_lines(prepared: Prepared) -> Iterator[dict[str, Any]]:
    """The lines (header with its gradient check, events, end) of a prepared config;
    the header is computed now, the events lazily as the iterator is pulled."""
    try:
        lines = iter(iter_trace(prepared.resolved, arrays=True))  # encode_json writes the arrays
        header = next(lines)
        header["check"] = gradient_check(prepared, header)
    except INPUT_ERRORS as exc:  # before the header: a 422 like the other routes
        raise guard.raise_for(exc) from exc

    def with_header() -> Iterator[dict[str, Any]]:
        yield header
        yield from lines

    return with_header()


def conv_result(prepared: Prepared) -> dict[str, Any]:
    """Forward and backward results of a prepared config, no events: z, out, dout, dz,
    dx, dw and db as nested lists in the request's layout (x, z, out, dout, dz, dx NHWC
    and dw HWIO for NHWC), with the resolved spec (NCHW/OIHW shapes).

    db is the bias gradient (F,), given whether or not the layer has a bias.
    """
    rc = prepared.resolved
    spec = rc.spec
    res = layer_results(spec, rc.x, rc.w, rc.b, rc.activation, rc.dout)
    images = {"z": res.z, "out": res.out, "dout": rc.dout, "dz": res.dz, "dx": res.dx}
    dw, db = res.dw, res.db
    nhwc = rc.layout == "NHWC"
    result: dict[str, Any] = {
        "spec": spec.to_dict(),
        "layout": rc.layout,
        "activation": rc.activation.name,
    }
    for name, array in images.items():
        result[name] = (nchw_to_nhwc(array, name) if nhwc else array).tolist()
    result["dw"] = (oihw_to_hwio(dw, "dw") if nhwc else dw).tolist()
    result["db"] = db.tolist()
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

