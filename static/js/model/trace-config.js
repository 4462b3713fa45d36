// The lesson setup is the trace config of the contract (a plain JSON object, the same
// thing the server takes as its request body). These pure helpers read and change it
// the way the controls need; the server validates it and says what is wrong.

/**
 * What the server publishes (GET /api/meta), adopted once at start by adoptMeta():
 * the default setup, the fills with their parameters and defaults, the generator each
 * tensor gets when it is turned on. Nothing here restates a fact the server owns.
 */
export const PUBLISHED = { meta: null, defaults: null, fills: {}, defaultFills: {} };

/** Adopt the server's published facts (the body of GET /api/meta). */
export function adoptMeta(meta) {
  PUBLISHED.meta = meta;
  // the default setup, without the keys whose default is "the server decides" (null)
  const defaults = {};
  for (const [k, v] of Object.entries(meta.defaults)) if (v !== null || k === "b" || k === "dout") defaults[k] = v;
  PUBLISHED.defaults = Object.freeze(defaults);
  PUBLISHED.fills = Object.fromEntries(meta.fills.map((f) => [f.name, { label: f.title, params: f.params, random: f.random, integer: f.integer_params }]));
  PUBLISHED.defaultFills = meta.default_fills;
}

/** A copy of the server's default setup. */
export function defaultConfig() {
  return clone(PUBLISHED.defaults);
}

export function clone(value) {
  return value == null ? value : JSON.parse(JSON.stringify(value));
}

export function isFill(value) {
  return value != null && typeof value === "object" && !Array.isArray(value) && "fill" in value;
}

/** Shape of a nested list (by its first items), a fill spec's shape, or null. */
export function shapeOf(value) {
  if (value == null) return null;
  if (isFill(value)) return Array.isArray(value.shape) ? value.shape.slice() : null;
  const dims = [];
  let v = value;
  while (Array.isArray(v)) {
    dims.push(v.length);
    v = v[0];
  }
  return dims;
}

/** Nested lists of shape `shape` from flat row-major `data`. data: (prod(shape),) */
export function nestFlat(data, shape) {
  if (shape.length === 0) return data[0];
  let pos = 0;
  const build = (a) => {
    const out = new Array(shape[a]);
    for (let i = 0; i < shape[a]; i++) out[i] = a === shape.length - 1 ? Number(data[pos++]) : build(a + 1);
    return out;
  };
  return build(0);
}

/** Flat row-major numbers of nested lists. */
export function flattenNested(value) {
  return Array.isArray(value) ? value.flat(Infinity).map(Number) : [Number(value)];
}

/** Whether `config` is a ConvTranspose2d's (its w is (C_in, C_out/groups, KH, KW)). */
export function isTransposed(config) {
  return config.layer === "conv_transpose2d";
}

/** Whether `config` is a Conv1d's: a sequence, x (N, C, L) and w (F, C/groups, K) in
 *  NCL, (N, L, C) and (K, C/groups, F) in NLC. */
export function isSequence(config) {
  return config.layer === "conv1d";
}

/** The first input the form's sizes `dims` ({N, C, H, W, F, KH, KW, groups}) make
 *  larger than `limit` elements (GET /api/meta's limits.max_tensor_elements), as
 *  {tensor, count, sizes: [[name, value], …], groups} (x: N·C·H·W, a sequence's N·C·L; w: its
 *  F·C/groups·KH·KW cells, the same count for a transposed layer's C·F/groups·KH·KW),
 *  or null. The server checks every tensor; this names the size typed, before sending. */
export function oversizedInput(dims, limit, sequence = false) {
  if (!limit) return null;
  const x = sequence ? [["N", dims.N], ["C", dims.C], ["L", dims.W]] : [["N", dims.N], ["C", dims.C], ["H", dims.H], ["W", dims.W]];
  const k = sequence ? [["K", dims.KW]] : [["KH", dims.KH], ["KW", dims.KW]];
  const w = [["F", dims.F], ["C", dims.C], ...k];
  const product = (sizes) => sizes.reduce((n, [, v]) => n * v, 1);
  if (product(x) > limit) return { tensor: "x", count: product(x), sizes: x, groups: 1 };
  const groups = dims.groups || 1;
  if (product(w) / groups > limit) return { tensor: "w", count: product(w) / groups, sizes: w, groups };
  return null;
}

/** The layouts `layer` takes (GET /api/meta's layer_layouts: channels first, then
 *  channels last; the server refuses the others, naming `layout`). */
function layoutsOf(layer) {
  return PUBLISHED.meta?.layer_layouts?.[layer ?? "conv2d"] ?? [];
}

/** Whether `layout` is one `layer` takes. */
export function layoutFits(layout, layer) {
  return layoutsOf(layer).includes(layout);
}

/** `layout` as `layer` takes it: its twin in the same place of the layer's list (NCHW
 *  <-> NCL, NHWC <-> NLC), or the layer's first; undefined (none given) stays undefined
 *  (the layer's default). */
export function layoutFor(layout, layer) {
  if (layout == null || layoutFits(layout, layer)) return layout ?? undefined;
  const place = Object.values(PUBLISHED.meta?.layer_layouts ?? {}).map((list) => list.indexOf(layout)).find((i) => i >= 0);
  const own = layoutsOf(layer);
  return own[place] ?? own[0];
}

/** The layout `config` is traced in: its own, else its layer's default (the published
 *  default layout, or for Conv1d that layout's sequence twin). */
export function layoutOf(config) {
  const d = PUBLISHED.defaults?.layout ?? "NCHW";
  return config.layout ?? (isSequence(config) ? layoutFor(d, "conv1d") : d);
}

/** The dimensions the controls edit, read from config.x and config.w in the config's
 *  layout: C the input channels and F the output channels, whatever the layer. A Conv1d's
 *  length L and kernel taps K are W and KW (the controls' names), its H and KH are 1. */
export function dimsOf(config) {
  const layout = layoutOf(config);
  const xs = shapeOf(config.x) ?? PUBLISHED.defaults.x.shape;
  const ws = shapeOf(config.w) ?? PUBLISHED.defaults.w.shape;
  if (isSequence(config)) {
    // (a sequence without x or w is given the image default's last row)
    const [x3, w3] = [xs, ws].map((s, i) => (s.length === 4 ? dropAxis(s, rowAxis(i ? "w" : "x", layout)) : s));
    const nlc = layout === "NLC";
    const [N, C, W] = nlc ? [x3[0], x3[2], x3[1]] : x3;
    const [F, KW] = nlc ? [w3[2], w3[0]] : [w3[0], w3[2]];
    return { N, C, H: 1, W, F, KH: 1, KW };
  }
  const nhwc = layout === "NHWC";
  const [N, C, H, W] = nhwc ? [xs[0], xs[3], xs[1], xs[2]] : xs;
  if (isTransposed(config)) return { N, C, H, W, F: ws[1] * (Number(config.groups) || 1), KH: ws[2], KW: ws[3] };
  const [F, KH, KW] = nhwc ? [ws[3], ws[0], ws[1]] : [ws[0], ws[2], ws[3]];
  return { N, C, H, W, F, KH, KW };
}

/** Shapes of x, w and b for `dims` in `layout` (Conv2d's w holds C / groups input
 *  channels; a ConvTranspose2d's, `layer`, is (C, F / groups, KH, KW); a Conv1d's x and w
 *  have no rows: (N, C, W) and (F, C / groups, KW) in NCL, (N, W, C), (KW, C / groups, F)
 *  in NLC). */
export function shapesFor(dims, layout, groups = 1, layer = "conv2d") {
  const { N, C, H, W, F, KH, KW } = dims;
  const g = Number(groups) || 1;
  const cin = C % g === 0 ? C / g : C;
  if (layer === "conv_transpose2d") return { x: [N, C, H, W], w: [C, F % g === 0 ? F / g : F, KH, KW], b: [F] };
  if (layer === "conv1d") {
    return layout === "NLC" ? { x: [N, W, C], w: [KW, cin, F], b: [F] } : { x: [N, C, W], w: [F, cin, KW], b: [F] };
  }
  return layout === "NHWC"
    ? { x: [N, H, W, C], w: [KH, KW, cin, F], b: [F] }
    : { x: [N, C, H, W], w: [F, cin, KH, KW], b: [F] };
}

/** The axis of x's or w's rows (H, KH) in `layout` or its twin: a sequence has none, so
 *  a change of layer takes it out or puts it back (of size 1). */
function rowAxis(name, layout) {
  const last = layout === "NHWC" || layout === "NLC";
  if (name === "x") return last ? 1 : 2;
  return last ? 0 : 2;
}

function dropAxis(list, axis) {
  return list.filter((_, a) => a !== axis);
}

/** Typed values {shape, data} of one rank as the other's (4-D <-> 3-D): the first row
 *  of each slice, or the values as one row. Same rank: as they are. */
function withRank(memory, rank, axis) {
  const have = memory.shape.length;
  if (have === rank || (have !== 3 && have !== 4) || (rank !== 3 && rank !== 4)) return memory;
  if (rank === 4) return { shape: [...memory.shape.slice(0, axis), 1, ...memory.shape.slice(axis)], data: memory.data };
  const shape = dropAxis(memory.shape, axis);
  const inner = memory.shape.slice(axis + 1).reduce((p, v) => p * v, 1);
  const rows = memory.shape[axis];
  const data = [];
  for (let k = 0; k < memory.data.length; k++) if (Math.floor(k / inner) % rows === 0) data.push(memory.data[k]);
  return { shape, data };
}

// what a ConvTranspose2d is traced with (the server's refusals name the rest): the keys
// a change of layer drops, for their defaults
const TRANSPOSED_DROPS = ["layout", "activation", "granularity", "backward", "padding_mode", "flip", "loop_order", "dx_loop_order", "code"];
const TRANSPOSED_VIEWS = ["direct", "transposed"]; // the stamps, or their gather

/**
 * The config as `layer` ("conv2d", "conv_transpose2d" or "conv1d"), the same dims (N, C
 * in, H, W, F out, kernel; a Conv1d's length and taps are W and KW): w rearranged for the
 * layer, what the transposed trace does not take left to its defaults, output_padding
 * only for the transposed layer, a padding of four sides or a word back to 0 for it.
 * Between Conv1d and the 2-D layers (sequenceSwitch): the rows go or come back as one
 * (H = KH = 1), the layout maps to its twin. Returns {config, notes}.
 */
export function withLayer(config, layer, dims, typed = {}) {
  let next = clone(config);
  const notes = [];
  let size = dims;
  if (isSequence(config) !== (layer === "conv1d")) {
    const res = sequenceSwitch(next, layer, dims);
    next = res.config;
    if (res.note) notes.push(res.note);
    if (layer !== "conv1d") size = { ...dims, H: 1, KH: 1 };
  }
  if (layer === "conv_transpose2d") {
    next.layer = layer;
    const dropped = TRANSPOSED_DROPS.filter((k) => next[k] != null);
    if (next.view != null && !TRANSPOSED_VIEWS.includes(next.view)) dropped.push("view");
    for (const k of dropped) delete next[k];
    if (typeof next.padding === "string" || (Array.isArray(next.padding) && next.padding.length === 4)) {
      next.padding = 0;
      dropped.push("padding");
    }
    if (dropped.length) notes.push(`ConvTranspose2d is traced in NCHW, one stamp per step, without an activation: ${dropped.join(", ")} back to the default.`);
  } else if (layer === "conv1d") {
    next.layer = layer;
    delete next.output_padding;
  } else {
    delete next.layer;
    delete next.output_padding;
  }
  const res = withDims(next, size, { typed });
  return { config: res.config, notes: [...notes, ...res.notes] };
}

/** A layer's name in a note: its published title's first word ("Conv1d (a sequence)"). */
function layerName(layer) {
  const choice = PUBLISHED.meta?.choices?.layer?.find((c) => c.name === layer);
  return choice ? choice.title.split(" ")[0] : layer;
}

// the keys whose values are written in the other layer's words: loop letters (a
// sequence's have no rows, i and k) and a listing (Conv1d has none)
const SEQUENCE_DROPS = ["loop_order", "dx_loop_order", "code"];

/** The last (column) number of an int-or-list parameter (stride, dilation). */
function columnOf(value) {
  return Array.isArray(value) ? Number(value[value.length - 1]) : value;
}

/** A Conv1d padding for 2-D `padding` (int, [rows, cols], four sides, a word): the
 *  columns' part, the shortest form. */
export function sequencePadding(padding) {
  if (!Array.isArray(padding)) return padding;
  if (padding.length === 4) return padding[2] === padding[3] ? Number(padding[2]) : [Number(padding[2]), Number(padding[3])];
  return Number(padding[padding.length - 1]);
}

/** A 2-D padding for Conv1d's `padding` (int, [p], [left, right], a word): an int
 *  stays (the rows are padded too), (left, right) become the columns' sides of four,
 *  "causal" (a sequence's own) is null (0, said by the caller). */
export function imagePadding(padding) {
  if (padding === "causal") return null;
  if (!Array.isArray(padding)) return padding;
  if (padding.length === 1) return Number(padding[0]);
  return [0, 0, Number(padding[0]), Number(padding[1] ?? padding[0])];
}

/**
 * A config crossing between Conv1d and the 2-D layers (`layer` the new one): the layout
 * to its twin, stride and dilation to their column value (to a 2-D layer: as they are),
 * padding as sequencePadding / imagePadding say, loop orders and a listing back to
 * their defaults. Shapes are left to withDims. Returns {config, note}.
 */
function sequenceSwitch(config, layer, dims) {
  const next = clone(config);
  const toSequence = layer === "conv1d";
  const name = layerName(layer);
  const changed = [];
  const layout = layoutFor(next.layout, toSequence ? "conv1d" : "conv2d");
  if (layout) next.layout = layout;
  else delete next.layout;
  for (const k of ["stride", "dilation"]) {
    if (next[k] == null || !Array.isArray(next[k])) continue;
    const v = columnOf(next[k]);
    if (toSequence && next[k].length === 2 && next[k][0] !== next[k][1]) changed.push(`${k} ${JSON.stringify(next[k])} → ${v} (the columns')`);
    next[k] = v;
  }
  if (next.padding != null) {
    const v = toSequence ? sequencePadding(next.padding) : imagePadding(next.padding);
    if (v === null) changed.push(`padding 0 (${name} has no "causal": pad the left columns to keep it)`);
    else if (toSequence && JSON.stringify(v) !== JSON.stringify(next.padding)) {
      changed.push(`padding ${JSON.stringify(next.padding)} → ${JSON.stringify(v)} (the columns')`);
    }
    next.padding = v ?? 0;
  }
  const dropped = SEQUENCE_DROPS.filter((k) => next[k] != null && !(k === "code" && next[k] === "auto"));
  for (const k of SEQUENCE_DROPS) delete next[k];
  delete next.output_padding;
  const parts = [];
  if (toSequence && (dims.H > 1 || dims.KH > 1)) parts.push(`H ${dims.H} and KH ${dims.KH} go (a sequence is one row)`);
  if (changed.length) parts.push(changed.join(", "));
  if (dropped.length) parts.push(`${dropped.join(", ")} back to the default (${toSequence ? "a sequence's loops have no row letters i, k" : "its letters include the rows' i, k"})`);
  return { config: next, note: parts.length ? `${name}: ${parts.join("; ")}.` : "" };
}

function sameShape(a, b) {
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * Typed values resized to `shape`: each cell whose index exists in both shapes keeps its
 * value, new cells are 0. memory: {shape, data: flat row-major numbers} ->
 * {values: nested lists of `shape`, kept, added, dropped} (cell counts).
 */
export function resizeTyped(memory, shape) {
  const size = shape.reduce((p, v) => p * v, 1);
  const out = new Array(size).fill(0);
  const idx = new Array(shape.length).fill(0);
  let kept = 0;
  for (let k = 0; k < size; k++) {
    let inside = memory.shape.length === shape.length;
    let src = 0;
    for (let a = 0; inside && a < shape.length; a++) {
      if (idx[a] >= memory.shape[a]) inside = false;
      else src = src * memory.shape[a] + idx[a];
    }
    if (inside) {
      out[k] = Number(memory.data[src]);
      kept += 1;
    }
    for (let a = shape.length - 1; a >= 0; a--) {
      if (++idx[a] < shape[a]) break;
      idx[a] = 0;
    }
  }
  return { values: nestFlat(out, shape), kept, added: size - kept, dropped: memory.data.length - kept };
}

/** One sentence on what a resize did to a tensor's typed values (resizeTyped's counts). */
export function resizeNote(name, { kept, added, dropped }) {
  const parts = [`${kept} typed value${kept === 1 ? "" : "s"} kept`];
  if (added) parts.push(`${added} new cell${added === 1 ? "" : "s"} set to 0`);
  if (dropped) parts.push(`${dropped} set aside (they come back with the shape)`);
  return `${name}: ${parts.join(", ")}.`;
}

/**
 * The config with x, w and b resized to `dims` (and `layout`, `groups` when given).
 * A fill spec keeps its generator and gets the new shape; typed values are resized from
 * what was typed (`typed[name]` = {shape, data}, else the config's own values): cells
 * that still exist keep their values, so a shape changed away and back gets them all
 * back. dout follows the output shape, which only the server knows: when the shapes
 * change a generator loses its shape (the server gives it the output's) and typed
 * values go back to ones (said in a note).
 * Returns {config, notes: [sentences]}.
 */
export function withDims(config, dims, { layout, groups, typed = {} } = {}) {
  const next = clone(config);
  if (layout) next.layout = layout;
  if (groups != null) next.groups = groups;
  const into = layoutOf(next);
  const shapes = shapesFor(dims, into, next.groups ?? 1, next.layer);
  const notes = [];
  let changed = false;
  for (const name of ["x", "w", "b"]) {
    const cur = next[name];
    if (cur == null) continue;
    if (sameShape(shapeOf(cur), shapes[name])) continue;
    changed = true;
    if (isFill(cur)) next[name] = { ...cur, shape: shapes[name] };
    else {
      // typed in the other layer's rank (Conv1d <-> a 2-D layer): its first rows, or
      // as one row; what is left out counts as set aside
      const memory = typed[name] ?? { shape: shapeOf(cur), data: flattenNested(cur) };
      const r = resizeTyped(withRank(memory, shapes[name].length, rowAxis(name, into)), shapes[name]);
      next[name] = r.values;
      notes.push(resizeNote(name, { ...r, dropped: memory.data.length - r.kept }));
    }
  }
  if (changed) {
    const freed = withDoutFreed(next);
    if (freed.note) notes.push(freed.note);
    return { config: freed.config, notes };
  }
  return { config: next, notes };
}

/**
 * The config with dout freed from the output's old shape (after a change of shapes,
 * stride, padding or dilation, which only the server turns into the output's shape): a
 * generator loses its shape, typed values go back to ones. Returns {config, note}.
 */
export function withDoutFreed(config) {
  const next = clone(config);
  if (next.dout == null) return { config: next, note: "" };
  if (isFill(next.dout)) {
    const { shape, ...rest } = next.dout;
    next.dout = rest;
    return { config: next, note: "" };
  }
  next.dout = null;
  return { config: next, note: "dout: the output's shape may change, so its typed values are set aside; back to ones." };
}

/** The generator a tensor gets when it is turned on (the server's default_fills), with
 *  `shape` (dout's is left out: the server gives it the output's). */
export function defaultFill(name, shape) {
  const { shape: _, ...fill } = PUBLISHED.defaultFills[name];
  return name === "dout" || !shape ? fill : { ...fill, shape };
}

/** Bias on (a generator of shape (F,)) or off (null). */
export function withBias(config, on) {
  const next = clone(config);
  if (!on) next.b = null;
  else if (next.b == null) next.b = defaultFill("b", [dimsOf(next).F]);
  return next;
}

/** An int-or-pair parameter as [h, w]. */
export function pairOf(value, fallback = 1) {
  if (Array.isArray(value)) return [Number(value[0]), Number(value[1] ?? value[0])];
  if (value == null) return [fallback, fallback];
  return [Number(value), Number(value)];
}

/** [h, w] back to the shortest config form: an int when both are equal. */
export function pairValue([h, w]) {
  return h === w ? h : [h, w];
}

/**
 * Padding as the controls show it: {mode, values} with mode "int" (values [p]), "pair"
 * ([ph, pw]; a Conv1d's [left, right]), "four" ([top, bottom, left, right]) or a word:
 * "same", "valid", Conv1d's "causal" (values []). A one-number list is "int".
 */
export function paddingOf(value) {
  if (typeof value === "string") return { mode: value, values: [] };
  if (Array.isArray(value) && value.length === 4) return { mode: "four", values: value.map(Number) };
  if (Array.isArray(value) && value.length === 2) return { mode: "pair", values: value.map(Number) };
  if (Array.isArray(value)) return { mode: "int", values: [Number(value[0] ?? 0)] };
  return { mode: "int", values: [Number(value ?? 0)] };
}

/** The config value of {mode, values}. */
export function paddingValue({ mode, values }) {
  if (mode === "four") return [0, 1, 2, 3].map((i) => Number(values[i] ?? values[0] ?? 0));
  if (mode === "pair") return [Number(values[0] ?? 0), Number(values[1] ?? values[0] ?? 0)];
  if (mode === "int") return Number(values[0] ?? 0);
  return mode; // a word: same, valid, causal
}

/** The padding forms the menu offers for `layer` ([{name, title, values}]: GET
 *  /api/meta's layer_padding_forms; padding_forms, Conv2d's, for a layer it lacks): a
 *  Conv1d's one number, (left, right), causal, same, valid; a ConvTranspose2d's one
 *  number or (rows, cols). */
export function paddingFormsFor(meta, layer) {
  return meta.layer_padding_forms?.[layer ?? "conv2d"] ?? meta.padding_forms;
}

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * The numbers of a pasted or typed text (a spreadsheet block, a NumPy print, a Python
 * list), in reading order: {numbers} when every token is a number, else {error} naming
 * the first token that is not. "[[1, 2], [3, -4.5]]" -> {numbers: [1, 2, 3, -4.5]};
 * "1 two 3" -> {error: '"two" (token 2 of 3) is not a number'}.
 */
export function parseCells(text) {
  const cleaned = String(text)
    .replace(/−/g, "-")
    .replace(/\b(?:array|tensor)\s*\(/g, " ")
    .replace(/,?\s*dtype\s*=\s*[\w.]+/g, " ");
  const tokens = cleaned.split(/[\s,;[\]()]+/).filter(Boolean);
  const numbers = [];
  for (let i = 0; i < tokens.length; i++) {
    if (!NUMBER.test(tokens[i])) return { error: `"${tokens[i].slice(0, 20)}" (token ${i + 1} of ${tokens.length}) is not a number` };
    numbers.push(Number(tokens[i]));
  }
  return { numbers };
}

/** The numbers of `text` (parseCells), or [] when a token is not a number. */
export function parseNumbers(text) {
  return parseCells(text).numbers ?? [];
}

/**
 * A whole number typed in a field: {value} or {error} naming the field and what came.
 * text: the field's text; label: its name for people; min: the smallest allowed, or
 * null when the bounds are the server's to check; unreadable: the field holds text its
 * browser could not read as a number ("1e", "-" in a number field, whose text is then
 * "", not empty).
 */
export function wholeNumber(text, label, min = null, unreadable = false) {
  if (unreadable) return { error: `${label} as typed is not a number; type a whole number` };
  const t = String(text).trim();
  if (t === "") return { error: `${label} is empty; type a whole number` };
  const v = Number(t);
  if (!Number.isFinite(v)) return { error: `${label} must be a whole number; got "${t.slice(0, 20)}"` };
  if (!Number.isInteger(v)) return { error: `${label} must be a whole number; got ${t} (never rounded)` };
  if (min != null && v < min) return { error: `${label} must be at least ${min}; got ${v}` };
  return { value: v };
}

/** A copy of flat `data` with `numbers` written from flat index `at` on: {data} or
 *  {error} when they do not fit (nothing is cut or shifted). */
export function pasteCells(data, at, numbers) {
  const room = data.length - at;
  if (numbers.length > room) {
    return { error: `${numbers.length} values pasted, but only ${room} cell${room === 1 ? "" : "s"} from here to the end; nothing was pasted` };
  }
  return { data: pasteInto(data, at, numbers) };
}

/** A copy of flat `data` with `numbers` written from flat index `at` on (clipped). */
export function pasteInto(data, at, numbers) {
  const out = Array.from(data);
  for (let k = 0; k < numbers.length && at + k < out.length; k++) out[at + k] = numbers[k];
  return out;
}
