"""The direct view's phases as the plain loops a student writes: the reference that the
fast generators (``forward_window``, ``direct_window``, ``direct_mac``) must equal,
event for event and byte for byte (``tests/test_trace_reference.py``).

Each generator is the seed's loop nest over the trace's tensors (internal order NCHW /
OIHW, ``ctx.ref``), one event per iteration, every gradient accumulated with ``+=``
into the running state (``ctx.write`` / ``ctx.write_cell``). A forward sum is written
whole, with the value the vectorised core computed (a sum in another order could
differ in the last bit). The fast generators compute the same events in bulk.

``reference_trace(config)`` is ``build_trace`` with these loops in place of the fast
ones; the other phases (pad, activation, crop, db per filter) and views are shared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from . import format as fmt
from .config import resolve_config
from .document import build_document, plan_phases
from .events import TraceContext
from .loops import ordered, sub_order
from .model import Event, make_event
from .views import Phase

__all__ = [
    "backward_mac_loops",
    "backward_window_loops",
    "forward_mac_loops",
    "forward_window_loops",
    "reference_trace",
]


def _window(spec, n: int, f: int, i: int, j: int) -> tuple[tuple, tuple, tuple]:
    """start, stop, step of the receptive field of (n, f, i, j) on xp."""
    c0 = (f // spec.filters_per_group) * spec.channels_per_group
    (sh, sw), (dh, dw), (eh, ew) = spec.stride, spec.dilation, spec.kernel_extent
    return (n, c0, i * sh, j * sw), (n + 1, c0 + spec.channels_per_group, i * sh + eh, j * sw + ew), (1, 1, dh, dw)


def _filter(spec, f: int) -> tuple[tuple, tuple]:
    return (f, 0, 0, 0), (f + 1, spec.channels_per_group, spec.KH, spec.KW)


def _part(arr, start, stop, step=(1, 1, 1, 1)):
    return arr[tuple(slice(a, b, s) for a, b, s in zip(start, stop, step))]


def _sizes(spec) -> dict[str, int]:
    n, f, ho, wo = spec.out_shape
    return {"n": n, "f": f, "i": ho, "j": wo, "c": spec.channels_per_group, "k": spec.KH, "l": spec.KW}


def forward_window_loops(ctx: TraceContext) -> Iterator[Event]:
    """for n, f, i, j: z[n,f,i,j] = Σ xp[window]·w[f] + b[f]."""
    spec, xp, w, b, z = ctx.spec, ctx.ref["xp"], ctx.ref["w"], ctx.ref.get("b"), ctx.ref["z"]
    for n, f, i, j in ordered(ctx.rc.loop_order, "nfij", _sizes(spec)):
        window, kernel = _window(spec, n, f, i, j), _filter(spec, f)
        reads = [ctx.box("xp", *window), ctx.box("w", *kernel)] + (
            [ctx.box("b", (f,), (f + 1,))] if b is not None else []
        )
        write = ctx.write_cell("z", (n, f, i, j), 0.0 + float(z[n, f, i, j]))  # z starts at 0 (0 + −0 is 0)
        cg = spec.channels_per_group
        if spec.macs_per_output <= fmt.EXPAND_LIMIT:
            said = fmt.products(ctx.cell_list("xp", _part(xp, *window)), ctx.cell_list("w", _part(w, *kernel)))
            said += f" + {fmt.factor(b[f])}" if b is not None else ""
        else:
            said = f"Σ {ctx.text('xp', *window)}·{ctx.text('w', *kernel)}" + (f" + b[{f}]" if b is not None else "")
            if 1 < cg <= fmt.LIST_LIMIT:  # each channel's partial sum instead
                partial = (_part(xp, *window) * _part(w, *kernel)).reshape(cg, -1).sum(axis=-1)
                c0 = window[0][1]
                said = (
                    f"{' + '.join(fmt.factor(v) for v in partial.tolist())} "
                    f"[c = {', '.join(str(c) for c in range(c0, c0 + cg))}]"
                )
                said += f" + b[{f}] {fmt.factor(b[f])}" if b is not None else ""
        text = f"{ctx.cell_text('z', (n, f, i, j))} = {said} = {fmt.number(write['value'][0])}"
        yield make_event("forward", {"n": n, "f": f, "i": i, "j": j}, reads, [write], text)


def backward_window_loops(ctx: TraceContext, phase: str, order: str, *, writes: tuple[str, ...]) -> Iterator[Event]:
    """for n, f, i, j: g = dz[n,f,i,j]; db[f] += g; dw[f] += g·xp[window];
    dxp[window] += g·w[f] (the ones ``writes`` names; db only with a bias)."""
    spec, xp, w, dz = ctx.spec, ctx.ref["xp"], ctx.ref["w"], ctx.ref["dz"]
    for n, f, i, j in ordered(order, "nfij", _sizes(spec)):
        window, kernel = _window(spec, n, f, i, j), _filter(spec, f)
        g = float(dz[n, f, i, j])
        reads, sent, said = [ctx.box("dz", (n, f, i, j), (n + 1, f + 1, i + 1, j + 1))], [], []
        if "db" in writes and "db" in ctx.state:
            sent.append(ctx.write_cell("db", (f,), g))
            said.append(f"db[{f}] += {fmt.number(g)} → {fmt.number(sent[-1]['value'][0])}")
        if "dw" in writes:
            reads.append(ctx.box("xp", *window))
            sent.append(ctx.write("dw", *kernel, None, g * _part(xp, *window)))
            said.append(f"{ctx.text('dw', *kernel)} += {fmt.factor(g)}·{ctx.text('xp', *window)}")
        if "dxp" in writes:
            reads.append(ctx.box("w", *kernel))
            sent.append(ctx.write("dxp", *window, g * _part(w, *kernel)))
            said.append(f"{ctx.text('dxp', *window)} += {fmt.factor(g)}·{ctx.text('w', *kernel)}")
        text = f"{ctx.cell_text('dz', (n, f, i, j))} = {fmt.number(g)}: " + ("; ".join(said) if g else fmt.DEAD_WINDOW)
        yield make_event(phase, {"n": n, "f": f, "i": i, "j": j}, reads, sent, text)


def _mac(spec, n: int, f: int, i: int, j: int, c: int, k: int, l: int) -> tuple[tuple, tuple, tuple]:
    """The cells one MAC pairs: xp[n, g·C/G + c, i·sh + k·dh, j·sw + l·dw], w[f,c,k,l], z[n,f,i,j]."""
    c0 = (f // spec.filters_per_group) * spec.channels_per_group
    (sh, sw), (dh, dw) = spec.stride, spec.dilation
    return (n, c0 + c, i * sh + k * dh, j * sw + l * dw), (f, c, k, l), (n, f, i, j)


def _cell_box(ctx: TraceContext, name: str, index: tuple):
    return ctx.box(name, index, [a + 1 for a in index])


def _product(ctx: TraceContext, names: tuple[str, str], cells: tuple[tuple, tuple], bias: int | None = None) -> str:
    """``xp[0,0,1,2]·w[0,0,0,0] = 3·(−1)``; with ``bias`` f, `` + b[f]`` on both sides."""
    a, b = (fmt.factor(ctx.ref[name][cell]) for name, cell in zip(names, cells))
    plus, plus_value = (f" + b[{bias}]", f" + {fmt.factor(ctx.ref['b'][bias])}") if bias is not None else ("", "")
    return f"{ctx.cell_text(names[0], cells[0])}·{ctx.cell_text(names[1], cells[1])}{plus} = {a}·{b}{plus_value}"


def forward_mac_loops(ctx: TraceContext) -> Iterator[Event]:
    """for n, f, i, j, c, k, l: z[n,f,i,j] += xp[…]·w[f,c,k,l] (+ b[f] at c = k = l = 0)."""
    spec, xp, w, b = ctx.spec, ctx.ref["xp"], ctx.ref["w"], ctx.ref.get("b")
    for n, f, i, j, c, k, l in ordered(ctx.rc.loop_order, "nfijckl", _sizes(spec)):
        x_cell, w_cell, z_cell = _mac(spec, n, f, i, j, c, k, l)
        reads = [_cell_box(ctx, "xp", x_cell), _cell_box(ctx, "w", w_cell)]
        delta, bias = xp[x_cell] * w[w_cell], None
        if b is not None and c == k == l == 0:
            delta, bias = delta + b[f], f
            reads.append(ctx.box("b", (f,), (f + 1,)))
        said = _product(ctx, ("xp", "w"), (x_cell, w_cell), bias)
        write = ctx.write_cell("z", z_cell, float(delta))
        text = f"{ctx.cell_text('z', z_cell)} += {said} → {fmt.number(write['value'][0])}"
        yield make_event("forward", _loop(n, f, i, j, c, k, l), reads, [write], text)


def backward_mac_loops(ctx: TraceContext, phase: str, order: str, *, writes: tuple[str, ...]) -> Iterator[Event]:
    """for n, f, i, j, c, k, l: g = dz[n,f,i,j]; db[f] += g (at c = k = l = 0, with a
    bias); dw[f,c,k,l] += xp[…]·g; dxp[…] += w[f,c,k,l]·g (the ones ``writes`` names)."""
    spec, dz = ctx.spec, ctx.ref["dz"]
    for n, f, i, j, c, k, l in ordered(order, "nfijckl", _sizes(spec)):
        x_cell, w_cell, z_cell = _mac(spec, n, f, i, j, c, k, l)
        g = float(dz[z_cell])
        reads, sent, said = [], [], []
        if "db" in writes and "db" in ctx.state and c == k == l == 0:
            sent.append(ctx.write_cell("db", (f,), g))
            said.append(
                f"db[{f}] += {ctx.cell_text('dz', z_cell)} = {fmt.number(g)} → {fmt.number(sent[-1]['value'][0])}"
            )
        for target, source, s_cell, t_cell in (("dw", "xp", x_cell, w_cell), ("dxp", "w", w_cell, x_cell)):
            if target in writes:
                reads.append(_cell_box(ctx, source, s_cell))
                sent.append(ctx.write_cell(target, t_cell, float(ctx.ref[source][s_cell] * g)))
                said.append(
                    f"{ctx.cell_text(target, t_cell)} += "
                    f"{_product(ctx, (source, 'dz'), (s_cell, z_cell))}"
                    f" → {fmt.number(sent[-1]['value'][0])}"
                )
        reads.append(_cell_box(ctx, "dz", z_cell))
        yield make_event(phase, _loop(n, f, i, j, c, k, l), reads, sent, "; ".join(said))


def db_mac_loops(ctx: TraceContext) -> Iterator[Event]:
    """for n, f, i, j (in loop_order's order of them): db[f] += dz[n,f,i,j]."""
    dz = ctx.ref["dz"]
    for n, f, i, j in ordered(sub_order(ctx.rc.loop_order, "nfij"), "nfij", _sizes(ctx.spec)):
        write = ctx.write_cell("db", (f,), float(dz[n, f, i, j]))
        text = (
            f"db[{f}] += {ctx.cell_text('dz', (n, f, i, j))} = {fmt.number(dz[n, f, i, j])} "
            f"→ {fmt.number(write['value'][0])}"
        )
        yield make_event("db", {"n": n, "f": f, "i": i, "j": j}, [_cell_box(ctx, "dz", (n, f, i, j))], [write], text)


def _loop(n: int, f: int, i: int, j: int, c: int, k: int, l: int) -> dict[str, int]:
    return {"n": n, "f": f, "i": i, "j": j, "c": c, "k": k, "l": l}


def _reference_generators(rc) -> dict[str, Callable[[TraceContext], Iterator[Event]]]:
    """Phase name -> its plain loops, for the direct view's phases of ``rc``."""
    fused = rc.backward == "fused"
    if rc.granularity == "mac":
        return {
            "forward": forward_mac_loops,
            "backward": lambda ctx: backward_mac_loops(ctx, "backward", rc.loop_order, writes=("db", "dw", "dxp")),
            "db": db_mac_loops,
            "dw": lambda ctx: backward_mac_loops(ctx, "dw", rc.loop_order, writes=("dw",)),
            "dx": lambda ctx: backward_mac_loops(ctx, "dx", rc.dx_loop_order, writes=("dxp",)),
        }
    loops = {
        "forward": forward_window_loops,
        "backward": lambda ctx: backward_window_loops(ctx, "backward", rc.loop_order, writes=("db", "dw", "dxp")),
    }
    if not fused:
        loops["dw"] = lambda ctx: backward_window_loops(ctx, "dw", rc.loop_order, writes=("dw",))
        loops["dx"] = lambda ctx: backward_window_loops(ctx, "dx", rc.dx_loop_order, writes=("dxp",))
    return loops


def reference_trace(config: Any) -> dict:
    """``build_trace(config)`` with the plain loops above in place of the fast
    generators of the direct view's phases, and of the forward window phase the
    transposed view shares (other phases and views as they are)."""
    rc = resolve_config(config)
    loops = (
        _reference_generators(rc)
        if rc.view == "direct"
        else ({"forward": forward_window_loops} if rc.view == "transposed" else {})
    )
    plan = [Phase(p.name, p.count, loops.get(p.name, p.events), p.letters) for p in plan_phases(rc)]
    return build_document(rc, plan)
