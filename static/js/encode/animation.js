// An animation of a step range for slides: each frame is the stage as drawn
// (io/export.js's painter) under the step's phase and equation, on a canvas of the
// chosen size; as a GIF (encode/gif.js, written here) or a WebM video (encode/webm.js:
// the browser's VP8 encoder at exact frame times; where it has none, its MediaRecorder
// in real time).

import { paintStage } from "../io/export.js";
import { GifWriter } from "./gif.js";
import { canEncodeWebm, encodeWebm } from "./webm.js";

const $ = (id) => document.getElementById(id);

/** Draw the current step onto `ctx` (width×height): the equation on top, the stage below. */
function drawFrame(ctx, width, height, stage) {
  const bg = getComputedStyle(document.body).backgroundColor || "#fff";
  ctx.fillStyle = bg;
  ctx.fillRect(0, 0, width, height);
  const band = Math.round(height * 0.1);
  const font = Math.round(band * 0.34);
  const color = getComputedStyle(document.body).color || "#111";
  ctx.fillStyle = color;
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  ctx.font = `700 ${font}px ui-monospace, "DejaVu Sans Mono", monospace`;
  const phase = $("eq-phase").textContent.toUpperCase();
  const counter = $("step-counter").textContent;
  ctx.fillText(`${phase} · ${counter}`, font, band * 0.3);
  ctx.font = `600 ${font}px ui-monospace, "DejaVu Sans Mono", monospace`;
  let text = $("eq-text").textContent;
  while (text.length > 8 && ctx.measureText(text).width > width - 2 * font) text = `${text.slice(0, -2)}…`.replace(/……$/, "…");
  ctx.fillText(text, font, band * 0.72);
  const picture = paintStage(stage, 1);
  const room = { w: width - font, h: height - band - font / 2 };
  const s = Math.min(room.w / picture.width, room.h / picture.height);
  const w = picture.width * s;
  const h = picture.height * s;
  ctx.imageSmoothingQuality = "high";
  ctx.drawImage(picture, (width - w) / 2, band + (room.h - h) / 2, w, h);
}

/**
 * Steps `from`..`to` (inclusive) as an animation. show(step) draws the page at a step
 * (synchronously); size {width, height}; fps steps per second; format "gif" or "webm";
 * progress(done, total). Resolves to a Blob.
 */
export async function recordAnimation({ from, to, show, stage, size, fps, format, progress = () => {} }) {
  const { width, height } = size;
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext("2d", { willReadFrequently: format === "gif" });
  const steps = [];
  for (let k = from; k <= to; k++) steps.push(k);
  if (format === "gif") {
    const gif = new GifWriter(width, height, 1000 / fps);
    for (const [i, k] of steps.entries()) {
      show(k);
      drawFrame(ctx, width, height, stage);
      gif.add(ctx.getImageData(0, 0, width, height).data);
      progress(i + 1, steps.length);
      await new Promise((r) => setTimeout(r, 0)); // (let the page breathe)
    }
    return new Blob([gif.done()], { type: "image/gif" });
  }
  if (await canEncodeWebm(width, height)) {
    const bytes = await encodeWebm(canvas, steps.length, fps, async (i) => {
      show(steps[i]);
      drawFrame(ctx, width, height, stage);
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
  drawFrame(ctx, width, height, stage);
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
      drawFrame(nextCtx, width, height, stage);
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
