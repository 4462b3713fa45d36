// A QR code drawn by the page itself (no network, no library): byte mode, error
// correction level M, versions 1–10 (up to 213 bytes: a join link fits in version 3 or
// 4). Written here from ISO/IEC 18004; tests/test_browser_follow.py holds it, module for
// module, to segno (an independent encoder). Pure: qrMatrix returns the modules.

// per version 1..10 at level M: [EC codewords per block, [blocks, data codewords each]...]
const BLOCKS_M = [
  null,
  [10, [1, 16]],
  [16, [1, 28]],
  [26, [1, 44]],
  [18, [2, 32]],
  [24, [2, 43]],
  [16, [4, 27]],
  [18, [4, 31]],
  [22, [2, 38], [2, 39]],
  [22, [3, 36], [2, 37]],
  [26, [4, 43], [1, 44]],
];
const ALIGN = [null, [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50]];
const REMAINDER = [0, 0, 7, 7, 7, 7, 7, 0, 0, 0, 0];

// GF(256) over x^8 + x^4 + x^3 + x^2 + 1
const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
for (let i = 0, x = 1; i < 255; i++) {
  EXP[i] = x;
  LOG[x] = i;
  x <<= 1;
  if (x & 256) x ^= 0x11d;
}
for (let i = 255; i < 512; i++) EXP[i] = EXP[i - 255];
const mul = (a, b) => (a && b ? EXP[LOG[a] + LOG[b]] : 0);

/** The Reed–Solomon error correction codewords of `data` (n of them). */
function reedSolomon(data, n) {
  let gen = [1];
  for (let i = 0; i < n; i++) {
    const next = new Array(gen.length + 1).fill(0);
    for (let j = 0; j < gen.length; j++) {
      next[j] ^= gen[j];
      next[j + 1] ^= mul(gen[j], EXP[i]);
    }
    gen = next;
  }
  const rem = new Array(n).fill(0);
  for (const d of data) {
    const f = d ^ rem.shift();
    rem.push(0);
    for (let j = 0; j < n; j++) rem[j] ^= mul(gen[j + 1], f);
  }
  return rem;
}

function dataCodewords(version) {
  const [, ...groups] = BLOCKS_M[version];
  return groups.reduce((s, [count, size]) => s + count * size, 0);
}

/** The codewords of `bytes` at `version`: data and error correction, interleaved. */
function codewords(bytes, version) {
  const capacity = dataCodewords(version);
  const bits = [];
  const put = (value, length) => {
    for (let i = length - 1; i >= 0; i--) bits.push((value >>> i) & 1);
  };
  put(0b0100, 4);
  put(bytes.length, version < 10 ? 8 : 16);
  for (const b of bytes) put(b, 8);
  put(0, Math.min(4, capacity * 8 - bits.length));
  while (bits.length % 8) bits.push(0);
  const data = [];
  for (let i = 0; i < bits.length; i += 8) data.push(bits.slice(i, i + 8).reduce((v, b) => (v << 1) | b, 0));
  for (let pad = 0xec; data.length < capacity; pad ^= 0xec ^ 0x11) data.push(pad);
  const [ec, ...groups] = BLOCKS_M[version];
  const blocks = [];
  let at = 0;
  for (const [count, size] of groups) {
    for (let k = 0; k < count; k++) {
      const d = data.slice(at, at + size);
      at += size;
      blocks.push({ d, e: reedSolomon(d, ec) });
    }
  }
  const out = [];
  const longest = Math.max(...blocks.map((b) => b.d.length));
  for (let i = 0; i < longest; i++) for (const b of blocks) if (i < b.d.length) out.push(b.d[i]);
  for (let i = 0; i < ec; i++) for (const b of blocks) out.push(b.e[i]);
  return out;
}

const MASKS = [
  (r, c) => (r + c) % 2 === 0,
  (r) => r % 2 === 0,
  (r, c) => c % 3 === 0,
  (r, c) => (r + c) % 3 === 0,
  (r, c) => (Math.floor(r / 2) + Math.floor(c / 3)) % 2 === 0,
  (r, c) => ((r * c) % 2) + ((r * c) % 3) === 0,
  (r, c) => (((r * c) % 2) + ((r * c) % 3)) % 2 === 0,
  (r, c) => (((r + c) % 2) + ((r * c) % 3)) % 2 === 0,
];

/** The modules of one version before masking: {size, dark, fixed, set(r, c, v)}. */
function functionPatterns(version) {
  const size = version * 4 + 17;
  const dark = new Uint8Array(size * size);
  const fixed = new Uint8Array(size * size);
  const set = (r, c, v) => {
    dark[r * size + c] = v ? 1 : 0;
    fixed[r * size + c] = 1;
  };
  for (let i = 0; i < size; i++) {
    set(6, i, i % 2 === 0);
    set(i, 6, i % 2 === 0);
  }
  for (const [r0, c0] of [[3, 3], [3, size - 4], [size - 4, 3]]) {
    for (let dr = -4; dr <= 4; dr++) {
      for (let dc = -4; dc <= 4; dc++) {
        const r = r0 + dr;
        const c = c0 + dc;
        const d = Math.max(Math.abs(dr), Math.abs(dc));
        if (r >= 0 && r < size && c >= 0 && c < size) set(r, c, d !== 2 && d !== 4);
      }
    }
  }
  const pos = ALIGN[version];
  for (const r of pos) {
    for (const c of pos) {
      const corner = (r === 6 && c === 6) || (r === 6 && c === pos[pos.length - 1]) || (r === pos[pos.length - 1] && c === 6);
      if (corner) continue;
      for (let dr = -2; dr <= 2; dr++) for (let dc = -2; dc <= 2; dc++) set(r + dr, c + dc, Math.max(Math.abs(dr), Math.abs(dc)) !== 1);
    }
  }
  // the format and version areas (filled once the mask is known), and the dark module
  for (let i = 0; i < 9; i++) {
    if (i === 6) continue; // (the timing patterns cross there)
    set(8, i, 0);
    set(i, 8, 0);
  }
  for (let i = 0; i < 8; i++) {
    set(8, size - 1 - i, 0);
    set(size - 1 - i, 8, 0);
  }
  set(size - 8, 8, 1);
  if (version >= 7) for (let i = 0; i < 18; i++) {
    set(Math.floor(i / 3), size - 11 + (i % 3), 0);
    set(size - 11 + (i % 3), Math.floor(i / 3), 0);
  }
  return { size, dark, fixed, set };
}

function drawFormat(m, mask) {
  const data = (0b00 << 3) | mask; // level M
  let rem = data;
  for (let i = 0; i < 10; i++) rem = (rem << 1) ^ ((rem >>> 9) * 0x537);
  const bits = ((data << 10) | rem) ^ 0x5412;
  const bit = (i) => (bits >>> i) & 1;
  const { size, set } = m;
  for (let i = 0; i <= 5; i++) set(i, 8, bit(i));
  set(7, 8, bit(6));
  set(8, 8, bit(7));
  set(8, 7, bit(8));
  for (let i = 9; i < 15; i++) set(8, 14 - i, bit(i));
  for (let i = 0; i < 8; i++) set(8, size - 1 - i, bit(i));
  for (let i = 8; i < 15; i++) set(size - 15 + i, 8, bit(i));
  set(size - 8, 8, 1);
}

function drawVersion(m, version) {
  if (version < 7) return;
  let rem = version;
  for (let i = 0; i < 12; i++) rem = (rem << 1) ^ ((rem >>> 11) * 0x1f25);
  const bits = (version << 12) | rem;
  for (let i = 0; i < 18; i++) {
    const v = (bits >>> i) & 1;
    const a = m.size - 11 + (i % 3);
    const b = Math.floor(i / 3);
    m.set(b, a, v);
    m.set(a, b, v);
  }
}

/** The ISO penalty of a masked symbol (lower is easier to scan). */
export function penalty(dark, size) {
  let score = 0;
  const at = (r, c) => dark[r * size + c];
  const finderLike = (history) => {
    const n = history[1];
    const core = n > 0 && history[2] === n && history[3] === n * 3 && history[4] === n && history[5] === n;
    return (core && history[0] >= n * 4 && history[6] >= n ? 1 : 0) + (core && history[6] >= n * 4 && history[0] >= n ? 1 : 0);
  };
  for (const byRow of [true, false]) {
    for (let a = 0; a < size; a++) {
      let colour = 0;
      let run = 0;
      const history = [0, 0, 0, 0, 0, 0, 0];
      const push = (len) => {
        if (history[0] === 0) len += size; // a light border before the first run
        history.pop();
        history.unshift(len);
      };
      for (let b = 0; b < size; b++) {
        const v = byRow ? at(a, b) : at(b, a);
        if (v === colour) {
          run += 1;
          if (run === 5) score += 3;
          else if (run > 5) score += 1;
        } else {
          push(run);
          if (!colour) score += finderLike(history) * 40;
          colour = v;
          run = 1;
        }
      }
      if (colour) {
        push(run);
        run = 0;
      }
      push(run + size); // a light border after the last run
      score += finderLike(history) * 40;
    }
  }
  for (let r = 0; r < size - 1; r++) {
    for (let c = 0; c < size - 1; c++) {
      const v = at(r, c);
      if (v === at(r, c + 1) && v === at(r + 1, c) && v === at(r + 1, c + 1)) score += 3;
    }
  }
  const darkCount = dark.reduce((s, v) => s + v, 0);
  const total = size * size;
  score += (Math.ceil(Math.abs(darkCount * 20 - total * 10) / total) - 1) * 10;
  return score;
}

/**
 * The QR code of `text` (UTF-8) at level M: {version, mask, size, dark: Uint8Array
 * (size*size, row-major, 1 dark)}. mask: 0..7, or null for the one with the lowest penalty.
 * Throws when the text is longer than version 10 holds.
 */
export function qrMatrix(text, { mask = null, version = null } = {}) {
  const bytes = new TextEncoder().encode(text);
  let v = version;
  if (v == null) {
    for (v = 1; v <= 10; v++) if (4 + (v < 10 ? 8 : 16) + 8 * bytes.length <= dataCodewords(v) * 8) break;
  }
  if (v > 10 || 4 + (v < 10 ? 8 : 16) + 8 * bytes.length > dataCodewords(v) * 8) throw new Error(`${bytes.length} bytes do not fit a QR code up to version 10 (213 bytes)`);
  const words = codewords(bytes, v);
  const base = functionPatterns(v);
  const { size } = base;
  // the codewords, two columns at a time from the right, up then down
  let i = 0;
  const nbits = words.length * 8 + REMAINDER[v];
  for (let right = size - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    for (let vert = 0; vert < size; vert++) {
      for (let j = 0; j < 2; j++) {
        const c = right - j;
        const r = ((right + 1) & 2) === 0 ? size - 1 - vert : vert;
        if (!base.fixed[r * size + c] && i < nbits) {
          base.dark[r * size + c] = i < words.length * 8 ? (words[i >>> 3] >>> (7 - (i & 7))) & 1 : 0;
          i++;
        }
      }
    }
  }
  const masked = (k) => {
    const dark = base.dark.slice();
    const m = { size, dark, fixed: base.fixed, set: (r, c, val) => (dark[r * size + c] = val ? 1 : 0) };
    for (let r = 0; r < size; r++) for (let c = 0; c < size; c++) if (!base.fixed[r * size + c] && MASKS[k](r, c)) dark[r * size + c] ^= 1;
    drawFormat(m, k);
    drawVersion(m, v);
    return dark;
  };
  let best = mask;
  if (best == null) {
    let low = Infinity;
    for (let k = 0; k < 8; k++) {
      const p = penalty(masked(k), size);
      if (p < low) {
        low = p;
        best = k;
      }
    }
  }
  return { version: v, mask: best, size, dark: masked(best) };
}

/** Draw the code of `text` on `canvas`, `scale` px a module, with a 4-module light border. */
export function drawQr(canvas, text, scale = 6) {
  const q = qrMatrix(text);
  const n = q.size + 8;
  canvas.width = canvas.height = n * scale;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, n * scale, n * scale);
  ctx.fillStyle = "#000";
  for (let r = 0; r < q.size; r++) for (let c = 0; c < q.size; c++) if (q.dark[r * q.size + c]) ctx.fillRect((c + 4) * scale, (r + 4) * scale, scale, scale);
  return q;
}
