// The lesson setup is the trace config of the contract (a plain JSON object, the same
// thing the server takes as its request body). These pure helpers read and change it
// the way the controls need; the server validates it and says what is wrong.

export const DEFAULT_CONFIG = Object.freeze({
  x: { fill: "randint", shape: [1, 1, 5, 5], low: -2, high: 2, seed: 0 },
  w: { fill: "randint", shape: [1, 1, 3, 3], low: -1, high: 1, seed: 1 },
  b: null,
  dout: null,
  layout: "NCHW",
  stride: 1,
  padding: 0,
  dilation: 1,
  groups: 1,
  activation: "identity",
  view: "direct",
  granularity: "window",
  backward: "fused",
});

export const FILLS = {
  randint: { label: "random integers", params: { low: -2, high: 2 } },
  normal: { label: "normal", params: { mean: 0, std: 1 } },
  uniform: { label: "uniform", params: { low: -1, high: 1 } },
  arange: { label: "arange", params: { start: 0, step: 1 } },
  linspace: { label: "linspace", params: { start: -1, stop: 1 } },
  ones: { label: "ones", params: {} },
  zeros: { label: "zeros", params: {} },
  constant: { label: "constant", params: { value: 1 } },
};

export const TENSOR_INPUTS = ["x", "w", "b", "dout"];

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

/** The dimensions the controls edit, read from config.x and config.w in the config's layout. */
export function dimsOf(config) {
  const nhwc = (config.layout ?? "NCHW") === "NHWC";
  const xs = shapeOf(config.x) ?? DEFAULT_CONFIG.x.shape;
  const ws = shapeOf(config.w) ?? DEFAULT_CONFIG.w.shape;
  const [N, C, H, W] = nhwc ? [xs[0], xs[3], xs[1], xs[2]] : xs;
  const [F, KH, KW] = nhwc ? [ws[3], ws[0], ws[1]] : [ws[0], ws[2], ws[3]];
  return { N, C, H, W, F, KH, KW };
}

/** Shapes of x, w and b for `dims` in `layout` (w holds C / groups input channels). */
export function shapesFor(dims, layout, groups = 1) {
  const { N, C, H, W, F, KH, KW } = dims;
  const g = Number(groups) || 1;
  const cin = C % g === 0 ? C / g : C;
  return layout === "NHWC"
    ? { x: [N, H, W, C], w: [KH, KW, cin, F], b: [F] }
    : { x: [N, C, H, W], w: [F, cin, KH, KW], b: [F] };
}

function sameShape(a, b) {
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * The config with x, w and b resized to `dims` (and `layout`, `groups` when given).
 * A fill spec keeps its generator and gets the new shape; typed-in values of another
 * shape are replaced by the default generator (returned in `reset`). dout follows the
 * output shape, which only the server knows: when the shapes change it goes back to
 * its default (ones) unless it is a generator, which is kept without a shape.
 * Returns {config, reset: [names]}.
 */
export function withDims(config, dims, { layout, groups } = {}) {
  const next = clone(config);
  if (layout) next.layout = layout;
  if (groups != null) next.groups = groups;
  const shapes = shapesFor(dims, next.layout ?? "NCHW", next.groups ?? 1);
  const reset = [];
  let changed = false;
  for (const name of ["x", "w", "b"]) {
    const cur = next[name];
    if (cur == null) continue;
    if (sameShape(shapeOf(cur), shapes[name])) continue;
    changed = true;
    if (isFill(cur)) next[name] = { ...cur, shape: shapes[name] };
    else {
      next[name] = defaultFill(name, shapes[name]);
      reset.push(name);
    }
  }
  if (changed && next.dout != null) {
    if (isFill(next.dout)) {
      const { shape, ...rest } = next.dout;
      next.dout = rest;
    } else {
      next.dout = null;
      reset.push("dout");
    }
  }
  return { config: next, reset };
}

/** The generator a tensor gets by default. */
export function defaultFill(name, shape) {
  if (name === "w") return { fill: "randint", shape, low: -1, high: 1, seed: 1 };
  if (name === "b") return { fill: "randint", shape, low: -1, high: 1, seed: 2 };
  if (name === "dout") return { fill: "randint", shape, low: -1, high: 1, seed: 3 };
  return { fill: "randint", shape, low: -2, high: 2, seed: 0 };
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

/**
 * Numbers pasted from a spreadsheet, a NumPy print or a Python list: every number in
 * the text, in reading order. "[[1, 2], [3, -4.5]]" -> [1, 2, 3, -4.5]
 */
export function parseNumbers(text) {
  const found = String(text).replace(/−/g, "-").match(/[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/g);
  return found ? found.map(Number) : [];
}

/** A copy of flat `data` with `numbers` written from flat index `at` on (clipped). */
export function pasteInto(data, at, numbers) {
  const out = Array.from(data);
  for (let k = 0; k < numbers.length && at + k < out.length; k++) out[at + k] = numbers[k];
  return out;
}
