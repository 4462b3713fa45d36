"""The im2col view: the convolution as matrix products (seed 000, done right).

The matrices (``column_matrix``, ``column_gradient``; R = C·KH·KW rows, P = N·Ho·Wo
columns):

- ``cols`` (R, P): column p = (n·Ho + i)·Wo + j is the receptive field of output
  position (n, i, j) over all C channels; row r = (c·KH + k)·KW + l holds
  ``xp[n, c, i·sh + k·dh, j·sw + l·dw]``. Rows are ordered (c, k, l), columns (n, i, j),
  whatever the layout (a matrix is the same in NCHW and NHWC).
- W: ``w`` (F, C/G, KH, KW) read as (F, C/G·KH·KW), one filter per row; dZ: ``dz``
  (N, F, Ho, Wo) read as (F, P), Z likewise.
- Groups: the rows of ``cols`` come in G blocks of C/G·KH·KW rows (group g's channels
  are contiguous), and filter f of group g multiplies block g only: the product is
  block-diagonal. ``Z[f, p] = W[f]·cols[block g, p]``,
  ``dW[f] = dZ[f]·cols[block g]ᵀ``, ``dcols[block g] = W[filters of g]ᵀ·dZ[filters of g]``.

Phases and granularity (window only: each event is one cell of a matrix product, a row
times a column, or one column moved between the image and the matrix):

- ``im2col`` (P events): column p of ``cols`` from the receptive field of xp.
- ``forward`` (N·F·Ho·Wo events): ``z[n,f,i,j] = W[f]·cols[block, p] (+ b[f])``.
- then, after ``activation`` and ``activation grad``: ``db`` (one event per filter, the
  sum of its dZ row, with a bias), ``dw`` (one event per cell of dW: row f of dZ times
  row r of cols), ``dcols`` (one event per cell of dcols: column r of the group's W
  times column p of dZ), ``col2im`` (P events: column p of dcols scatter-added into the
  dilated window of dxp; cells shared by overlapping windows accumulate, cells no window
  reaches — floor truncation — stay 0). A backward-only trace first rebuilds ``cols``
  (phase ``im2col``), since dW needs it.

Loop letters f, n, i, j (default "fnij": Z row by row, the matrix product's order);
``loop_order`` orders the forward product, and its n, i, j letters order the columns of
``im2col``, ``col2im`` and each row of ``dcols``. ``dw`` runs row-major over dW. The
``backward`` ("fused"/"separate") and ``dx_loop_order`` settings do not apply: the
matrix form has one natural order (db, dW, dcols, col2im) and ignores them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from . import format as fmt
from .events import TraceContext
from .loops import ordered, sub_order
from .model import Box, Event, make_event, make_write
from .phases import db_phase
from .views import Phase, View, register_view

__all__ = ["Im2colView", "column_gradient", "column_matrix"]


def column_matrix(spec, xp: np.ndarray) -> np.ndarray:
    """``cols: (C·KH·KW, N·Ho·Wo)`` from ``xp: (N, C, Hp, Wp)``:
    ``cols[(c·KH + k)·KW + l, (n·Ho + i)·Wo + j] = xp[n, c, i·sh + k·dh, j·sw + l·dw]``."""
    n, c, _, _ = spec.padded_shape
    ho, wo = spec.out_hw
    dh, dw = spec.dilation
    sh, sw = spec.stride
    cols = np.empty((c, spec.KH, spec.KW, n, ho, wo))
    for k in range(spec.KH):
        for l in range(spec.KW):
            rows = slice(k * dh, k * dh + (ho - 1) * sh + 1, sh)
            cols_ = slice(l * dw, l * dw + (wo - 1) * sw + 1, sw)
            cols[:, k, l] = xp[:, :, rows, cols_].transpose(1, 0, 2, 3)
    return cols.reshape(c * spec.KH * spec.KW, n * ho * wo)


def column_gradient(spec, w: np.ndarray, dz: np.ndarray) -> np.ndarray:
    """``dcols: (C·KH·KW, N·Ho·Wo) = Wᵀ·dZ`` per group, from ``w: (F, C/G, KH, KW)`` and
    ``dz: (N, F, Ho, Wo)``: row block g = ``W_gᵀ (C/G·KH·KW, F/G) · dZ_g (F/G, N·Ho·Wo)``."""
    g, fg = spec.groups, spec.filters_per_group
    w_g = w.reshape(g, fg, -1)  # (G, F/G, C/G·KH·KW)
    dz_g = dz.transpose(1, 0, 2, 3).reshape(g, fg, -1)  # (G, F/G, P)
    return np.matmul(w_g.transpose(0, 2, 1), dz_g).reshape(-1, dz_g.shape[-1])


class _Matrices:
    """Geometry of the im2col matrices and the per-column pieces events share."""

    def __init__(self, ctx: TraceContext):
        spec = self.spec = ctx.spec
        self.ctx = ctx
        self.N, self.F, self.Ho, self.Wo = spec.out_shape
        self.C = spec.C
        self.cg, self.fg = spec.channels_per_group, spec.filters_per_group
        self.taps = spec.KH * spec.KW
        self.block = self.cg * self.taps  # rows per group
        self.R = self.C * self.taps
        self.P = self.N * self.Ho * self.Wo
        self.sizes = {"n": self.N, "f": self.F, "i": self.Ho, "j": self.Wo}
        self.eh, self.ew = spec.kernel_extent
        self.step = (1, 1, *spec.dilation)

    def column(self, n: int, i: int, j: int) -> int:
        return (n * self.Ho + i) * self.Wo + j

    def columns(self) -> Iterator[tuple[int, int, int]]:
        """(n, i, j) in the order of the loop order's n, i, j letters."""
        return ordered(sub_order(self.ctx.rc.loop_order, "nij"), "nij", self.sizes)

    def window(self, n: int, i: int, j: int) -> tuple[tuple, tuple]:
        """start, stop of the receptive field of (n, i, j) over all channels (internal order)."""
        r0, q0 = i * self.spec.stride[0], j * self.spec.stride[1]
        return (n, 0, r0, q0), (n + 1, self.C, r0 + self.eh, q0 + self.ew)

    def where(self, p: int) -> str:
        n, rest = divmod(p, self.Ho * self.Wo)
        i, j = divmod(rest, self.Wo)
        return f"image {n}, output row {i}, column {j}"


def _product_cell(
    ctx: TraceContext, phase: str, loop: dict, reads: list, target: str, cell: tuple, product: str, terms: str
) -> Event:
    """One cell of a matrix product as an event: ``target[cell] = product = terms =
    value`` (``terms``: the products written out, "" when there are too many), the
    value from the vectorised core."""
    value = float(ctx.ref[target][cell])
    said = f" = {terms}" if terms else ""
    return make_event(
        phase,
        loop,
        reads,
        [ctx.write_cell(target, cell, value)],
        f"{ctx.cell_text(target, cell)} = {product}{said} = {fmt.number(value)}",
    )


def _im2col_events(ctx: TraceContext) -> Iterator[Event]:
    """Phase "im2col", columns (n, i, j) in the loop order's n, i, j order: each event
    reads the receptive field of xp over all channels and writes column p of cols."""
    m = _Matrices(ctx)
    cols = ctx.ref["cols"]
    for n, i, j in m.columns():
        p = m.column(n, i, j)
        start, stop = m.window(n, i, j)
        values = cols[:, p]
        listed = f" = {fmt.numbers(values.tolist())}" if m.R <= fmt.EXPAND_LIMIT else ""
        write = ctx.write("cols", (0, p), (m.R, p + 1), None, values[:, None])
        yield make_event(
            "im2col",
            {"n": n, "i": i, "j": j},
            [ctx.box("xp", start, stop, m.step)],
            [write],
            f"{ctx.text('cols', (0, p), (m.R, p + 1))} = {ctx.text('xp', start, stop, m.step)}"
            f"{listed} (column {p}: {m.where(p)})",
        )


def _forward_events(ctx: TraceContext) -> Iterator[Event]:
    """Phase "forward", (f, n, i, j) in ``loop_order``: each event reads row f of W,
    column p of the group's block of cols (and b[f]) and writes z[n,f,i,j]."""
    m = _Matrices(ctx)
    cols, w = ctx.ref["cols"], ctx.ref["w"].reshape(m.F, -1)
    bias = ctx.ref.get("b")
    w_box = [ctx.box("w", (f, 0, 0, 0), (f + 1, m.cg, m.spec.KH, m.spec.KW)) for f in range(m.F)]
    w_text = [ctx.text("w", (f, 0, 0, 0), (f + 1, m.cg, m.spec.KH, m.spec.KW)) for f in range(m.F)]
    expand = m.block <= fmt.EXPAND_LIMIT
    w_factors = [[fmt.factor(v) for v in row] for row in w.tolist()] if expand else []
    # column p of a group's block of cols: its Box, its text and its values as factors,
    # the same for every filter of the group (made once per group and column)
    col_reads: dict[tuple[int, int], tuple[Box, str, list[str]]] = {}
    for f, n, i, j in ordered(ctx.rc.loop_order, "fnij", m.sizes):
        p = m.column(n, i, j)
        r0 = (f // m.fg) * m.block
        read = col_reads.get((r0, p))
        if read is None:
            col = (r0, p), (r0 + m.block, p + 1)
            factors = [fmt.factor(v) for v in cols[r0 : r0 + m.block, p].tolist()] if expand else []
            read = col_reads[r0, p] = (ctx.box("cols", *col), ctx.text("cols", *col), factors)
        col_read, col_said, col_factors = read
        reads = [col_read, w_box[f]]
        rhs = f"{w_text[f]}·{col_said}"
        terms = fmt.factor_products(w_factors[f], col_factors) if expand else ""
        if bias is not None:
            reads.append(ctx.box("b", (f,), (f + 1,)))
            rhs += f" + b[{f}]"
            terms += f" + {fmt.factor(float(bias[f]))}" if expand else ""
        yield _product_cell(ctx, "forward", {"n": n, "f": f, "i": i, "j": j}, reads, "z", (n, f, i, j), rhs, terms)


def _dw_events(ctx: TraceContext) -> Iterator[Event]:
    """Phase "dw", dW row-major (f, c, k, l): each event reads row f of dZ (dz[:, f])
    and row r of cols and writes dw[f,c,k,l]."""
    m = _Matrices(ctx)
    spec = m.spec
    cols, dz = ctx.ref["cols"], ctx.ref["dz"]
    expand = m.P <= fmt.EXPAND_LIMIT
    for f in range(m.F):
        row_box = (0, f, 0, 0), (m.N, f + 1, m.Ho, m.Wo)
        dz_row = dz[:, f].ravel().tolist()
        r0 = (f // m.fg) * m.block
        for c in range(m.cg):
            for k in range(spec.KH):
                for l in range(spec.KW):
                    r = r0 + (c * spec.KH + k) * spec.KW + l
                    reads = [ctx.box("dz", *row_box), ctx.box("cols", (r, 0), (r + 1, m.P))]
                    product = f"{ctx.text('dz', *row_box)}·{ctx.text('cols', (r, 0), (r + 1, m.P))}"
                    terms = fmt.products(dz_row, cols[r].tolist()) if expand else ""
                    yield _product_cell(
                        ctx, "dw", {"f": f, "c": c, "k": k, "l": l}, reads, "dw", (f, c, k, l), product, terms
                    )


def _dcols_events(ctx: TraceContext) -> Iterator[Event]:
    """Phase "dcols", rows r = (c, k, l) of dcols, each row's columns in the loop
    order's n, i, j order: each event reads column (c, k, l) of the group's W and
    column p of the group's dZ and writes dcols[r, p]. (Each row's values, their texts
    and the running state are made in bulk, at once.)"""
    m = _Matrices(ctx)
    spec = m.spec
    w, dz = ctx.ref["w"], ctx.ref["dz"]
    target, state = ctx.ref["dcols"], ctx.state["dcols"]
    expand = m.fg <= fmt.EXPAND_LIMIT
    columns = [(n, i, j, m.column(n, i, j)) for n, i, j in m.columns()]
    ps = [p for *_, p in columns]
    name, one = ctx.name("dcols"), ctx.unit("dcols")
    # column p of a group's dZ: its Box, its text and its values as factors, the same for
    # every row r of the group's block (made once per group and column)
    dz_reads: dict[tuple[int, int], tuple[Box, str, list[str]]] = {}
    for r in range(m.R):
        c, rest = divmod(r, m.taps)
        k, l = divmod(rest, spec.KW)
        f0 = (c // m.cg) * m.fg
        cc = c - (c // m.cg) * m.cg
        w_col = (f0, cc, k, l), (f0 + m.fg, cc + 1, k + 1, l + 1)
        w_read, w_said = ctx.box("w", *w_col), ctx.text("w", *w_col)
        w_factors = [fmt.factor(v) for v in w[f0 : f0 + m.fg, cc, k, l].tolist()]
        # the row's writes: each cell written once, its value the running state plus it
        deltas = target[r, ps]
        values = state[r, ps] + deltas
        state[r, ps] = values
        value_texts = fmt.number_list(values)
        for (n, i, j, p), delta, value, value_text in zip(columns, deltas.tolist(), values.tolist(), value_texts):
            read = dz_reads.get((f0, p))
            if read is None:
                dz_col = (n, f0, i, j), (n + 1, f0 + m.fg, i + 1, j + 1)
                factors = [fmt.factor(v) for v in dz[n, f0 : f0 + m.fg, i, j].tolist()]
                read = dz_reads[f0, p] = (ctx.box("dz", *dz_col), ctx.text("dz", *dz_col), factors)
            dz_read, dz_said, dz_factors = read
            terms = f" = {fmt.factor_products(w_factors, dz_factors)}" if expand else ""
            at = ctx.order("dcols", (r, p))
            yield make_event(
                "dcols",
                {"c": c, "k": k, "l": l, "n": n, "i": i, "j": j},
                [w_read, dz_read],
                [make_write(name, at, ctx.order("dcols", (r + 1, p + 1)), one, [delta], [value])],
                f"{fmt.cell(name, at)} = {w_said}·{dz_said}{terms} = {value_text}",
            )


def _col2im_events(ctx: TraceContext) -> Iterator[Event]:
    """Phase "col2im", columns (n, i, j) in the loop order's n, i, j order: each event
    reads column p of dcols and adds it to the dilated window of dxp."""
    m = _Matrices(ctx)
    spec = m.spec
    dcols = ctx.ref["dcols"]
    for n, i, j in m.columns():
        p = m.column(n, i, j)
        start, stop = m.window(n, i, j)
        delta = dcols[:, p].reshape(1, m.C, spec.KH, spec.KW)
        write = ctx.write("dxp", start, stop, m.step, delta)
        yield make_event(
            "col2im",
            {"n": n, "i": i, "j": j},
            [ctx.box("dcols", (0, p), (m.R, p + 1))],
            [write],
            f"{ctx.text('dxp', start, stop, m.step)} += {ctx.text('dcols', (0, p), (m.R, p + 1))}"
            f" (column {p}: {m.where(p)}; overlapping windows add up)",
        )


class Im2colView(View):
    name = "im2col"
    title = "im2col"
    letters = {"window": "fnij"}

    def extra_shapes(self, spec) -> dict[str, tuple[int, ...]]:
        n, _, ho, wo = spec.out_shape
        rows_cols = (spec.C * spec.KH * spec.KW, n * ho * wo)
        return {"cols": rows_cols, "dcols": rows_cols}

    def extra_tensors(self, rc, ref: dict) -> dict:
        tensors = {"cols": (column_matrix(rc.spec, ref["xp"]), "intermediate")}
        if rc.backward_included:
            tensors["dcols"] = (column_gradient(rc.spec, ref["w"], ref["dz"]), "intermediate")
        return tensors

    @staticmethod
    def _im2col_phase(rc) -> Phase:
        n, _, ho, wo = rc.spec.out_shape
        return Phase("im2col", n * ho * wo, _im2col_events, "nij")

    def forward_phases(self, rc) -> list[Phase]:
        return [self._im2col_phase(rc), Phase("forward", math.prod(rc.spec.out_shape), _forward_events)]

    def backward_phases(self, rc) -> list[Phase]:
        spec = rc.spec
        n, _, ho, wo = spec.out_shape
        rows = spec.C * spec.KH * spec.KW
        phases = [] if rc.forward_included else [self._im2col_phase(rc)]
        if rc.has_bias:
            phases.append(db_phase(rc))
        phases += [
            Phase("dw", math.prod(spec.w_shape), _dw_events, "fckl"),
            Phase("dcols", rows * n * ho * wo, _dcols_events, "cklnij"),
            Phase("col2im", n * ho * wo, _col2im_events, "nij"),
        ]
        return phases


register_view(Im2colView())
