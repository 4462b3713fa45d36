"""The trace document and stream: build_trace, iter_trace, count_events.

Order of work for one trace: resolve the config (``config.resolve_config``), plan the
phases (names and exact counts from the spec alone), compute every tensor with the
vectorised core (``convcore.functional``), emit the header, then generate the events
lazily, phase by phase.

Phases, in order: ``pad``, the view's forward phases (direct: ``forward``),
``activation`` — when ``phases`` is "forward" or "both"; ``activation grad``, the
view's backward phases (direct: ``backward`` fused, or ``db``, ``dw``, ``dx``
separate), ``crop`` — when ``phases`` is "backward" or "both"; with a padding mode
that copies (``padding_phases``) ``pad`` writes the padding too and ``fold`` stands
for ``crop``; with ``flip`` (``flip_phases``) ``flip`` comes first and ``flip back``
last, and the views slide ``wf`` (``aliases.trace_renames``). Only steps that
compute: without padding there is no ``pad`` and no ``crop`` (xp is x, dxp is dx),
with the identity activation no ``activation`` and no ``activation grad`` (z is out,
dz is dout); the header's ``aliases`` names those tensors (``aliases.py``) and its
``tensors`` leave them out. With ``phases="backward"``, xp, z and out are in the
header with role "input" (no event writes them; replay takes them from the header, as
it does x, w, b and dout).

Roles: "input" — no event writes it (x, w, b, dout, and xp, z, out in a backward-only
trace); "intermediate" — xp, z, dz, dxp and a view's extra tensors; "result" — out,
db, dw, dx. The header's ``code`` is the listing beside the steps and each event
carries its ``line`` (``code.py``; null code and no line keys when the setting has no
listing). Events are ``model.Event``; the stream tags each line with its type
(``model.event_lines``), the document lists the events untagged.

Plain data or arrays: by default every ``delta`` and ``value`` is a list of floats.
With ``arrays=True`` the rows a view makes in bulk (the direct view's windows, the
rows of the shared phases) are 1-D float64 NumPy arrays instead, the same numbers:
for an encoder that writes arrays itself (orjson with OPT_SERIALIZE_NUMPY, as the
service does), whose JSON is then byte for byte that of the plain trace, made
without one Python float object per number. Other writes stay lists; ``replay``
takes either. The header's tensor ``data`` are then 1-D arrays too (the service's
gradient check reads them without parsing lists back).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..functional import rotate_kernel
from ..layer import layer_results
from .aliases import copies_padding, has_padding, is_identity, trace_aliases, trace_renames
from .axes import in_layout, kind_of
from .code import TraceCode
from .config import ResolvedConfig, resolve_config
from .drawing import tensor_drawing
from .events import TraceContext
from .flip_phases import flip_back_phase, flip_phase
from .formulas import tensor_formulas, torch_setup
from .loops import loop_names
from .model import Event, event_lines, stream_line
from .padding_phases import fold_phase, mode_pad_phase
from .phases import activation_grad_phase, activation_phase, crop_phase, pad_phase
from .sequence_layer import (
    sequence_events,
    sequence_formulas,
    sequence_loop_words,
    sequence_spec,
    sequence_torch_setup,
)
from .transpose_layer import (
    LOOP_WORDS,
    tensor_facts,
    transposed_formulas,
    transposed_phases,
    transposed_reference,
    transposed_spec,
    transposed_torch_setup,
)
from .views import Phase

__all__ = ["SCHEMA", "build_document", "build_trace", "count_events", "iter_trace", "plan_phases", "trace_header"]

SCHEMA = "convscope.trace/3"

ConfigLike = Mapping[str, Any] | ResolvedConfig | None


def plan_phases(rc: ResolvedConfig) -> list[Phase]:
    """The phases of the trace, in order, with their exact counts (no tensors needed).
    Only phases that compute: pad and crop with padding, the activation phases with
    an activation other than the identity."""
    if rc.layer == "conv_transpose2d":
        return transposed_phases(rc)
    view = rc.view_impl
    padded, activated = has_padding(rc), not is_identity(rc)
    copied = copies_padding(rc)
    phases: list[Phase] = [flip_phase(rc)] if rc.flip else []
    if rc.forward_included:
        phases += [mode_pad_phase(rc) if copied else pad_phase(rc)] if padded else []
        phases += view.forward_phases(rc)
        phases += [activation_phase(rc)] if activated else []
    if rc.backward_included:
        phases += [activation_grad_phase(rc)] if activated else []
        phases += view.backward_phases(rc)
        phases += [fold_phase(rc) if copied else crop_phase(rc)] if padded else []
        phases += [flip_back_phase(rc)] if rc.flip else []
    return phases


def count_events(config: ConfigLike) -> int:
    """The exact number of events of the trace, from the spec alone (nothing generated)."""
    return sum(p.count for p in plan_phases(resolve_config(config)))


def _reference(rc: ResolvedConfig) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Every tensor of the trace in internal order, and its role."""
    if rc.layer == "conv_transpose2d":
        return transposed_reference(rc)
    spec, act = rc.spec, rc.activation
    ref: dict[str, np.ndarray] = {}
    roles: dict[str, str] = {}
    fwd = "intermediate" if rc.forward_included else "input"

    def put(name: str, arr: np.ndarray, role: str) -> None:
        ref[name], roles[name] = arr, role

    res = layer_results(
        spec, rc.x, rc.w, rc.b, act, rc.dout if rc.backward_included else None, rc.padding_mode, rc.flip
    )
    put("x", rc.x, "input")
    put("xp", res.xp, fwd)
    if rc.flip:  # the steps slide the turned filters (aliases.FLIP_RENAMES)
        put("w_given", rc.w, "input")
        put("w", np.ascontiguousarray(rotate_kernel(rc.w)), "intermediate")
    else:
        put("w", rc.w, "input")
    if rc.b is not None:
        put("b", rc.b, "input")
    put("z", res.z, fwd)
    put("out", res.out, "result" if rc.forward_included else "input")
    if rc.backward_included:
        put("dout", rc.dout, "input")
        put("dz", res.dz, "intermediate")
        if rc.b is not None:
            put("db", res.db, "result")
        if rc.flip:
            put("dw", np.ascontiguousarray(rotate_kernel(res.dw)), "intermediate")
            put("dw_given", res.dw, "result")
        else:
            put("dw", res.dw, "result")
        put("dxp", res.dxp, "intermediate")
        put("dx", res.dx, "result")
    for name, (arr, role) in rc.view_impl.extra_tensors(rc, dict(ref)).items():
        put(name, arr, role)
    return ref, roles


def _external(name: str, arr: np.ndarray, layout: str) -> np.ndarray:
    return in_layout(arr, kind_of(name).perm(layout))


def _spec_dict(rc: ResolvedConfig) -> dict[str, Any]:
    spec = rc.spec
    nhwc = rc.layout == "NHWC"

    def image(shape):
        return [shape[0], shape[2], shape[3], shape[1]] if nhwc else list(shape)

    w_shape = [spec.KH, spec.KW, spec.channels_per_group, spec.F] if nhwc else list(spec.w_shape)
    return {
        "x_shape": image(spec.x_shape),
        "w_shape": w_shape,
        "out_shape": image(spec.out_shape),
        "padded_shape": image(spec.padded_shape),
        "padding": list(spec.padding),
        "stride": list(spec.stride),
        "dilation": list(spec.dilation),
        "groups": spec.groups,
        "kernel_extent": list(spec.kernel_extent),
        "reached_hw": list(spec.reached_hw),
        **rc.header_settings(rc.loop_order, rc.dx_loop_order),
    }


def _header(
    rc: ResolvedConfig, plan: list[Phase], ref: dict[str, np.ndarray], roles: dict[str, str], arrays: bool = False
) -> dict:
    aliases, renames = trace_aliases(rc), trace_renames(rc)
    transposed = rc.layer == "conv_transpose2d"
    overlaps = ref.get("overlaps")
    tensors = {}
    for name, role in roles.items():
        if name in aliases:
            continue  # the same tensor as another of the header
        kind = kind_of(name)
        ext = _external(name, ref[name], rc.layout)
        shown = renames.get(name, name)
        drawn = (
            tensor_facts(shown, rc.spec, overlaps) if transposed else tensor_drawing(shown, rc.spec, rc.padding_mode)
        )
        tensors[shown] = {
            "shape": list(ext.shape),
            "data": ext.ravel() if arrays else ext.ravel().tolist(),  # arrays: 1-D float64
            **kind.axis_facts(rc.layout),
            "role": role,
            **drawn,
        }
    if "dx" in tensors and "dxp" in tensors and not copies_padding(rc):  # (a drawing fact: dx is dxp's crop)
        tensors["dx"]["cropped_from"] = "dxp"
    if "y" in tensors and "yp" in tensors and "b" not in tensors:  # (a transposed layer's output:
        tensors["y"]["cropped_from"] = "yp"  # its stamps cropped; with a bias more than that)
    inputs = {name for name, t in tensors.items() if t["role"] == "input"}
    sequence = rc.layer == "conv1d"
    if transposed:
        formulas = transposed_formulas(rc, set(tensors) - inputs)
    elif sequence:
        formulas = sequence_formulas(rc, set(tensors), inputs, aliases, renames)
    else:
        formulas = tensor_formulas(
            rc.spec, rc.layout, rc.activation.name, set(tensors), inputs, aliases, rc.padding_mode, rc.flip
        )
    for name, facts in formulas.items():
        tensors[name].update(facts)
    phases, start = [], 0
    for p in plan:
        phases.append({"name": p.name, "start": start, "stop": start + p.count})
        start += p.count
    letters = "".join(p.letters if p.letters is not None else rc.view_impl.loop_letters(rc.granularity) for p in plan)
    if transposed:
        names = {letter: LOOP_WORDS[letter] for letter in dict.fromkeys(letters)}
        setup = transposed_torch_setup(rc)
    else:
        names = loop_names(letters, groups=rc.spec.groups, padded=has_padding(rc))
        setup = torch_setup(rc.spec, rc.layout, rc.activation.name, "b" in tensors, rc.padding_mode, rc.flip)
    if sequence:
        names, setup = sequence_loop_words(names), sequence_torch_setup(rc)
    return {
        "schema": SCHEMA,
        "spec": transposed_spec(rc) if transposed else sequence_spec(rc) if sequence else _spec_dict(rc),
        "tensors": tensors,
        "aliases": {} if transposed else aliases,
        "loop_names": names,
        "torch_setup": setup,
        "phases": phases,
        "code": TraceCode(rc, ref, aliases).header(),
        "total_events": start,
    }


def trace_header(config: ConfigLike) -> dict:
    """The header alone (schema, spec, tensors, aliases, loop_names, torch_setup,
    phases, code, total_events), no events."""
    rc = resolve_config(config)
    plan = plan_phases(rc)
    ref, roles = _reference(rc)
    return _header(rc, plan, ref, roles)


def _context(rc: ResolvedConfig, ref: dict[str, np.ndarray], roles: dict[str, str], arrays: bool) -> TraceContext:
    return TraceContext(rc, ref, [name for name, role in roles.items() if role != "input"], arrays)


def _phase_events(
    rc: ResolvedConfig, plan: list[Phase], ref: dict[str, np.ndarray], roles: dict[str, str], arrays: bool
) -> Iterator[Iterator[Event]]:
    """Each phase's events, phase by phase (the per-cell tables of a phase are released
    when the next one starts)."""
    ctx = _context(rc, ref, roles, arrays)
    code = TraceCode(rc, ref, trace_aliases(rc))
    for phase in plan:
        events = code.annotate(phase.events(ctx))
        yield sequence_events(events) if rc.layer == "conv1d" else events
        ctx.release_cells()


def iter_trace(config: ConfigLike, *, arrays: bool = False) -> Iterator[dict]:
    """The trace as stream items: the header line (type "header"), one line per event
    (type "event", ``model.event_lines``), then the end line (type "end", with
    ``total_events``).

    The config is validated and the header computed when this is called (errors raise
    TraceConfigError here, not mid-stream); events are generated lazily.
    ``arrays``: as for ``build_trace``.
    """
    rc = resolve_config(config)
    plan = plan_phases(rc)
    ref, roles = _reference(rc)
    header = _header(rc, plan, ref, roles, arrays)

    def stream() -> Iterator[dict]:
        yield stream_line("header", header)
        for events in _phase_events(rc, plan, ref, roles, arrays):
            yield from event_lines(events)
        yield stream_line("end", {"total_events": header["total_events"]})

    return stream()


def build_trace(config: ConfigLike, *, arrays: bool = False) -> dict:
    """The whole trace document: {schema, spec, tensors, aliases, loop_names,
    torch_setup, phases, code, events, total_events}.

    ``arrays=True``: the delta and value rows a view makes in bulk are 1-D float64
    arrays instead of lists, with the same numbers (module notes); for encoders.

    The document holds ~100 containers per event and no reference cycles; a caller
    that owns its process may pause the cyclic garbage collector around the call (the
    whole-document route of bench/trace.py does, ``bench/gc_pause.py``; the service
    encodes its documents in chunks instead): convcore itself changes nothing process-wide.
    """
    rc = resolve_config(config)
    return build_document(rc, plan_phases(rc), arrays=arrays)


def build_document(rc: ResolvedConfig, plan: list[Phase], *, arrays: bool = False) -> dict:
    """``build_trace`` of a resolved config with the phases ``plan`` (``plan_phases(rc)``
    or the same phases with other generators of the same events: ``reference``)."""
    ref, roles = _reference(rc)
    doc = _header(rc, plan, ref, roles, arrays)
    events = []
    for phase in _phase_events(rc, plan, ref, roles, arrays):
        events += phase
    total = doc.pop("total_events")
    doc["events"] = events
    doc["total_events"] = total
    return doc
