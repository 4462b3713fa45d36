// The trace as data, and the tensors as they stand at any step. Pure: no DOM, no fetch.
//
// Step semantics: step t (0 ≤ t < total_events) shows the state after event t has been
// applied, i.e. every written tensor equals the replay of events 0..t. Step -1 is the
// state before any event (all written tensors zero); it is only shown while no event has
// arrived yet.
//
// Any step is reachable without replaying from 0: the model keeps a full copy of every
// written tensor every `checkpointEvery` events (taken while the events stream in), and
// each event remembers the values its writes overwrote, so one step forward sets the
// written cells to `value` and one step back sets them back to `prev`. Both are exact.

/** Row-major strides of `shape`. shape: (d0, ..., dk) -> strides: (k+1,) */
export function rowMajorStrides(shape) {
  const strides = new Array(shape.length);
  let s = 1;
  for (let a = shape.length - 1; a >= 0; a--) {
    strides[a] = s;
    s *= shape[a];
  }
  return strides;
}

export function product(list) {
  let p = 1;
  for (const v of list) p *= v;
  return p;
}

/** The number of indices start, start+step, ... below stop. */
export function boxCount(start, stop, step) {
  return stop > start ? Math.ceil((stop - start) / step) : 0;
}

/**
 * Flat row-major indices of every cell of `box` in tensor `meta`, in the box's own
 * row-major order (the order of a write's `delta` and `value`).
 * box: {start, stop, step}, one entry per axis of the tensor -> Int32Array (cells,)
 */
export function boxIndices(meta, box) {
  const nd = meta.shape.length;
  if (box.start.length !== nd || box.stop.length !== nd || box.step.length !== nd) {
    throw new Error(
      `box on ${box.tensor} has ${box.start.length} axes, tensor ${meta.name} has ${nd}`,
    );
  }
  const counts = new Array(nd);
  let total = 1;
  for (let a = 0; a < nd; a++) {
    counts[a] = boxCount(box.start[a], box.stop[a], box.step[a]);
    total *= counts[a];
  }
  const out = new Int32Array(total);
  if (total === 0) return out;
  const pos = new Array(nd).fill(0);
  let base = 0;
  for (let a = 0; a < nd; a++) base += box.start[a] * meta.strides[a];
  const inc = new Array(nd);
  for (let a = 0; a < nd; a++) inc[a] = box.step[a] * meta.strides[a];
  let flat = base;
  for (let k = 0; k < total; k++) {
    out[k] = flat;
    // odometer over the box
    for (let a = nd - 1; a >= 0; a--) {
      pos[a] += 1;
      flat += inc[a];
      if (pos[a] < counts[a]) break;
      flat -= inc[a] * counts[a];
      pos[a] = 0;
    }
  }
  return out;
}

/** Multi-index of flat row-major index `flat` in `shape`. */
export function unravel(flat, shape) {
  const idx = new Array(shape.length);
  for (let a = shape.length - 1; a >= 0; a--) {
    idx[a] = flat % shape[a];
    flat = Math.floor(flat / shape[a]);
  }
  return idx;
}

/**
 * Metadata of one header tensor: {name, shape, strides, size, axes, grid, role, data,
 * title, detail, group, order, marks}: how to draw it comes from the header's drawing
 * facts (docs/trace-format.md), never from its name.
 */
export function tensorMeta(name, t) {
  const shape = t.shape.map(Number);
  const size = product(shape);
  if (!Array.isArray(t.data) && !(t.data instanceof Float64Array)) {
    throw new Error(`tensor ${name} has no data list`);
  }
  if (t.data.length !== size) {
    throw new Error(`tensor ${name} has ${t.data.length} numbers, shape ${JSON.stringify(shape)} needs ${size}`);
  }
  const axes = t.axes ?? shape.map((_, a) => `a${a}`);
  return {
    name,
    shape,
    strides: rowMajorStrides(shape),
    size,
    axes,
    grid: t.grid ?? [shape.length > 1 ? axes[axes.length - 2] : null, axes[axes.length - 1]],
    slice_axes: Array.isArray(t.slice_axes) ? t.slice_axes : null, // the slices' order, when not the axes'
    role: t.role ?? "input",
    data: Float64Array.from(t.data),
    title: t.title ?? "",
    detail: t.detail ?? "",
    group: t.group ?? "backward",
    order: Number.isFinite(t.order) ? t.order : Infinity,
    marks: Array.isArray(t.marks) ? t.marks : null,
    gradientOf: t.gradient_of ?? null, // the tensor this one is the gradient of (a drawing fact)
    added: t.added === true, // the bias: added to a sum, never a factor
    croppedFrom: t.cropped_from ?? null, // the tensor this one is a crop of (dx of dxp)
  };
}

/** Widen stats {maxPositive, maxNegative (a magnitude), fractional} to cover value v. */
function noteValue(stats, v) {
  if (v > stats.maxPositive) stats.maxPositive = v;
  else if (-v > stats.maxNegative) stats.maxNegative = -v;
  if (!stats.fractional && !Number.isInteger(v)) stats.fractional = true;
}

/** True for tensors that events write (they start at zero in a replay). */
export function isWritten(meta) {
  return meta.role !== "input";
}

/**
 * The trace: header metadata plus the events received so far, compiled for fast
 * stepping. Build with `new TraceModel(header)`, then `addEvents([...])` as they arrive.
 */
export class TraceModel {
  constructor(header, { checkpointEvery } = {}) {
    if (!header || !header.tensors) throw new Error("trace header has no tensors");
    this.header = header;
    this.spec = header.spec ?? {};
    this.phases = (header.phases ?? []).map((p) => ({ name: p.name, start: p.start, stop: p.stop }));
    this.total = Number(header.total_events ?? 0);
    this.tensors = {};
    for (const [name, t] of Object.entries(header.tensors)) this.tensors[name] = tensorMeta(name, t);
    this.names = Object.keys(this.tensors);
    this.writtenNames = this.names.filter((n) => isWritten(this.tensors[n]));
    // Checkpoints: at most ~128 of them, every 256 events or more.
    this.checkpointEvery = checkpointEvery ?? Math.max(256, Math.ceil(this.total / 128));
    this.events = []; // raw events as received (for export)
    this.compiled = []; // {phase, loop, text, reads:[{tensor, idx, box}], writes:[{tensor, idx, box, value, delta, prev}], line, lines, scalars}
    this.live = {}; // values after every received event
    this.liveCounts = {}; // how many writes each cell has had after every received event
    for (const n of this.writtenNames) {
      this.live[n] = new Float64Array(this.tensors[n].size);
      this.liveCounts[n] = new Uint32Array(this.tensors[n].size);
    }
    this.checkpoints = []; // checkpoints[k] = {values, counts} before event k * checkpointEvery
    this.complete = this.total === 0;
    this.touched = this.phases.map(() => new Set()); // per phase: tensors its events read or write
    this.wrote = this.phases.map(() => new Set()); // per phase: tensors its events write
    // per tensor: what its cells will ever show (for sizing cells)
    this.valueStats = {};
    for (const n of this.names) {
      const st = (this.valueStats[n] = { maxPositive: 0, maxNegative: 0, fractional: false });
      for (const v of this.tensors[n].data) noteValue(st, v);
    }
  }

  get received() {
    return this.compiled.length;
  }

  /** The stream's end line: its comparison (the numbers a student sent, checked against
   *  the trace: the stream sends it last) joins the header. */
  addEnd(end) {
    if (end && end.comparison) this.header.comparison = end.comparison;
  }

  /** Compile and append events (in order). Throws on boxes that do not fit their tensor. */
  addEvents(events) {
    for (const ev of events) {
      const k = this.compiled.length;
      if (k % this.checkpointEvery === 0) {
        this.checkpoints.push({ values: this._copy(this.live), counts: this._copy(this.liveCounts) });
      }
      const reads = (ev.reads ?? []).map((box) => ({ tensor: box.tensor, box, idx: boxIndices(this._meta(box.tensor), box) }));
      const writes = (ev.writes ?? []).map((box) => {
        const meta = this._meta(box.tensor);
        const idx = boxIndices(meta, box);
        if (box.value.length !== idx.length) {
          throw new Error(`event ${k} writes ${idx.length} cells of ${box.tensor} but gives ${box.value.length} values`);
        }
        if (!isWritten(meta)) throw new Error(`event ${k} writes ${box.tensor}, an input tensor`);
        const live = this.live[box.tensor];
        const counts = this.liveCounts[box.tensor];
        const stats = this.valueStats[box.tensor];
        const prev = new Float64Array(idx.length);
        const value = Float64Array.from(box.value);
        for (let i = 0; i < idx.length; i++) {
          prev[i] = live[idx[i]];
          live[idx[i]] = value[i];
          counts[idx[i]] += 1;
          noteValue(stats, value[i]);
        }
        return { tensor: box.tensor, box, idx, value, delta: Float64Array.from(box.delta ?? []), prev };
      });
      const pi = phaseIndexAt(this.phases, k);
      if (pi >= 0) {
        for (const r of reads) this.touched[pi].add(r.tensor);
        for (const w of writes) {
          this.touched[pi].add(w.tensor);
          this.wrote[pi].add(w.tensor);
        }
      }
      this.events.push(ev);
      // (the listing's line the step runs, every line it runs, and the scalars they use:
      // header.code's; absent in a trace without a listing)
      const line = Number.isInteger(ev.line) ? ev.line : null;
      this.compiled.push({ phase: ev.phase, loop: ev.loop ?? {}, text: ev.text ?? "", reads, writes, line, lines: ev.lines ?? (line ? [line] : []), scalars: ev.scalars ?? {} });
    }
    if (this.total && this.compiled.length >= this.total) this.complete = true;
  }

  _meta(name) {
    const meta = this.tensors[name];
    if (!meta) throw new Error(`event names tensor ${name}, which the header does not have`);
    return meta;
  }

  _copy(state) {
    const out = {};
    for (const [n, arr] of Object.entries(state)) out[n] = arr.slice();
    return out;
  }

  /** The whole document (header + events), as build_trace returns it. */
  toDocument() {
    const { type, ...rest } = this.header;
    return { ...rest, events: this.events };
  }
}

/**
 * A movable view of the model at one step. `values[name]` is the tensor's data at the
 * current step (header data for inputs, working copies for written tensors).
 */
export class Cursor {
  constructor(model) {
    this.model = model;
    this.applied = 0; // number of events applied
    this.values = {}; // name -> (size,) values at this step
    this.counts = {}; // written name -> (size,) number of writes each cell has had so far
    for (const n of model.names) {
      const meta = model.tensors[n];
      this.values[n] = isWritten(meta) ? new Float64Array(meta.size) : meta.data;
      if (isWritten(meta)) this.counts[n] = new Uint32Array(meta.size);
    }
  }

  get step() {
    return this.applied - 1;
  }

  /** Move to step t (clamped to what has arrived); returns the step reached. */
  seek(t) {
    const model = this.model;
    const target = Math.max(0, Math.min(model.received, Math.floor(t) + 1));
    const K = model.checkpointEvery;
    const distance = Math.abs(target - this.applied);
    if (distance > K / 2) {
      // restore the nearest checkpoint at or before the target, then walk forward
      const c = Math.min(Math.floor(target / K), model.checkpoints.length - 1);
      if (c >= 0 && Math.abs(target - c * K) < distance) {
        const cp = model.checkpoints[c];
        for (const n of model.writtenNames) {
          this.values[n].set(cp.values[n]);
          this.counts[n].set(cp.counts[n]);
        }
        this.applied = c * K;
      }
    }
    while (this.applied < target) this._apply(model.compiled[this.applied++]);
    while (this.applied > target) this._undo(model.compiled[--this.applied]);
    return this.step;
  }

  _apply(ev) {
    for (const w of ev.writes) {
      const arr = this.values[w.tensor];
      const counts = this.counts[w.tensor];
      const { idx, value } = w;
      for (let i = 0; i < idx.length; i++) {
        arr[idx[i]] = value[i];
        counts[idx[i]] += 1;
      }
    }
  }

  _undo(ev) {
    for (let k = ev.writes.length - 1; k >= 0; k--) {
      const w = ev.writes[k];
      const arr = this.values[w.tensor];
      const counts = this.counts[w.tensor];
      const { idx, prev } = w;
      for (let i = 0; i < idx.length; i++) {
        arr[idx[i]] = prev[i];
        counts[idx[i]] -= 1;
      }
    }
  }

  /** The current event (compiled), or null at step -1. */
  get event() {
    return this.applied > 0 ? this.model.compiled[this.applied - 1] : null;
  }
}

/** Index of the phase containing event `step`, or -1. phases: [{name, start, stop}] */
export function phaseIndexAt(phases, step) {
  for (let i = 0; i < phases.length; i++) {
    if (step >= phases[i].start && step < phases[i].stop) return i;
  }
  return -1;
}

/** First event of the next non-empty phase after `step`'s phase, or null. */
export function nextPhaseStart(phases, step) {
  for (const p of phases) if (p.stop > p.start && p.start > step) return p.start;
  return null;
}

/** Start of the current phase if `step` is past it, else start of the previous one. */
export function previousPhaseStart(phases, step) {
  let best = null;
  for (const p of phases) if (p.stop > p.start && p.start < step) best = best === null ? p.start : Math.max(best, p.start);
  return best ?? (phases.length ? 0 : null);
}

/**
 * Where to land in a new trace after the setup changed: the same phase (by name) at the
 * same fraction of it, else the same fraction of the whole trace.
 */
export function carryStep(oldPhases, oldTotal, oldStep, newPhases, newTotal) {
  if (newTotal <= 0) return -1;
  if (oldStep < 0 || oldTotal <= 0) return 0;
  const pi = phaseIndexAt(oldPhases, oldStep);
  if (pi >= 0) {
    const old = oldPhases[pi];
    const same = newPhases.find((p) => p.name === old.name && p.stop > p.start);
    if (same) {
      const oldLen = old.stop - old.start;
      if (oldLen === same.stop - same.start) return same.start + (oldStep - old.start);
      const frac = oldLen > 1 ? (oldStep - old.start) / (oldLen - 1) : 0;
      return same.start + Math.round(frac * (same.stop - same.start - 1));
    }
  }
  const frac = oldTotal > 1 ? oldStep / (oldTotal - 1) : 0;
  return Math.min(newTotal - 1, Math.round(frac * (newTotal - 1)));
}

/**
 * Replay check: add up every write's delta from zero and compare with the header's
 * data; also check that each write's `value` is the running sum. Returns
 * {ok, maxError, valueError, perTensor: {name: maxAbsError}}.
 */
export function replayCheck(model, tolerance = 1e-9) {
  const sums = {};
  for (const n of model.writtenNames) sums[n] = new Float64Array(model.tensors[n].size);
  let valueError = 0;
  for (const ev of model.compiled) {
    for (const w of ev.writes) {
      const arr = sums[w.tensor] ?? (sums[w.tensor] = new Float64Array(model.tensors[w.tensor].size));
      for (let i = 0; i < w.idx.length; i++) {
        arr[w.idx[i]] += w.delta[i];
        valueError = Math.max(valueError, Math.abs(arr[w.idx[i]] - w.value[i]));
      }
    }
  }
  const perTensor = {};
  let maxError = 0;
  let scale = 1;
  for (const [n, arr] of Object.entries(sums)) {
    const data = model.tensors[n].data;
    let e = 0;
    for (let i = 0; i < arr.length; i++) {
      e = Math.max(e, Math.abs(arr[i] - data[i]));
      scale = Math.max(scale, Math.abs(data[i]));
    }
    perTensor[n] = e;
    maxError = Math.max(maxError, e);
  }
  const ok = model.complete && maxError <= tolerance * scale && valueError <= tolerance * scale;
  return { ok, maxError, valueError, perTensor };
}

/** "z[0,1,0,2]" for flat index `flat` of tensor `meta`. */
export function cellName(meta, flat) {
  return `${meta.name}[${unravel(flat, meta.shape).join(",")}]`;
}

/** A box as code writes it: `dw[1,0:3,0:3,0:3]` (a step other than 1: `a:b:s`). */
export function boxText(box) {
  const parts = box.start.map((s, a) => {
    const n = Math.ceil((box.stop[a] - s) / box.step[a]);
    if (n === 1) return String(s);
    return box.step[a] === 1 ? `${s}:${box.stop[a]}` : `${s}:${box.stop[a]}:${box.step[a]}`;
  });
  return `${box.tensor}[${parts.join(",")}]`;
}
