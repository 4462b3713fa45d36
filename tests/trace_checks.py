"""Generic checks of the trace rules, shared by the trace tests (any view).

Each ``check_rule*`` takes a config (a plain dict, NCHW unless it says otherwise) and
asserts one rule of the trace contract; a new view adds its configs to
``RULE_CONFIGS`` in test_trace_rules.py and gets every check.
"""

from __future__ import annotations

import math

import numpy as np

from convcore.functional import backward_padded, crop_padding, forward_padded, pad_input
from convcore.layout import NCHW_TO_NHWC, OIHW_TO_HWIO
from convcore.trace import build_trace, count_events, iter_trace, replay, resolve_config

RTOL = 1e-12
INPUTS = {"x", "w", "b", "dout"}
PHASE_WRITES = {  # shared phases and what they write
    "pad": {"xp"},
    "activation": {"out"},
    "activation grad": {"dz"},
    "crop": {"dx"},
    "fold": {"dx"},
    "flip": {"wf"},
    "flip back": {"dw"},
}
FORWARD_RESULTS = {"z"}
BACKWARD_RESULTS = {"db", "dw", "dxp"}
COPY_PHASES = {"pad", "crop"}  # the phases that only move values (they teach where padding goes)
# a view's phases whose copy is the lesson: the values move to where the next step needs them
REARRANGING_PHASES = {
    "im2col": "receptive fields into columns",
    "col2im": "columns back onto the image",
    "dilate dz": "dz cells a stride apart",
    "rotate w": "the kernel turned 180°",
}


def expected_aliases(config: dict) -> dict[str, str]:
    """The aliases the contract gives ``config``, from its settings alone: without padding
    xp is x and dxp is dx; with the identity activation z is out and dz is dout."""
    spec = resolve_config(config).spec
    aliases = {}
    if not any(spec.padding):
        aliases.update(xp="x", dxp="dx")
    if config.get("activation") in (None, "identity"):
        aliases.update(z="out", dz="dout")
    return aliases


def traced(doc: dict, name: str) -> str:
    """The trace's tensor that holds ``name`` (itself, or what the header's aliases say)."""
    return doc["aliases"].get(name, name)


def tensor(doc: dict, name: str) -> np.ndarray:
    t = doc["tensors"][name]
    return np.asarray(t["data"], dtype=np.float64).reshape(t["shape"])


def box_slices(box: dict) -> tuple[slice, ...]:
    return tuple(slice(a, b, s) for a, b, s in zip(box["start"], box["stop"], box["step"]))


def box_shape(box: dict) -> tuple[int, ...]:
    return tuple(math.ceil((b - a) / s) for a, b, s in zip(box["start"], box["stop"], box["step"]))


def assert_close(actual, expected, name, rtol=RTOL):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{name}: shape {actual.shape} != {expected.shape}"
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=name)


# PyTorch's padding modes as NumPy's np.pad names them
NUMPY_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _mode_pad_and_fold(spec, x: np.ndarray, mode: str):
    """(xp, fold): ``x`` (N, C, H, W) padded in ``mode`` by NumPy's np.pad, and the
    function that folds a (N, C, Hp, Wp) gradient back onto x's cells: each padded cell
    adds onto the cell whose flat index np.pad copied into it (independent of
    convcore.padding_modes)."""
    top, bottom, left, right = spec.padding
    sides = ((0, 0), (0, 0), (top, bottom), (left, right))
    xp = np.pad(x, sides, mode=NUMPY_PAD_MODES[mode])
    h, w = x.shape[2:]
    source = np.pad(np.arange(h * w).reshape(h, w), sides[2:], mode=NUMPY_PAD_MODES[mode]).ravel()

    def fold(dxp: np.ndarray) -> np.ndarray:
        flat = dxp.reshape(*dxp.shape[:2], -1)
        dx = np.zeros((*x.shape[:2], h * w))
        for cell, src in enumerate(source):
            dx[:, :, src] += flat[:, :, cell]
        return dx.reshape(x.shape)

    return xp, fold


def core_results(config: dict) -> dict[str, np.ndarray]:
    """The core's tensors (internal order) for ``config``, computed here from
    convcore.functional and the activation, independently of the trace modules (a
    padding mode by np.pad, a flip by NumPy's reversed axes)."""
    rc = resolve_config(config)
    spec = rc.spec
    if rc.padding_mode == "zeros":
        xp, fold = pad_input(spec, rc.x), lambda dxp: crop_padding(spec, dxp)
    else:
        xp, fold = _mode_pad_and_fold(spec, rc.x, rc.padding_mode)
    kernel = np.ascontiguousarray(rc.w[:, :, ::-1, ::-1]) if rc.flip else rc.w  # what the steps slide
    z = forward_padded(spec, xp, kernel, rc.b)
    out = rc.activation.forward(z)
    dz = rc.dout * rc.activation.derivative(z)
    dxp, dkernel, db = backward_padded(spec, dz, xp, kernel)
    res = {
        "x": rc.x,
        "xp": xp,
        "w": rc.w,
        "z": z,
        "out": out,
        "dout": rc.dout,
        "dz": dz,
        "dw": dkernel[:, :, ::-1, ::-1] if rc.flip else dkernel,
        "dxp": dxp,
        "dx": fold(dxp),
    }
    if rc.flip:
        res["wf"], res["dwf"] = kernel, dkernel
    if rc.b is not None:
        res["b"], res["db"] = rc.b, db
    res.update(view_tensors(rc, {**res, "w": kernel}))
    return res


def view_tensors(rc, res: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The tensors a view adds, computed here cell by cell from their definitions
    (docs/trace-format.md), independently of the view modules.

    im2col: cols[(c·KH + k)·KW + l, (n·Ho + i)·Wo + j] = xp[n, c, i·sh + k·dh, j·sw + l·dw]
    (C·KH·KW, N·Ho·Wo); dcols[(c,k,l), (n,i,j)] = Σ_{f of c's group} w[f, c − c0, k, l]·dz[n, f, i, j].
    transposed: dz_dilated[n, f, eh − 1 + i·sh, ew − 1 + j·sw] = dz[n, f, i, j], zero elsewhere,
    (N, F, Hp + eh − 1, Wp + ew − 1); w_rot[f, c, k, l] = w[f, c, KH − 1 − k, KW − 1 − l].
    """
    spec = rc.spec
    n_, f_, ho, wo = spec.out_shape
    kh, kw = spec.KH, spec.KW
    (sh, sw), (dh, dw), (eh, ew) = spec.stride, spec.dilation, spec.kernel_extent
    cg, fg = spec.channels_per_group, spec.filters_per_group
    out = {}
    if rc.view == "im2col":
        n, c, k, l, i, j = np.indices((n_, spec.C, kh, kw, ho, wo)).reshape(6, -1)
        rows, cols = (c * kh + k) * kw + l, (n * ho + i) * wo + j
        out["cols"] = np.zeros((spec.C * kh * kw, n_ * ho * wo))
        out["cols"][rows, cols] = res["xp"][n, c, i * sh + k * dh, j * sw + l * dw]
        if "dz" in res:
            dcols = np.zeros_like(out["cols"])
            for f in range(fg):
                filt = (c // cg) * fg + f
                np.add.at(dcols, (rows, cols), res["w"][filt, c % cg, k, l] * res["dz"][n, filt, i, j])
            out["dcols"] = dcols
    if rc.view == "transposed" and "dz" in res:
        hp, wp = spec.padded_hw
        dzd = np.zeros((n_, f_, hp + eh - 1, wp + ew - 1))
        for i in range(ho):
            for j in range(wo):
                dzd[:, :, eh - 1 + i * sh, ew - 1 + j * sw] = res["dz"][:, :, i, j]
        out["dz_dilated"] = dzd
        w_rot = np.zeros_like(res["w"])
        for k in range(kh):
            for l in range(kw):
                w_rot[:, :, k, l] = res["w"][:, :, kh - 1 - k, kw - 1 - l]
        out["w_rot"] = w_rot
    return out


def to_internal(name: str, arr: np.ndarray, layout: str) -> np.ndarray:
    if layout != "NHWC" or arr.ndim != 4:
        return arr
    if name in ("w", "dw", "w_rot", "wf", "dwf"):
        return arr.transpose(3, 2, 0, 1)
    return arr.transpose(0, 3, 1, 2)


# -- rule 1 ----------------------------------------------------------------------------


def check_rule1_only_inputs_unwritten(config: dict) -> None:
    doc = build_trace(config)
    written_by_phase: dict[str, set] = {}
    for ev in doc["events"]:
        written_by_phase.setdefault(ev["phase"], set()).update(w["tensor"] for w in ev["writes"])
    written = set().union(*written_by_phase.values())
    roles = {name: t["role"] for name, t in doc["tensors"].items()}
    unwritten = {name for name, role in roles.items() if role == "input"}
    assert written == set(roles) - unwritten, (written, roles)
    aliases = expected_aliases(config)
    assert doc["aliases"] == aliases and not set(aliases) & set(roles), (doc["aliases"], roles)
    named = {name for ev in doc["events"] for box in ev["reads"] + ev["writes"] for name in [box["tensor"]]}
    assert named <= set(roles), named - set(roles)  # no Box names an aliased tensor
    mode = doc["spec"]["phases"]
    if mode == "both":
        assert unwritten == INPUTS & set(roles)
    elif mode == "backward":
        assert unwritten == {traced(doc, t) for t in INPUTS | {"xp", "z", "out"}} & set(roles)
    for phase, names in PHASE_WRITES.items():
        if phase in written_by_phase:
            assert written_by_phase[phase] == names, (phase, written_by_phase[phase])
    names = [p["name"] for p in doc["phases"]]
    if doc["spec"].get("flip"):  # the kernel turned first, its gradient turned back last
        assert names[0] == "flip" and (names[-1] == "flip back") == (mode != "forward"), names
        names = names[1:-1] if mode != "forward" else names[1:]
    last = "crop" if doc["spec"].get("padding_mode", "zeros") == "zeros" else "fold"
    padded, activated = "xp" not in aliases, "z" not in aliases
    forward_end = 0  # the forward part: up to the last "forward" phase (every view has one)
    if mode in ("both", "forward"):
        assert (names[0] == "pad") == padded and ("activation" in names) == activated, names
        forward_end = len(names) - names[::-1].index("forward")
        fwd = names[:forward_end]
        assert {traced(doc, t) for t in FORWARD_RESULTS} <= set().union(*(written_by_phase[p] for p in fwd))
    if mode in ("both", "backward"):
        assert (names[-1] == last) == padded and ("activation grad" in names) == activated, names
        bwd = names[forward_end:]
        expect = BACKWARD_RESULTS if "b" in roles else BACKWARD_RESULTS - {"db"}
        if doc["spec"].get("flip"):  # the steps gather dwf; flip back writes dw from it
            expect = expect - {"dw"} | {"dwf"}
        assert {traced(doc, t) for t in expect} <= set().union(*(written_by_phase[p] for p in bwd))


DROPPABLE_PHASES = frozenset({"pad", "crop", "activation", "activation grad"})


def check_only_steps_that_compute(config: dict) -> None:
    """No phase whose every step copies values unchanged, except pad and crop with
    padding present. A step copies when each of its writes lands on zeros (value =
    delta), moves something (a delta not all 0: a dead window copies nothing) and its
    delta is, value for value, the cells of one of its reads (their values at that
    step, replayed); its reads other than the copied ones do not change that
    (identity′(z) = 1 makes dz a copy of dout whatever z is). Data with factors of
    exactly 1 (dout = ones, a single filter) can make a product look like a copy: check
    with generic numbers."""
    doc = build_trace(config)
    state = {
        name: (np.asarray(t["data"], float).reshape(t["shape"]) if t["role"] == "input" else np.zeros(t["shape"]))
        for name, t in doc["tensors"].items()
    }
    copying: dict[str, bool] = {}
    for ev in doc["events"]:
        reads = [state[r["tensor"]][box_slices(r)].ravel().copy() for r in ev["reads"]]
        copies = True
        for wr in ev["writes"]:
            block = state[wr["tensor"]][box_slices(wr)]
            delta = np.asarray(wr["delta"], float)
            block += delta.reshape(block.shape)
            copies = (
                copies
                and np.array_equal(wr["value"], delta)
                and np.any(delta != 0)
                and any(r.shape == delta.shape and np.array_equal(r, delta) for r in reads)
            )
        copying[ev["phase"]] = copying.get(ev["phase"], True) and copies
    rc = resolve_config(config)
    padded = any(rc.spec.padding)
    copy_only = {phase for phase, copies in copying.items() if copies}
    allowed = (COPY_PHASES if padded else set()) | set(REARRANGING_PHASES)
    if rc.activation.name != "identity":
        # a piecewise identity (relu, leaky relu, hardtanh, …) over a z on its identity piece
        # passes it unchanged: the lesson of that data (the identity itself has no
        # activation phases, which the lessons' tests check)
        allowed |= {"activation", "activation grad"}
    # the phases a trace may leave out are the ones that can only copy (pad, crop and the
    # activation's two); the computing phases stay whatever the data (windows that read
    # only padding give z = b, one output position gives db = its dz)
    assert copy_only & DROPPABLE_PHASES <= allowed, (copy_only, [p["name"] for p in doc["phases"]])
    if padded and resolve_config(config).forward_included:
        assert "pad" in copying


# -- rule 2 ----------------------------------------------------------------------------


def check_rule2_replay_matches_header_and_core(config: dict, torch_results=None) -> None:
    doc = build_trace(config)
    layout = doc["spec"]["layout"]
    state = replay(doc)
    core = core_results(config)
    for name in doc["tensors"]:
        header = tensor(doc, name)
        assert_close(state[name], header, f"replay {name} vs header")
        if name in core:  # a view's own tensors (im2col's cols) have no core counterpart here
            assert_close(to_internal(name, header, layout), core[name], f"header {name} vs core")
    for alias, name in doc["aliases"].items():  # an alias is the same tensor as the one it names
        if name in doc["tensors"]:
            assert_close(to_internal(name, state[name], layout), core[alias], f"replay {name} vs core {alias}")
    if torch_results is not None:
        for name, expected in torch_results.items():
            if traced(doc, name) in doc["tensors"]:
                assert_close(
                    to_internal(name, state[traced(doc, name)], layout), expected, f"replay {name} vs torch", rtol=1e-10
                )


# -- rule 3 ----------------------------------------------------------------------------


def check_rule3_value_is_running_state(config: dict) -> None:
    doc = build_trace(config)
    state = {name: np.zeros(t["shape"]) for name, t in doc["tensors"].items() if t["role"] != "input"}
    for k, ev in enumerate(doc["events"]):
        for wr in ev["writes"]:
            block = state[wr["tensor"]][box_slices(wr)]
            assert block.shape == box_shape(wr)
            assert len(wr["delta"]) == len(wr["value"]) == block.size
            block += np.reshape(wr["delta"], block.shape)
            assert np.array_equal(block.ravel(), np.asarray(wr["value"])), (k, ev["text"])


# -- rule 4 ----------------------------------------------------------------------------


def check_rule4_forward_window_reads_receptive_field(config: dict) -> None:
    doc = build_trace(config)
    rc = resolve_config(config)
    spec = rc.spec
    nhwc = rc.layout == "NHWC"
    cg, fg = spec.channels_per_group, spec.filters_per_group
    eh, ew = spec.kernel_extent
    seen = 0
    column_sources = {}  # im2col: column of cols -> what its im2col event read
    for ev in doc["events"]:
        if ev["phase"] == "im2col":
            (wr,) = ev["writes"]
            assert wr["tensor"] == "cols" and wr["stop"][1] == wr["start"][1] + 1, ev
            column_sources[wr["start"][1]] = ev["reads"]
        if ev["phase"] != "forward" or set(ev["loop"]) != {"n", "f", "i", "j"}:
            continue
        seen += 1
        n, f, i, j = (ev["loop"][c] for c in "nfij")
        c0 = (f // fg) * cg
        start = [n, c0, i * spec.stride[0], j * spec.stride[1]]
        stop = [n + 1, c0 + cg, start[2] + eh, start[3] + ew]
        step = [1, 1, *spec.dilation]
        wstart, wstop = [f, 0, 0, 0], [f + 1, cg, spec.KH, spec.KW]
        if nhwc:
            start, stop, step = ([v[p] for p in NCHW_TO_NHWC] for v in (start, stop, step))
            wstart, wstop = ([v[p] for p in OIHW_TO_HWIO] for v in (wstart, wstop))
        xp_reads = [r for r in ev["reads"] if r["tensor"] == traced(doc, "xp")]
        kernel = "wf" if rc.flip else "w"  # with flip the steps slide the turned filters
        w_reads = [r for r in ev["reads"] if r["tensor"] in ("w", "wf")]
        if rc.view == "im2col":
            # the window is read from column (n, i, j) of cols, rows of f's group only; that
            # column must have been written from exactly the receptive field (all channels)
            rows = cg * spec.KH * spec.KW
            col = (n * spec.out_hw[0] + i) * spec.out_hw[1] + j
            cols_box = {
                "tensor": "cols",
                "start": [c0 // cg * rows, col],
                "stop": [c0 // cg * rows + rows, col + 1],
                "step": [1, 1],
            }
            assert xp_reads == [] and [r for r in ev["reads"] if r["tensor"] == "cols"] == [cols_box], ev
            source = column_sources[col]
            full = [start[:], stop[:]]
            full[0][1 if not nhwc else 3], full[1][1 if not nhwc else 3] = 0, spec.C
            assert source == [{"tensor": traced(doc, "xp"), "start": full[0], "stop": full[1], "step": step}], source
        else:
            assert xp_reads == [{"tensor": traced(doc, "xp"), "start": start, "stop": stop, "step": step}], ev
        assert w_reads == [{"tensor": kernel, "start": wstart, "stop": wstop, "step": [1, 1, 1, 1]}], ev
    if rc.granularity == "window" and rc.forward_included:
        assert seen == math.prod(spec.out_shape)


# -- rule 5 ----------------------------------------------------------------------------


def check_rule5_counts(config: dict) -> None:
    items = list(iter_trace(config))
    header, events, end = items[0], items[1:-1], items[-1]
    n = count_events(config)
    assert header["type"] == "header" and end == {"type": "end", "total_events": n}
    assert len(events) == n == header["total_events"]
    assert all(e["type"] == "event" for e in events)
    bounds = header["phases"]
    assert bounds[0]["start"] == 0 and bounds[-1]["stop"] == n
    for a, b in zip(bounds, bounds[1:]):
        assert a["stop"] == b["start"]
    for p in bounds:
        assert p["stop"] > p["start"]
        assert {e["phase"] for e in events[p["start"] : p["stop"]]} == {p["name"]}


# -- rule 7 ----------------------------------------------------------------------------


def case_config(case, nhwc: bool = False, **settings) -> dict:
    """The config of a hypothesis ConvCase (``strategies.conv_cases``): its random x, w,
    b (with a bias) and dout as nested lists, its geometry, ``settings``; NHWC when
    ``nhwc``."""
    x, w, b, dout = case.arrays()
    config = {"x": x.tolist(), "w": w.tolist(), "dout": dout.tolist(), **case.kwargs(), **settings}
    if b is not None:
        config["b"] = b.tolist()
    return nhwc_config(config) if nhwc else config


def check_replay_matches_torch(case, activation: str, nhwc: bool = False, **settings) -> None:
    """Rule 2 for a ConvCase's config, with PyTorch's layer (conv2d + ``activation``,
    autograd) as the oracle as well as the core."""
    from oracle import geometry, torch_layer

    x, w, b, dout = case.arrays()
    expected = torch_layer(x, w, b, dout, **geometry(case.spec), activation=activation)
    config = case_config(case, nhwc=nhwc, activation=activation, **settings)
    check_rule2_replay_matches_header_and_core(config, torch_results=expected.results(bias=b is not None))


def nhwc_config(config: dict) -> dict:
    """The same config in NHWC / HWIO: x, w and dout (nested lists, NCHW) transposed."""
    out = dict(config, layout="NHWC")
    out["x"] = np.asarray(config["x"]).transpose(NCHW_TO_NHWC).tolist()
    out["w"] = np.asarray(config["w"]).transpose(OIHW_TO_HWIO).tolist()
    if config.get("dout") is not None:
        out["dout"] = np.asarray(config["dout"]).transpose(NCHW_TO_NHWC).tolist()
    return out


def _perm(name: str):
    if name in ("w", "dw", "w_rot", "wf", "dwf"):
        return OIHW_TO_HWIO
    if name in ("b", "db", "cols", "dcols"):
        return None
    return NCHW_TO_NHWC


def _box_nhwc(box: dict) -> dict:
    p = _perm(box["tensor"])
    if p is None:
        return dict(box)
    out = dict(box)
    for key in ("start", "stop", "step"):
        out[key] = [box[key][i] for i in p]
    if "delta" in box:
        shape = box_shape(box)
        for key in ("delta", "value"):
            out[key] = np.reshape(box[key], shape).transpose(p).ravel().tolist()
    return out


def check_rule7_nhwc_is_nchw_transposed(config: dict) -> None:
    a = build_trace(config)
    b = build_trace(nhwc_config(config))
    assert a["phases"] == b["phases"]
    for name, t in a["tensors"].items():
        u = b["tensors"][name]
        p = _perm(name)
        expected = tensor(a, name) if p is None else tensor(a, name).transpose(p)
        assert u["shape"] == list(expected.shape), name
        assert np.array_equal(tensor(b, name), expected), name
        assert u["role"] == t["role"]
        assert u["axes"] == (t["axes"] if p is None else [t["axes"][i] for i in p])
    for ea, eb in zip(a["events"], b["events"], strict=True):
        assert ea["phase"] == eb["phase"] and ea["loop"] == eb["loop"]
        assert [_box_nhwc(r) for r in ea["reads"]] == eb["reads"]
        assert [_box_nhwc(w) for w in ea["writes"]] == eb["writes"]
