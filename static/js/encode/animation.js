// An animation of a step range for slides: each frame is the stage as drawn
// (io/export.js's painter) under the step's phase and equation, on a canvas of the
// chosen size; as a GIF (encode/gif.js, written here) or a WebM video (encode/webm.js:
// the browser's VP8 encoder at exact frame times; where it has none, its MediaRecorder
// in real time).

import { paintStage } from "../io/export.js";
import { GifWriter } from "./gif.js";
import { canEncodeWebm, encodeWebm } from "./webm.js";

const $ = (id) => document.getElementById(id);
const MONO = `ui-monospace, "DejaVu Sans Mono", monospace`;
/** The most of a frame's height the equation takes before its text gets smaller. */
const BAND_SHARE = 0.3;

/**
 * `text` in lines no wider than `width` (measure(s): its width in px): broken after a
 * space (a "; " first where the line has one), a word wider than a line broken where it
 * must. Never cut: the lines, joined, are `text` (each keeps the space it ends with).
 */
export function wrapText(text, width, measure) {
  const lines = [];
  let rest = text;
  while (rest.length && measure(rest.trimEnd()) > width) {
    // the longest head that fits, ending after a space if one does
    let n = 1;
    while (n < rest.length && measure(rest.slice(0, n + 1).trimEnd()) <= width) n++;
    const head = rest.slice(0, n + 1);
    const semi = head.lastIndexOf("; ");
    const space = head.lastIndexOf(" ");
    const cut = semi > n / 2 ? semi + 2 : space > 0 ? space + 1 : n;
    lines.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length || !lines.length) lines.push(rest);
  return lines;
}

/**
 * The band over the stage that holds the phase, the step and the equation of every step
 * of the recording whole (texts: the equations; codes: the line of code each step runs,
 * or null: none shown), in a frame width×height: {font, line, height, codeLines}. Its
 * text is as large as a slide's (3.4% of the height), smaller only when the longest
 * equation and line of code would take more than BAND_SHARE of the frame (and no smaller
 * than 12 px: then the band grows instead).
 */
export function bandFor(ctx, texts, width, height, codes = null) {
  let font = Math.max(14, Math.round(height * 0.034));
  for (;;) {
    ctx.font = `600 ${font}px ${MONO}`;
    const room = width - 2 * font;
    const linesOf = (t) => (t ? wrapText(t, room, (x) => ctx.measureText(x).width).length : 0);
    const most = Math.max(1, ...texts.map(linesOf));
    const codeLines = codes ? Math.max(0, ...codes.map(linesOf)) : 0;
    const line = Math.round(font * 1.3);
    const band = Math.ceil(font * 0.5) * 2 + line * (1 + most + codeLines);
    if (band <= height * BAND_SHARE || font <= 12) return { font, line, height: band, codeLines };
    font -= 1;
  }
}

/** Draw the current step onto `ctx` (width×height): the phase, the step, the whole
 *  equation and (code: its text, or null) the line of code it runs on top (band:
 *  bandFor), the stage below at its own size (laid out for the room below the band).
 *  What it drew: {phase, lines, code (the code lines drawn), scale}. */
function drawFrame(ctx, width, height, stage, band, code = null) {
  const bg = getComputedStyle(document.body).backgroundColor || "#fff";
  ctx.fillStyle = bg;
  ctx.fillRect(0, 0, width, height);
  const { font, line } = band;
  const color = getComputedStyle(document.body).color || "#111";
  ctx.fillStyle = color;
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  ctx.font = `700 ${font}px ${MONO}`;
  const phase = $("eq-phase").textContent.toUpperCase();
  const counter = $("step-counter").textContent;
  const top = Math.ceil(font * 0.5);
  ctx.fillText(`${phase} · ${counter}`, font, top + line / 2);
  ctx.font = `600 ${font}px ${MONO}`;
  const lines = wrapText($("eq-text").textContent, width - 2 * font, (x) => ctx.measureText(x).width);
  lines.forEach((l, i) => ctx.fillText(l.trimEnd(), font, top + line * (i + 1.5)));
  // the line of code under the equation, in the colour of what the step writes
  const codeLines = code ? wrapText(code, width - 2 * font, (x) => ctx.measureText(x).width) : [];
  if (codeLines.length) {
    ctx.fillStyle = getComputedStyle(document.body).getPropertyValue("--write").trim() || color;
    const below = top + line * (lines.length + 1.5);
    codeLines.forEach((l, i) => ctx.fillText(l.trimEnd(), font, below + line * i));
    ctx.fillStyle = color;
  }
  const picture = paintStage(stage, 1, true);
  const room = { w: width, h: height - band.height };
  // (the stage was laid out for this room: drawn at its own size, shrunk only if it is larger)
  const s = Math.min(1, room.w / picture.width, room.h / picture.height);
  const w = picture.width * s;
  const h = picture.height * s;
  ctx.imageSmoothingQuality = "high";
  ctx.drawImage(picture, (width - w) / 2, band.height + (room.h - h) / 2, w, h);
  return { phase, lines, code: codeLines, scale: s };
}

/** The smallest text (px) of the numbers in the stage's drawn cells, and how many cells
 *  show what the step added (the tags). */
function measureCells(stage) {
  let smallest = Infinity;
  let tags = 0;
  for (const cell of stage.querySelectorAll(".tensor:not([hidden]) .cell")) {
    if (!cell.textContent || !cell.getBoundingClientRect().width) continue;
    smallest = Math.min(smallest, parseFloat(getComputedStyle(cell).fontSize));
    if (cell.dataset.delta && getComputedStyle(cell, "::after").content !== "none") tags++;
  }
  return { cellFont: Number.isFinite(smallest) ? smallest : null, tags };
}

/**
 * Steps `from`..`to` (inclusive) as an animation. show(step) draws the page at a step
 * (synchronously); layout(size) lays the stage out for `size` ({width, height} px: the
 * frame less its equation band; null: the page again); textAt(step) the step's equation
 * (the band is made high enough for the longest); codeAt(step): the line of code it runs
 * ("27  dx = …", or null; codeAt null: no code line); size {width, height}; fps steps
 * per second; format "gif" or "webm"; progress(done, total); measure: also report the
 * drawn cells' text size per frame (the tests). Resolves to {blob, frames: [{step,
 * phase, lines (the equation as drawn, joined: the step's text), code (the code line as
 * drawn), scale, cellFont?, tags?}]}.
 */
export async function recordAnimation({ from, to, show, layout, textAt, codeAt = null, stage, size, fps, format, progress = () => {}, measure = false }) {
  const { width, height } = size;
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext("2d", { willReadFrequently: format === "gif" });
  const steps = [];
  for (let k = from; k <= to; k++) steps.push(k);
  const band = bandFor(ctx, steps.map(textAt), width, height, codeAt ? steps.map(codeAt) : null);
  const frames = [];
  const draw = (target, k) => {
    const drawn = drawFrame(target, width, height, stage, band, codeAt ? codeAt(k) : null);
    frames.push({ step: k, ...drawn, ...(measure ? measureCells(stage) : {}) });
  };
  layout({ width, height: height - band.height });
  try {
    const blob = await encode();
    return { blob, frames };
  } finally {
    layout(null);
  }

  async function encode() {
    if (format === "gif") {
      const gif = new GifWriter(width, height, 1000 / fps);
      for (const [i, k] of steps.entries()) {
        show(k);
        draw(ctx, k);
        gif.add(ctx.getImageData(0, 0, width, height).data);
        progress(i + 1, steps.length);
        await new Promise((r) => setTimeout(r, 0)); // (let the page breathe)
      }
      return new Blob([gif.done()], { type: "image/gif" });
    }
    if (await canEncodeWebm(width, height)) {
      const bytes = await encodeWebm(canvas, steps.length, fps, async (i) => {
        show(steps[i]);
        draw(ctx, steps[i]);
        await new Promise((r) => setTimeout(r, 0)); // (let the page breathe)
      }, (i) => progress(i + 1, steps.length));
      return new Blob([bytes], { type: "video/webm" });
    }
    const type = ["video/webm;codecs=vp9", "video/webm;codecs=vp8", "video/webm"].find((t) => window.MediaRecorder && MediaRecorder.isTypeSupported(t));
    if (!type) throw new Error("this browser cannot record WebM video (no MediaRecorder): export a GIF instead");
    // a video records in real time: each frame is drawn off screen while the one before is
    // held, then put on the recorded canvas at its time (1/fps s apart)
    const next = document.createElement("canvas");
    next.width = width;
    next.height = height;
    const nextCtx = next.getContext("2d");
    show(steps[0]);
    draw(ctx, steps[0]);
    const stream = canvas.captureStream(0);
    const track = stream.getVideoTracks()[0];
    const recorder = new MediaRecorder(stream, { mimeType: type, videoBitsPerSecond: 4e6 });
    const chunks = [];
    recorder.ondataavailable = (e) => e.data.size && chunks.push(e.data);
    const stopped = new Promise((r) => (recorder.onstop = r));
    const started = new Promise((r) => (recorder.onstart = r));
    recorder.start();
    await started;
    const t0 = performance.now();
    const hold = 1000 / fps;
    for (const [i, k] of steps.entries()) {
      if (i > 0) {
        show(k);
        draw(nextCtx, k);
        await new Promise((r) => setTimeout(r, Math.max(0, t0 + i * hold - performance.now())));
        ctx.drawImage(next, 0, 0);
      }
      track.requestFrame();
      progress(i + 1, steps.length);
    }
    // the last frame again at the end, so that it too lasts 1/fps s
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + steps.length * hold - performance.now())));
    track.requestFrame();
    recorder.stop();
    await stopped;
    return new Blob(chunks, { type: "video/webm" });
  }
}
