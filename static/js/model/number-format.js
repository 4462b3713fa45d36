// Numbers as people read them in a cell, and the colour class of a value. Pure.

/**
 * A short, exact-looking label for a cell: integers as integers, others with up to
 * `digits` significant digits, no trailing zeros, "−" for minus, exponent when huge/tiny.
 */
export function formatValue(v, digits = 3) {
  if (v === 0 || Object.is(v, -0)) return "0";
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  let s;
  if (Number.isInteger(v) && a < 1e6) s = String(a);
  else if (a >= 1e5 || a < 1e-3) s = a.toExponential(Math.max(0, digits - 2)).replace(/\.?0+e/, "e").replace("e+", "e");
  else if (a >= 10 ** (digits - 1)) s = String(Math.round(a));
  else {
    s = a.toPrecision(digits);
    if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "");
  }
  return v < 0 ? `−${s}` : s;
}

/** The change a write made, signed: "+6", "−2", "+0". */
export function formatDelta(v) {
  return v < 0 ? formatValue(v) : `+${formatValue(v)}`;
}

/** Longer form for the equation panel: up to 6 significant digits. */
export function formatLong(v) {
  return formatValue(v, 6);
}

export const COLOR_STEPS = 6;

/**
 * Colour class of `v` on a diverging scale symmetric around zero: an integer in
 * [-COLOR_STEPS, COLOR_STEPS], 0 for zero. `scale` is the tensor's largest |value|.
 */
export function colorLevel(v, scale) {
  if (!v || !scale) return 0;
  const k = Math.round((v / scale) * COLOR_STEPS);
  if (k === 0) return v > 0 ? 1 : -1; // never paint a non-zero like a zero
  return Math.max(-COLOR_STEPS, Math.min(COLOR_STEPS, k));
}

/** Largest |value| of a numeric array (1 when all zero). data: (size,) */
export function absMax(data) {
  let m = 0;
  for (let i = 0; i < data.length; i++) {
    const a = Math.abs(data[i]);
    if (a > m) m = a;
  }
  return m || 1;
}

/**
 * The most characters formatValue gives for any value a tensor will show, from its
 * stats {maxPositive, maxNegative (a magnitude), fractional} (TraceModel.valueStats):
 * integers by their largest magnitude of each sign ("−" counts); fractions take up to
 * "0.123" (5), exponents up to 7.
 */
export function maxTextLength({ maxPositive, maxNegative, fractional }) {
  const width = (a) => (fractional ? Math.max(formatValue(a).length, a >= 1e5 ? 7 : 5) : formatValue(a).length);
  return Math.max(width(maxPositive), maxNegative > 0 ? width(maxNegative) + 1 : 0);
}
