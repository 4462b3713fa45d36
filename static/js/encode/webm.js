// A WebM video from canvas frames at exact times: the browser's WebCodecs VP8 encoder,
// and a small Matroska/WebM muxer written here (EBML header, Info with the duration, one
// video track, clusters of SimpleBlocks). Each frame lasts 1/fps s however long it takes
// to draw. Spec: https://www.matroska.org/technical/elements.html

const te = new TextEncoder();

/** An EBML element: id (its bytes), data (Uint8Array, or a list of elements). */
function element(id, data) {
  const body = Array.isArray(data) ? concat(data) : data;
  const size = new Uint8Array(8); // an 8-byte size: 0x01 then 7 bytes
  let n = body.length;
  for (let i = 7; i >= 1; i--) {
    size[i] = n & 255;
    n = Math.floor(n / 256);
  }
  size[0] = 0x01;
  return concat([Uint8Array.from(id), size, body]);
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function uint(v, bytes = 4) {
  const out = new Uint8Array(bytes);
  for (let i = bytes - 1; i >= 0; i--) {
    out[i] = v & 255;
    v = Math.floor(v / 256);
  }
  return out;
}

function float64(v) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setFloat64(0, v);
  return out;
}

/** The WebM file of `chunks` ([{data: Uint8Array, ms, key}], in order), width×height. */
export function muxWebm(chunks, width, height, durationMs) {
  const header = element([0x1a, 0x45, 0xdf, 0xa3], [
    element([0x42, 0x86], uint(1, 1)),
    element([0x42, 0xf7], uint(1, 1)),
    element([0x42, 0xf2], uint(4, 1)),
    element([0x42, 0xf3], uint(8, 1)),
    element([0x42, 0x82], te.encode("webm")),
    element([0x42, 0x87], uint(2, 1)),
    element([0x42, 0x85], uint(2, 1)),
  ]);
  const info = element([0x15, 0x49, 0xa9, 0x66], [
    element([0x2a, 0xd7, 0xb1], uint(1e6)), // timecodes in ms
    element([0x4d, 0x80], te.encode("ConvScope")),
    element([0x57, 0x41], te.encode("ConvScope")),
    element([0x44, 0x89], float64(durationMs)),
  ]);
  const tracks = element([0x16, 0x54, 0xae, 0x6b], [
    element([0xae], [
      element([0xd7], uint(1, 1)),
      element([0x73, 0xc5], uint(1, 1)),
      element([0x83], uint(1, 1)), // video
      element([0x86], te.encode("V_VP8")),
      element([0xe0], [element([0xb0], uint(width, 2)), element([0xba], uint(height, 2))]),
    ]),
  ]);
  // a cluster starts at every key frame (and block times stay within its 16-bit range)
  const clusters = [];
  let blocks = [];
  let base = 0;
  const close = () => {
    if (blocks.length) clusters.push(element([0x1f, 0x43, 0xb6, 0x75], [element([0xe7], uint(base)), ...blocks]));
    blocks = [];
  };
  for (const c of chunks) {
    if (c.key || c.ms - base > 30000) {
      close();
      base = c.ms;
    }
    const rel = c.ms - base;
    const head = Uint8Array.from([0x81, (rel >> 8) & 255, rel & 255, c.key ? 0x80 : 0x00]);
    blocks.push(element([0xa3], concat([head, c.data])));
  }
  close();
  return concat([header, element([0x18, 0x53, 0x80, 0x67], [info, tracks, ...clusters])]);
}

/** True when this browser can encode VP8 with WebCodecs at width×height. */
export async function canEncodeWebm(width, height) {
  if (typeof VideoEncoder === "undefined") return false;
  const s = await VideoEncoder.isConfigSupported({ codec: "vp8", width, height, bitrate: 4e6 });
  return Boolean(s && s.supported);
}

/**
 * Encode frames drawn by draw(i) on `canvas` (i = 0..count-1), each lasting 1/fps s;
 * progress(i) after each. Resolves to the WebM file's bytes.
 */
export async function encodeWebm(canvas, count, fps, draw, progress = () => {}) {
  const { width, height } = canvas;
  const chunks = [];
  let failure = null;
  const encoder = new VideoEncoder({
    output: (chunk) => {
      const data = new Uint8Array(chunk.byteLength);
      chunk.copyTo(data);
      chunks.push({ data, ms: Math.round(chunk.timestamp / 1000), key: chunk.type === "key" });
    },
    error: (e) => (failure = e),
  });
  encoder.configure({ codec: "vp8", width, height, bitrate: 4e6, framerate: fps });
  const frameUs = 1e6 / fps;
  for (let i = 0; i < count; i++) {
    await draw(i);
    const frame = new VideoFrame(canvas, { timestamp: Math.round(i * frameUs), duration: Math.round(frameUs) });
    encoder.encode(frame, { keyFrame: i % Math.max(1, Math.round(fps * 5)) === 0 });
    frame.close();
    progress(i);
    if (failure) break;
  }
  await encoder.flush();
  encoder.close();
  if (failure) throw failure;
  return muxWebm(chunks, width, height, (count * 1000) / fps);
}
