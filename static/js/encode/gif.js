// An animated GIF (GIF89a) from RGBA frames, written here: one global palette of the
// most frequent colours of the first frame (the stage is flat colours, so they are
// nearly all of them; other pixels take the nearest), LZW-compressed frames, a loop.
// Pure: no DOM. Spec: https://www.w3.org/Graphics/GIF/spec-gif89a.txt

/** Byte writer growing as needed. */
class Bytes {
  constructor() {
    this.buf = new Uint8Array(1 << 16);
    this.n = 0;
  }
  byte(b) {
    if (this.n === this.buf.length) {
      const grown = new Uint8Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    this.buf[this.n++] = b;
  }
  word(w) {
    this.byte(w & 255);
    this.byte((w >> 8) & 255);
  }
  text(s) {
    for (let i = 0; i < s.length; i++) this.byte(s.charCodeAt(i));
  }
  done() {
    return this.buf.slice(0, this.n);
  }
}

/** The 256 most frequent colours of `rgba` (Uint8ClampedArray, 4 per pixel), as 0xRRGGBB. */
export function paletteOf(rgba) {
  const counts = new Map();
  for (let i = 0; i < rgba.length; i += 4) {
    const c = (rgba[i] << 16) | (rgba[i + 1] << 8) | rgba[i + 2];
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const colours = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 256).map(([c]) => c);
  while (colours.length < 2) colours.push(0);
  return colours;
}

/** Palette indices of every pixel: exact colours directly, others the nearest. */
export function indexPixels(rgba, palette) {
  const exact = new Map(palette.map((c, i) => [c, i]));
  const out = new Uint8Array(rgba.length / 4);
  let last = -1; // (flat colours: most pixels repeat the one before)
  let lastIndex = 0;
  for (let p = 0, i = 0; i < rgba.length; i += 4, p++) {
    const c = (rgba[i] << 16) | (rgba[i + 1] << 8) | rgba[i + 2];
    if (c === last) {
      out[p] = lastIndex;
      continue;
    }
    let k = exact.get(c);
    if (k === undefined) {
      let best = Infinity;
      k = 0;
      for (let j = 0; j < palette.length; j++) {
        const q = palette[j];
        const dr = (q >> 16) - rgba[i];
        const dg = ((q >> 8) & 255) - rgba[i + 1];
        const db = (q & 255) - rgba[i + 2];
        const d = dr * dr + dg * dg + db * db;
        if (d < best) {
          best = d;
          k = j;
        }
      }
      exact.set(c, k);
    }
    out[p] = k;
    last = c;
    lastIndex = k;
  }
  return out;
}

// The LZW string table as flat arrays indexed by prefix code * 256 + next index (codes
// are < 4096): a code is there when its stamp is the current one, so clearing the table
// is one increment. Made once, on first use (6 MB), and kept.
const TABLE_SIZE = 4096 * 256;
let tableCodes = null;
let tableStamps = null;
let stamp = 0;

function clearTable() {
  if (!tableCodes) {
    tableCodes = new Uint16Array(TABLE_SIZE);
    tableStamps = new Uint32Array(TABLE_SIZE);
  }
  stamp += 1;
  if (stamp === 2 ** 32) {
    tableStamps.fill(0);
    stamp = 1;
  }
}

/** LZW-compress palette `indices` with 8-bit minimum code size, as GIF sub-blocks. */
function writeLzw(out, indices) {
  const MIN = 8;
  const CLEAR = 1 << MIN;
  const END = CLEAR + 1;
  let size = MIN + 1;
  let next = END + 1;
  clearTable();
  let acc = 0;
  let bits = 0;
  const block = [];
  const flush = () => {
    out.byte(block.length);
    for (const b of block) out.byte(b);
    block.length = 0;
  };
  const emit = (code) => {
    acc |= code << bits;
    bits += size;
    while (bits >= 8) {
      block.push(acc & 255);
      if (block.length === 255) flush();
      acc >>>= 8;
      bits -= 8;
    }
  };
  out.byte(MIN);
  emit(CLEAR);
  let prefix = indices[0];
  for (let i = 1; i < indices.length; i++) {
    const k = indices[i];
    const key = prefix * 256 + k;
    if (tableStamps[key] === stamp) {
      prefix = tableCodes[key];
      continue;
    }
    emit(prefix);
    if (next < 4096) {
      tableStamps[key] = stamp;
      tableCodes[key] = next++;
      if (next > 1 << size && size < 12) size += 1;
    } else {
      emit(CLEAR);
      clearTable();
      size = MIN + 1;
      next = END + 1;
    }
    prefix = k;
  }
  emit(prefix);
  emit(END);
  if (bits > 0) block.push(acc & 255);
  if (block.length) flush();
  out.byte(0);
}

/**
 * A GIF written frame by frame (each frame compressed as it comes: no frame is kept):
 * new GifWriter(width, height, delayMs), add(rgba) per frame (the first one sets the
 * palette), done() -> Uint8Array. Each frame is shown delayMs (rounded to 10 ms); loops.
 */
export class GifWriter {
  constructor(width, height, delayMs) {
    this.width = width;
    this.height = height;
    this.delay = Math.max(1, Math.round(delayMs / 10));
    this.out = new Bytes();
    this.palette = null;
    this.frames = 0;
  }

  _head(palette) {
    const out = this.out;
    const bitsPer = Math.max(1, Math.ceil(Math.log2(palette.length)));
    out.text("GIF89a");
    out.word(this.width);
    out.word(this.height);
    out.byte(0x80 | ((bitsPer - 1) << 4) | (bitsPer - 1)); // global colour table
    out.byte(0);
    out.byte(0);
    for (let i = 0; i < 1 << bitsPer; i++) {
      const c = palette[i] ?? 0;
      out.byte(c >> 16);
      out.byte((c >> 8) & 255);
      out.byte(c & 255);
    }
    out.byte(0x21); // loop forever (NETSCAPE2.0)
    out.byte(0xff);
    out.byte(11);
    out.text("NETSCAPE2.0");
    out.byte(3);
    out.byte(1);
    out.word(0);
    out.byte(0);
  }

  /** Add one frame: Uint8ClampedArray (width*height*4), RGBA. */
  add(rgba) {
    if (rgba.length !== this.width * this.height * 4) throw new Error(`a frame of ${this.width}×${this.height} has ${this.width * this.height * 4} bytes, not ${rgba.length}`);
    if (!this.palette) {
      this.palette = paletteOf(rgba);
      this._head(this.palette);
    }
    const out = this.out;
    out.byte(0x21); // graphic control: the frame's delay
    out.byte(0xf9);
    out.byte(4);
    out.byte(0);
    out.word(this.delay);
    out.byte(0);
    out.byte(0);
    out.byte(0x2c); // the image, whole screen, global colours
    out.word(0);
    out.word(0);
    out.word(this.width);
    out.word(this.height);
    out.byte(0);
    writeLzw(out, indexPixels(rgba, this.palette));
    this.frames += 1;
  }

  done() {
    if (!this.frames) throw new Error("an animation needs at least one frame");
    this.out.byte(0x3b);
    return this.out.done();
  }
}

/** The GIF of `frames` ([Uint8ClampedArray (width*height*4)], RGBA) at `delayMs` each. */
export function encodeGif(frames, width, height, delayMs) {
  const gif = new GifWriter(width, height, delayMs);
  for (const f of frames) gif.add(f);
  return gif.done();
}
