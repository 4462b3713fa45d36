// Any cell's story, from the trace alone (pure; the same question as Python's
// convcore.trace.contributions, and the same answers: tests/test_browser_inspector.py).
//
// A written cell: every write that reached it, in event order, with what it added, the
// running value, and the read cells whose product is that change where the reads show
// them. A cell that is only ever copied from another written cell (dx cropped from dxp)
// tells the story of the cell it was copied from. An input cell: every step that read it
// and the cells that step wrote.

import { cellName } from "./state.js";

/** The flat indices of a compiled write or read that are `flat`: its offset, or -1. */
function offsetOf(idx, flat) {
  for (let i = 0; i < idx.length; i++) if (idx[i] === flat) return i;
  return -1;
}

/** The single read of `ev` that the write at `offset` of `w` copies, or null. */
function copiedFrom(model, ev, w, offset) {
  if (ev.reads.length !== 1) return null;
  const r = ev.reads[0];
  if (r.idx.length !== w.idx.length || model.tensors[r.tensor].role === "input") return null;
  const src = r.idx[offset];
  return w.delta[offset] === w.value[offset] && model.tensors[r.tensor].data[src] === w.value[offset] ? { tensor: r.tensor, flat: src } : null;
}

/**
 * The read cells whose product (plus one more single cell: a bias) is `delta`: a one-cell
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
    found.push({ tensor: r.tensor, flat, name: cellName(meta, flat), value: meta.data[flat], single: n === 1 });
  }
  if (found.length === 1 && found[0].value === delta) return found;
  for (let a = 0; a < found.length; a++) {
    for (let b = a + 1; b < found.length; b++) {
      const p = found[a].value * found[b].value;
      if (p === delta) return [found[a], found[b]];
      for (const c of found) if (c !== found[a] && c !== found[b] && c.single && p + c.value === delta) return [found[a], found[b], c];
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
