// An array as a student pastes it: JSON nested lists, NumPy's print() or repr()
// ("[[1. 2.]\n [3. 4.]]", "array([[1., 2.]], dtype=float32)"), PyTorch's
// "tensor([[...]], grad_fn=<...>)", or bare numbers in row-major order. Pure.

const WRAPPER = /\b(?:array|tensor)\s*\(/g;
// keyword arguments NumPy and PyTorch print after the values: dtype=float32, device='cpu', grad_fn=<AddBackward0>
const KEYWORDS = /,\s*(?:dtype|requires_grad|grad_fn|device|layout)\s*=\s*(?:<[^>]*>|'[^']*'|"[^"]*"|[\w.]+)/g;
const TOKEN = /\s*(\[|\]|,|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b|[^\s,[\]]+)/giy;

function isNumberToken(t) {
  return /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(t) || /^[-+]?(?:nan|inf)$/i.test(t);
}

/** Shape of a nested list, or an error naming where its rows differ in length. */
function shapeOfNested(value, where = []) {
  if (!Array.isArray(value)) return { shape: [] };
  if (!value.length) return { shape: [0] };
  const first = shapeOfNested(value[0], [...where, 0]);
  if (first.error) return first;
  for (let i = 1; i < value.length; i++) {
    const s = shapeOfNested(value[i], [...where, i]);
    if (s.error) return s;
    if (s.shape.join() !== first.shape.join()) {
      const at = where.length ? `[${where.join(",")}]` : "";
      return { error: `its rows differ in length: row ${at}[0] has shape (${first.shape.join(", ")}) but ${at}[${i}] has (${s.shape.join(", ")})` };
    }
  }
  return { shape: [value.length, ...first.shape] };
}

function reshape(flat, shape) {
  if (shape.length <= 1) return flat.slice();
  const inner = shape.slice(1).reduce((a, b) => a * b, 1);
  const out = [];
  for (let i = 0; i < shape[0]; i++) out.push(reshape(flat.slice(i * inner, (i + 1) * inner), shape.slice(1)));
  return out;
}

/**
 * Parse `text` into nested lists of numbers. `shape` (the tensor's, optional) gives bare
 * numbers without brackets their shape. Returns {value, shape} or {error} (a sentence
 * that names the position or the word that is wrong).
 */
export function parseArray(text, shape = null) {
  const source = String(text ?? "").trim();
  if (!source) return { error: "it is empty" };
  if (/\.\.\./.test(source) || /…/.test(source)) {
    return { error: "it was printed with '...' (NumPy left values out): print it whole with np.set_printoptions(threshold=np.inf), or paste x.tolist()" };
  }
  const cleaned = source.replace(WRAPPER, "").replace(KEYWORDS, "").replace(/\)/g, "");
  const root = [];
  const stack = [root];
  const flat = [];
  let bracketed = false;
  TOKEN.lastIndex = 0;
  let m;
  while (TOKEN.lastIndex < cleaned.length && (m = TOKEN.exec(cleaned))) {
    const t = m[1];
    if (t === ",") continue;
    if (t === "[") {
      const list = [];
      stack[stack.length - 1].push(list);
      stack.push(list);
      bracketed = true;
    } else if (t === "]") {
      if (stack.length === 1) return { error: "it has a ']' with no '[' before it" };
      stack.pop();
    } else if (isNumberToken(t)) {
      const v = Number(t.replace(/^\+/, "").replace(/^(-?)inf$/i, "$1Infinity").replace(/^[-+]?nan$/i, "NaN"));
      if (!Number.isFinite(v)) return { error: `it holds ${t} at value ${flat.length + 1}: only numbers can be compared (your code made a ${t})` };
      stack[stack.length - 1].push(v);
      flat.push(v);
    } else {
      return { error: `"${t.slice(0, 20)}" (after value ${flat.length}) is not a number` };
    }
  }
  if (stack.length > 1) return { error: `it has ${stack.length - 1} '[' left open` };
  if (!bracketed) {
    if (!shape) return { value: flat, shape: [flat.length] };
    const size = shape.reduce((a, b) => a * b, 1);
    if (flat.length !== size) return { error: `it has ${flat.length} numbers; shape (${shape.join(", ")}) has ${size}` };
    return { value: reshape(flat, shape), shape: shape.slice() };
  }
  if (root.length !== 1) return { error: `it holds ${root.length} arrays one after another: paste one` };
  const value = root[0];
  const s = shapeOfNested(value);
  if (s.error) return { error: s.error };
  return { value, shape: s.shape };
}

/** Nested lists flattened in row-major order. */
export function flatten(value) {
  return Array.isArray(value) ? value.flatMap(flatten) : [value];
}
