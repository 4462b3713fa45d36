"""The plain loops of a conv layer: the one home of the naive code every mistake
changes one step of (``convcore.mistakes.in_cs231n``, ``in_layer``, ``in_torch``); the
steps, one overridable method each, are ``convcore.mistakes.plain_steps.PlainSteps``.

``PlainLoops(inputs, convention).run(passes, record=False)`` computes the layer as the
naive code of a convention does (cs231n, layer or torch;
``convcore.mistakes.conventions``) and returns the numbers (``Run.tensors``); with
``record=True`` it also keeps every step as an event of the trace schema
(``convcore.trace.SCHEMA``) (``convcore.trace.model`` built through
``convcore.trace.events.TraceContext``, in the inputs' layout):

- ``pad``: one event per row of x, written into xp at the padding's offset;
- ``forward``: one event per output position (n, f, i, j): the window of xp times the
  kernel plus the bias, written into z;
- ``activation``: one event per (n, f): out = f(z);
- ``activation grad``: one event per (n, f): dz = dout·f'(z) (the layer convention;
  cs231n and torch code take dout as dz: they have no activation);
- ``db``: one event: db = Σ dz over n, i, j;
- ``backward``: one event per output position (n, i, j): dxp[window] += Σ_f dz·w[f] and
  dw[f] += window·dz for each filter (the loops of CS231n's and seed 001's backward;
  code left unfinished writes one of them, or neither);
- ``dx`` (only when ``dx_by_rotation``): one event per cell (n, r, c) of dxp, gathered
  from dz and the rotated kernel;
- ``crop``: one event per (n, c): dx[n, c] = the interior of dxp[n, c].

The passes are ``forward`` (pad, forward, activation) and ``backward`` (the rest); a
backward run alone pads first, as the naive backward functions do, and a layer's
backward after its forward on the same loops reads the forward's z, out and xp (its
cache). The calling forms of the conventions wrap these loops
(``convcore.mistakes.code``).

Unlike the engine's views, which fill ``value`` from the vectorised core, these loops
compute with NumPy as student code does, window by window: a window that runs past the
padded input is clamped as a slice is, a product that shapes disagree on broadcasts or
raises, as it would in the code. The tensors are then whatever the loops wrote (their
shapes too), so ``replay`` of the events rebuilds them. A step that raises stops its
pass: ``run`` records the exception per pass (``Run.raised``); the forward pass's
failure stops the layer convention's backward too (it has no cache), not the others'.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..trace import format as fmt
from ..trace.axes import kind_of
from ..trace.events import TraceContext
from ..trace.model import Event, make_event
from .plain_steps import PlainSteps, clamped

__all__ = ["PASSES", "PlainLoops", "RESULTS", "Run"]

RESULTS = ("out", "dx", "dw", "db")
PASSES = ("forward", "backward")


@dataclass
class Run:
    """What one run of the loops made.

    Attributes
    ----------
    events : the events, in order
    tensors : {name: internal-order array}: the inputs and everything the events wrote
    roles : {name: "input" | "intermediate" | "result"}
    phases : [{"name", "start", "stop"}] (a phase that raised stops where it raised)
    raised : {"forward" | "backward": (exception, event index where the pass stopped)}
    left_none : the results the code returns as None (``PlainSteps.left_none``): their
        tensors hold what the loops wrote, the calling forms return None
    """

    events: list[Event] = field(default_factory=list)
    tensors: dict[str, np.ndarray] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    phases: list[dict[str, Any]] = field(default_factory=list)
    raised: dict[str, tuple[BaseException, int]] = field(default_factory=dict)
    left_none: tuple[str, ...] = ()


class _NumbersOnly(TraceContext):
    """A TraceContext that keeps the running tensors and nothing of the events (no
    Boxes, texts or lists of numbers): the context of ``run(record=False)``. Its writes
    add into the tensors as the recording context's do, so both give the same numbers."""

    NO_WRITE: dict = {"value": []}

    def box(self, name, start, stop, step=None) -> None:
        return None

    def text(self, name, start, stop, step=None) -> str:
        return ""

    def cell_text(self, name, index) -> str:
        return ""

    def write(self, name, start, stop, step, delta) -> dict:
        """Add ``delta`` (broadcastable to the Box's internal shape) to ``name``'s cells."""
        steps = step if step is not None else (1,) * len(start)
        block = self.state[name][tuple(slice(a, b, s) for a, b, s in zip(start, stop, steps))]
        block += np.broadcast_to(np.asarray(delta, dtype=np.float64), block.shape)
        return self.NO_WRITE

    def write_cell(self, name, index, delta) -> dict:
        """Add the float ``delta`` to one cell (internal index)."""
        arr, index = self.state[name], tuple(index)
        arr[index] = float(arr[index]) + delta
        return self.NO_WRITE


class PlainLoops(PlainSteps):
    """A correct naive conv layer (its steps: ``PlainSteps``), its numbers and, when
    asked, its trace events; a mistake's subclass changes one step. Made as
    ``PlainLoops(inputs, convention)`` (inputs: ``LoopInputs`` or a ResolvedConfig)."""

    # -- the run ----------------------------------------------------------------------

    def run(self, passes: tuple[str, ...] = PASSES, record: bool = False) -> Run:
        """Run ``passes`` (module notes): the tensors they wrote, what raised, and with
        ``record`` every step as an event (``Run.events``). Another run on the same
        loops goes on from where the last one stopped (a layer's backward after its
        forward); the first run decides whether the loops record."""
        self._start(record)
        made = self.events(passes)
        if record:
            self.result.events.extend(made)
        else:
            deque(made, maxlen=0)
        return self.result

    def events(self, passes: tuple[str, ...] = PASSES) -> Iterator[Event]:
        """The events of ``passes`` one by one, as they are made (``self.result`` fills
        as they are pulled: the tensors, the phases, what raised)."""
        rc = self._start()
        if "forward" in passes:
            self.forward_ran = True
            yield from self._pass("forward", (self._pad, self._forward, self._activation))
        if "backward" in passes and ("forward" not in self.result.raised or self.convention != "layer"):
            if "dout" not in self.result.tensors:
                self._declare("dout", rc.dout, "input")
            pad = () if self.forward_ran else (self._pad,)  # the backward code pads x itself
            yield from self._pass(
                "backward", (*pad, self._activation_grad, self._db, self._backward, self._dx_gather, self._crop)
            )

    def _start(self, record: bool = True) -> Any:
        """Name the inputs, once per loops: the first run starts from them, the next ones
        go on. Returns the inputs (``rc``)."""
        rc = self.rc
        if not hasattr(self, "result"):
            self.result, self.made, self.forward_ran = Run(left_none=tuple(self.left_none)), 0, False
            self.ctx = (TraceContext if record else _NumbersOnly)(rc, {}, [])
            self.ctx.aliases = {}  # every tensor under its own name: the code makes xp, z, dz, dxp even when they copy
            b = rc.b if rc.b is not None else np.zeros(self.spec.F)
            for name, arr in (("x", rc.x), ("w", rc.w), ("b", b), ("dout", rc.dout)):
                if arr is not None:  # a layer's dout comes with its backward
                    self._declare(name, arr, "input")
        return rc

    def given_dout(self, dout: np.ndarray) -> None:
        """dout: (N, F, Ho, Wo), the upstream gradient a layer's backward receives after
        its forward ran on these loops."""
        self.rc = replace(self.rc, dout=dout)

    def _pass(self, name: str, phases: tuple) -> Iterator[Event]:
        """Run ``phases`` in order; an exception stops the pass (``Run.raised``)."""
        for phase in phases:
            start = self.made
            try:
                for event in phase():
                    self.made += 1
                    yield event
            except Exception as exc:  # noqa: BLE001 - the code's own error is what it computes
                self.result.raised[name] = (exc, self.made)
                return
            finally:
                if self.made > start:
                    self.result.phases.append({"name": self.phase, "start": start, "stop": self.made})

    def _declare(self, name: str, data: np.ndarray, role: str) -> np.ndarray:
        """Name a tensor of the trace (internal order); a written one starts at zero."""
        ctx, perm = self.ctx, kind_of(name).perm(self.rc.layout)
        ctx.ref[name], ctx.perm[name] = data, perm
        ctx.shape[name] = [data.shape[p] for p in perm] if perm else list(data.shape)
        self.result.roles[name] = role
        if role == "input":
            self.result.tensors[name] = data
        else:
            ctx.state[name] = self.result.tensors[name] = np.zeros(data.shape)
        return self.result.tensors[name]

    def _put(self, name: str, start, stop, step, new: np.ndarray, assign: bool) -> dict:
        """Write ``new`` into the Box of ``name`` as the code does: added (+=) or assigned
        (=, a delta of new − old); a shape that cannot broadcast raises as NumPy does."""
        box = tuple(slice(a, z, s) for a, z, s in zip(start, stop, step))
        old = self.ctx.state[name][box]
        if not assign and isinstance(self.ctx, _NumbersOnly):
            old += new  # the recorded write's arithmetic, without the probe and the Write
            return _NumbersOnly.NO_WRITE
        probe = old.copy()
        if assign:
            probe[...] = new
            return self.ctx.write(name, start, stop, step, probe - old)
        probe += new
        return self.ctx.write(name, start, stop, step, np.broadcast_to(new, old.shape))

    def _pad(self):
        self.phase = "pad"
        rc, ctx = self.rc, self.ctx
        top, bottom, left, right = self.pads()
        n_, c_, h_, w_ = rc.x.shape
        self._declare("xp", np.zeros((n_, c_, h_ + top + bottom, w_ + left + right)), "intermediate")
        for n in range(n_):
            for c in range(c_):
                for h in range(h_):
                    src = ((n, c, h, 0), (n + 1, c + 1, h + 1, w_))
                    dst = ((n, c, top + h, left), (n + 1, c + 1, top + h + 1, left + w_))
                    write = self._put("xp", *dst, (1, 1, 1, 1), rc.x[n, c, h], assign=True)
                    yield make_event(
                        "pad",
                        {"n": n, "c": c, "h": h},
                        [ctx.box("x", *src)],
                        [write],
                        f"{ctx.text('xp', *dst)} = {ctx.text('x', *src)}",
                    )

    def _forward(self):
        self.phase = "forward"
        rc, ctx, spec = self.rc, self.ctx, self.spec
        xp, b = ctx.state["xp"], self.result.tensors["b"]
        ho, wo = self.out_hw()
        self._declare("z", np.zeros((spec.N, spec.F, ho, wo)), "intermediate")
        for n in self.images():
            for f in range(spec.F):
                for i in range(ho):
                    for j in range(wo):
                        r, c = self.origin(i, spec.stride[0]), self.column_origin(j, spec.stride[1])
                        start, stop, step, cells = self.forward_window(xp, n, f, r, c)
                        value = float(np.sum(cells * self.forward_kernel(self.kernel(rc.w, f))) + self.bias(b, f))
                        write = ctx.write_cell("z", (n, f, i, j), value)
                        reads = [ctx.box("xp", start, stop, step), ctx.box("w", (f, 0, 0, 0), (f + 1, *rc.w.shape[1:]))]
                        bias = self.bias_words(f)
                        reads += [ctx.box("b", (f,), (f + 1,))] if bias else []
                        text = (
                            f"{ctx.cell_text('z', (n, f, i, j))} = Σ {ctx.text('xp', start, stop, step)}"
                            f"·{self.kernel_words(f)}{bias} = {fmt.number(value)}"
                        )
                        yield make_event("forward", {"n": n, "f": f, "i": i, "j": j}, reads, [write], text)

    def _whole_slices(self, phase: str, target: str, value: np.ndarray, reads: tuple[str, ...], say: str):
        """One event per (n, f) slice of ``target`` = ``value`` (internal order)."""
        ctx = self.ctx
        self._declare(target, np.zeros(value.shape), "result" if target == "out" else "intermediate")
        for n in range(value.shape[0]):
            for f in range(value.shape[1]):
                start, stop = (n, f, 0, 0), (n + 1, f + 1, *value.shape[2:])
                boxes = [ctx.box(name, start, [min(a, s) for a, s in zip(stop, ctx.ref[name].shape)]) for name in reads]
                write = self._put(target, start, stop, (1, 1, 1, 1), value[n : n + 1, f : f + 1], assign=True)
                listed = f" = {fmt.numbers(write['value'])}" if len(write["value"]) <= fmt.LIST_LIMIT else ""
                yield make_event(
                    phase, {"n": n, "f": f}, boxes, [write], f"{ctx.text(target, start, stop)} = {say}{listed}"
                )

    def _activation(self):
        self.phase = "activation"
        z = self.ctx.state["z"]
        act = self.rc.activation
        return self._whole_slices("activation", "out", act(z), ("z",), f"{act.name}(z)")

    def _activation_grad(self):
        self.phase = "activation grad"
        t = self.result.tensors
        z = t.get("z", np.zeros(self.spec.out_shape))
        dz = self.dz(z, t.get("out", z), self.rc.dout)
        if self.convention == "layer":
            return self._whole_slices("activation grad", "dz", dz, ("dout", "z"), self.dz_words)
        return self._whole_slices("activation grad", "dz", dz, ("dout",), "dout (the code has no activation)")

    def _db(self):
        self.phase = "db"
        ctx, dz = self.ctx, self.ctx.state["dz"]
        db = np.asarray(self.db(dz), dtype=np.float64)
        self._declare("db", np.zeros(db.shape), "result")
        whole = ((0,) * db.ndim, db.shape, (1,) * db.ndim)
        write = self._put("db", *whole, db, assign=True)
        yield make_event(
            "db",
            {},
            [ctx.box("dz", (0, 0, 0, 0), dz.shape)],
            [write],
            f"db = {self.db_words} = {fmt.numbers(write['value'])}",
        )

    def _backward(self):
        self.phase = "backward"
        rc, ctx, spec = self.rc, self.ctx, self.spec
        xp, dz, w = ctx.state["xp"], ctx.state["dz"], rc.w
        self._declare("dw", np.zeros(w.shape), "result")
        self._declare("dxp", np.zeros(xp.shape), "intermediate")
        dilation = self.backward_dilation()
        bh, bw = self.backward_hw()
        for n in range(spec.N):
            for i in range(bh):
                for j in range(bw):
                    g = dz[n, :, i, j]
                    r, c = self.origin(i, spec.stride[0]), self.column_origin(j, spec.stride[1])
                    reads = [ctx.box("dz", (n, 0, i, j), (n + 1, spec.F, i + 1, j + 1))]
                    writes, said = [], []
                    if not self.dx_by_rotation and "dx" not in self.unwritten:
                        block = np.zeros((spec.C, spec.KH, spec.KW))
                        for f in range(spec.F):
                            block[self.channels(f)] += g[f] * w[f]
                        start, stop, step, _ = self.window(xp, n, 0, r, c, dilation)
                        start, stop = (n, 0, *start[2:]), (n + 1, spec.C, *stop[2:])
                        writes.append(self._put("dxp", start, stop, step, block, self.assign_dx))
                        reads.append(ctx.box("w", (0, 0, 0, 0), w.shape))
                        said.append(
                            f"{ctx.text('dxp', start, stop, step)} {'=' if self.assign_dx else '+='} Σ_f dz·w[f]"
                        )
                    for f in range(spec.F) if "dw" not in self.unwritten else ():
                        start, stop, step, cells = self.window(xp, n, f, r, c, dilation)
                        writes.append(
                            self._put(
                                "dw",
                                (f, 0, 0, 0),
                                (f + 1, *w.shape[1:]),
                                (1, 1, 1, 1),
                                self.dw_window(cells) * g[f],
                                self.assign_dw,
                            )
                        )
                        reads.append(ctx.box("xp", start, stop, step))
                        said.append(
                            f"dw[{f}] {'=' if self.assign_dw else '+='} {fmt.factor(g[f])}·"
                            f"{ctx.text('xp', start, stop, step)}{self.dw_words}"
                        )
                    said = said or ["nothing: the loop that uses it was never written"]
                    text = f"{ctx.text('dz', (n, 0, i, j), (n + 1, spec.F, i + 1, j + 1))}: " + "; ".join(said)
                    yield make_event("backward", {"n": n, "i": i, "j": j}, reads, writes, text)

    def _dx_gather(self):
        """Only with ``dx_by_rotation``: dxp[n, :, r, c] = Σ dz_full[n, :, r:r+KH, c:c+KW]·w rotated
        by 180°, dz_full being dz framed by KH−1 (KW−1) zeros; one event per (n, r, c)."""
        self.phase = "dx"
        if not self.dx_by_rotation:
            return
        ctx, spec, w = self.ctx, self.spec, self.rc.w
        dz, dxp = ctx.state["dz"], ctx.state["dxp"]
        kh, kw = spec.KH, spec.KW
        full = self.full_dz(dz)
        rotated = w[:, :, ::-1, ::-1]
        for n in range(spec.N):
            for r in range(min(dxp.shape[2], full.shape[2] - kh + 1)):
                for c in range(min(dxp.shape[3], full.shape[3] - kw + 1)):
                    value = np.tensordot(full[n, :, r : r + kh, c : c + kw], rotated, axes=([0, 1, 2], [0, 2, 3]))
                    start, stop = (n, 0, r, c), (n + 1, spec.C, r + 1, c + 1)
                    write = self._put("dxp", start, stop, (1, 1, 1, 1), value.reshape(1, -1, 1, 1), assign=True)
                    rows = (max(0, r - kh + 1), min(dz.shape[2], r + 1))
                    cols = (max(0, c - kw + 1), min(dz.shape[3], c + 1))
                    box = ((n, 0, rows[0], cols[0]), (n + 1, dz.shape[1], max(rows), max(cols)))
                    yield make_event(
                        "dx",
                        {"n": n, "y": r, "x": c},
                        [ctx.box("dz", *box), ctx.box("w", (0, 0, 0, 0), w.shape)],
                        [write],
                        f"{ctx.text('dxp', start, stop)} = Σ dz framed·w rotated 180° = {fmt.numbers(write['value'])}",
                    )

    def _crop(self):
        self.phase = "crop"
        ctx, spec = self.ctx, self.spec
        dxp = ctx.state["dxp"]
        rows, cols = self.crop(spec.H, spec.W)
        dx = dxp[:, :, rows, cols]
        self._declare("dx", np.zeros(dx.shape), "result")
        (r0, r1, rs), (c0, c1, cs) = clamped(rows, dxp.shape[2]), clamped(cols, dxp.shape[3])
        for n in range(dx.shape[0]):  # an empty crop still makes its steps: each writes nothing
            for c in range(dx.shape[1]):
                src = ((n, c, r0, c0), (n + 1, c + 1, r1, c1), (1, 1, rs, cs))
                dst = ((n, c, 0, 0), (n + 1, c + 1, *dx.shape[2:]))
                write = self._put("dx", *dst, (1, 1, 1, 1), dx[n : n + 1, c : c + 1], assign=True)
                said = f"{ctx.text('dx', *dst)} = {ctx.text('dxp', *src)}"
                if dx.size == 0:
                    where = ctx.order("dxp", (str(n), str(c), f"{r0}:{r1}", f"{c0}:{c1}"))
                    said = f"dx[{n},{c}] = dxp[{','.join(where)}]: an empty slice, no cells"
                yield make_event("crop", {"n": n, "c": c}, [ctx.box("dxp", *src)], [write], said)
