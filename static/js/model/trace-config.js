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

/** The dimensions the controls edit, read from config.x and config.w in the config's
 *  layout: C the input channels and F the output channels, whatever the layer. */
export function dimsOf(config) {
  const nhwc = (config.layout ?? "NCHW") === "NHWC";
  const xs = shapeOf(config.x) ?? PUBLISHED.defaults.x.shape;
  const ws = shapeOf(config.w) ?? PUBLISHED.defaults.w.shape;
  const [N, C, H, W] = nhwc ? [xs[0], xs[3], xs[1], xs[2]] : xs;
  if (isTransposed(config)) return { N, C, H, W, F: ws[1] * (Number(config.groups) || 1), KH: ws[2], KW: ws[3] };
  const [F, KH, KW] = nhwc ? [ws[3], ws[0], ws[1]] : [ws[0], ws[2], ws[3]];
  return { N, C, H, W, F, KH, KW };
}

/** Shapes of x, w and b for `dims` in `layout` (Conv2d's w holds C / groups input
 *  channels; a ConvTranspose2d's, `layer`, is (C, F / groups, KH, KW)). */
export function shapesFor(dims, layout, groups = 1, layer = "conv2d") {
  const { N, C, H, W, F, KH, KW } = dims;
  const g = Number(groups) || 1;
  const cin = C % g === 0 ? C / g : C;
  if (layer === "conv_transpose2d") return { x: [N, C, H, W], w: [C, F % g === 0 ? F / g : F, KH, KW], b: [F] };
  return layout === "NHWC"
    ? { x: [N, H, W, C], w: [KH, KW, cin, F], b: [F] }
    : { x: [N, C, H, W], w: [F, cin, KH, KW], b: [F] };
}

// what a ConvTranspose2d is traced with (the server's refusals name the rest): the keys
// a change of layer drops, for their defaults
const TRANSPOSED_DROPS = ["layout", "activation", "granularity", "backward", "padding_mode", "flip", "loop_order", "dx_loop_order", "code"];
const TRANSPOSED_VIEWS = ["direct", "transposed"]; // the stamps, or their gather

/**
 * The config as `layer` ("conv2d" or "conv_transpose2d"), the same dims (N, C in, H, W,
 * F out, kernel): w rearranged for the layer, what the transposed trace does not take
 * left to its defaults, output_padding only for the transposed layer, a padding of four
 * sides or a word back to 0. Returns {config, notes}.
 */
export function withLayer(config, layer, dims, typed = {}) {
  const next = clone(config);
  const notes = [];
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
  } else {
    delete next.layer;
    delete next.output_padding;
  }
  const res = withDims(next, dims, { typed });
  return { config: res.config, notes: [...notes, ...res.notes] };
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
  const shapes = shapesFor(dims, next.layout ?? "NCHW", next.groups ?? 1, next.layer);
  const notes = [];
  let changed = false;
  for (const name of ["x", "w", "b"]) {
    const cur = next[name];
    if (cur == null) continue;
    if (sameShape(shapeOf(cur), shapes[name])) continue;
    changed = true;
    if (isFill(cur)) next[name] = { ...cur, shape: shapes[name] };
    else {
      const memory = typed[name] ?? { shape: shapeOf(cur), data: flattenNested(cur) };
      const r = resizeTyped(memory, shapes[name]);
      next[name] = r.values;
      notes.push(resizeNote(name, r));
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
 * ([ph, pw]), "four" ([top, bottom, left, right]), "same" or "valid" (values []).
 */
export function paddingOf(value) {
  if (value === "same" || value === "valid") return { mode: value, values: [] };
  if (Array.isArray(value) && value.length === 4) return { mode: "four", values: value.map(Number) };
  if (Array.isArray(value) && value.length === 2) return { mode: "pair", values: value.map(Number) };
  return { mode: "int", values: [Number(value ?? 0)] };
}

/** The config value of {mode, values}. */
export function paddingValue({ mode, values }) {
  if (mode === "same" || mode === "valid") return mode;
  if (mode === "four") return [0, 1, 2, 3].map((i) => Number(values[i] ?? values[0] ?? 0));
  if (mode === "pair") return [Number(values[0] ?? 0), Number(values[1] ?? values[0] ?? 0)];
  return Number(values[0] ?? 0);
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
 * null when the bounds are the server's to check.
 */
export function wholeNumber(text, label, min = null) {
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
