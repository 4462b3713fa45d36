// Any cell's story, from the trace alone (pure; the same question as Python's
// convcore.trace.contributions, and the same answers: tests/test_inspect_agrees.py).
//
// A written cell: every write that reached it, in event order, with what it added, the
// running value, and the read cells whose product is that change where the reads show
// them. A cell of a crop (the header's cropped_from: dx of dxp) tells the story of the
// cell it was cropped from. An input cell: every step that read it
// and the cells that step wrote.

import { cellName, unravel } from "./trace-model.js";

/** The flat indices of a compiled write or read that are `flat`: its offset, or -1. */
function offsetOf(idx, flat) {
  for (let i = 0; i < idx.length; i++) if (idx[i] === flat) return i;
  return -1;
}

/** The cell of the tensor `w` is cropped from (the header's `cropped_from`) that the
 *  write at `offset` of `w` copies, or null. */
function copiedFrom(model, ev, w, offset) {
  const source = model.tensors[w.tensor].croppedFrom;
  const r = ev.reads.find((x) => x.tensor === source);
  if (!r || r.idx.length !== w.idx.length) return null;
  const src = r.idx[offset];
  return w.delta[offset] === w.value[offset] && model.tensors[r.tensor].data[src] === w.value[offset] ? { tensor: r.tensor, flat: src } : null;
}

/**
 * The read cells whose product (plus the bias, on a bias MAC) is `delta`: a one-cell
 * read is a scalar factor, a read of the write's size gives the cell at the same
 * position; the tensor the written one is the gradient of (the header's gradient_of) is
 * not a factor of it. null when no such factors are read.
 */
function factorsOf(model, ev, w, offset, delta) {
  const skip = model.tensors[w.tensor].gradientOf;
  const found = [];
  for (const r of ev.reads) {
    if (r.tensor === skip) continue;
    const n = r.idx.length;
    if (n !== 1 && n !== w.idx.length) continue;
    const flat = r.idx[n === 1 ? 0 : offset];
    const meta = model.tensors[r.tensor];
    found.push({ tensor: r.tensor, flat, name: cellName(meta, flat), value: meta.data[flat] });
  }
  // the bias (the header's `added`) is added to a product, never a factor of it
  const bias = found.filter((f) => model.tensors[f.tensor].added);
  const others = found.filter((f) => !model.tensors[f.tensor].added);
  if (others.length === 1 && others[0].value === delta) return others;
  for (let a = 0; a < others.length; a++) {
    for (let b = a + 1; b < others.length; b++) {
      const p = others[a].value * others[b].value;
      if (p === delta) return [others[a], others[b]];
      if (bias.length && p + bias[0].value === delta) return [others[a], others[b], bias[0]];
    }
  }
  return null;
}

/**
 * The story of cell `flat` of tensor `name`:
 * {cell, value, via (the cell it was copied from, or null), writes: [{event, phase,
 * delta, value, factors|null}], reads: [{event, phase, fed: [cell names]}]}.
 */
export function cellStory(model, name, flat) {
  const meta = model.tensors[name];
  if (!meta) throw new Error(`no tensor ${name} in this trace`);
  let tensor = name;
  let cell = flat;
  let via = null;
  // a cell only ever copied from one written cell tells that cell's story
  for (let hop = 0; hop < 4; hop++) {
    const hits = [];
    model.compiled.forEach((ev, k) => {
      for (const w of ev.writes) if (w.tensor === tensor && offsetOf(w.idx, cell) >= 0) hits.push([ev, w, k]);
    });
    const src = hits.length === 1 ? copiedFrom(model, hits[0][0], hits[0][1], offsetOf(hits[0][1].idx, cell)) : null;
    if (!src) break;
    via = { tensor: src.tensor, flat: src.flat, name: cellName(model.tensors[src.tensor], src.flat) };
    tensor = src.tensor;
    cell = src.flat;
  }
  const writes = [];
  const reads = [];
  model.compiled.forEach((ev, k) => {
    for (const w of ev.writes) {
      if (w.tensor !== tensor) continue;
      const i = offsetOf(w.idx, cell);
      if (i < 0) continue;
      const delta = w.delta[i];
      writes.push({ event: k, phase: ev.phase, delta, value: w.value[i], factors: factorsOf(model, ev, w, i, delta) });
    }
    if (tensor === name && ev.reads.some((r) => r.tensor === name && offsetOf(r.idx, flat) >= 0)) {
      const fed = [];
      for (const w of ev.writes) for (let i = 0; i < w.idx.length && fed.length < 4; i++) fed.push(cellName(model.tensors[w.tensor], w.idx[i]));
      reads.push({ event: k, phase: ev.phase, fed });
    }
  });
  return { cell: cellName(meta, flat), value: meta.data[flat], via, writes, reads };
}

/**
 * The cell's closed form and PyTorch expression, from the header's `formula`, `torch`
 * and `torch_setup` (none for an input or a mistake trace): {formula, where: "n = 0,
 * c = 1, h = 2, w = 3", torch: [setup lines..., the cell's expression]} or null.
 */
export function cellFormula(model, name, flat) {
  const t = model.header.tensors[name];
  if (!t || !t.formula) return null;
  const idx = unravel(flat, t.shape);
  const at = Object.fromEntries(t.axes.map((a, i) => [a, idx[i]]));
  const where = t.axes.map((a) => `${a} = ${at[a]}`).join(", ");
  const expr = t.torch ? t.torch.replace(/\{(\w+)\}/g, (m, a) => (a in at ? String(at[a]) : m)) : "";
  return { formula: t.formula, where, torch: expr ? [...(model.header.torch_setup ?? []), expr] : [] };
}
