// The Animation dialog: a step range (the current phase by default), a size, steps per
// second and a format; checks what was typed (naming the field and the numbers), then
// records (encode/animation.js) and downloads. The page returns to its step afterwards.

import { recordAnimation } from "../encode/animation.js";
import { download } from "../io/export.js";

const $ = (id) => document.getElementById(id);
export const MAX_FRAMES = 600;
/** Steps per second an animation may have (the command line checks the same bounds). */
export const MIN_FPS = 0.5;
export const MAX_FPS = 30;

/** The request in the form, or {error} naming the field. total: the trace's steps. */
export function readAnimationForm(values, total) {
  const int = (name, label) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 1 || n > total) return { error: `${label} must be a whole number from 1 to ${total}, not "${values[name]}"` };
    return { n };
  };
  const from = int("from", "from step");
  if (from.error) return from;
  const to = int("to", "to step");
  if (to.error) return to;
  if (to.n < from.n) return { error: `to step (${to.n}) comes before from step (${from.n})` };
  if (to.n - from.n + 1 > MAX_FRAMES) return { error: `${to.n - from.n + 1} steps is more than ${MAX_FRAMES} frames: export a shorter range` };
  const fps = Number(values.fps);
  if (!Number.isFinite(fps) || fps < MIN_FPS || fps > MAX_FPS) return { error: `steps per second must be from ${MIN_FPS} to ${MAX_FPS}, not "${values.fps}"` };
  const [width, height] = String(values.size).split("x").map(Number);
  return { from: from.n - 1, to: to.n - 1, fps, size: { width, height }, format: values.format === "webm" ? "webm" : "gif", code: values.code === "on" };
}

export class AnimationDialog {
  /** range(): {from, to, total} (0-based, the current phase); show(step): draw the page
   *  at a step now; layout(size): lay the stage out for a frame's room (null: the page's);
   *  textAt(step): the step's equation; codeAt(step): the line of code it runs (null:
   *  the trace has no listing); codeShown(): the code panel is open (the box's default);
   *  here(): the step shown; stage: the stage element. */
  constructor({ range, show, layout, textAt, codeAt, codeShown, here, stage }) {
    this.range = range;
    this.show = show;
    this.layout = layout;
    this.textAt = textAt;
    this.codeAt = codeAt;
    this.codeShown = codeShown;
    this.here = here;
    this.stage = stage;
    this.busy = false;
    const form = $("anim-form");
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.make();
    });
    $("anim-close").addEventListener("click", () => $("anim-dialog").close());
  }

  open() {
    const { from, to } = this.range();
    const form = $("anim-form");
    form.elements.from.value = String(from + 1);
    form.elements.to.value = String(to + 1);
    // (the line of code: offered where the trace has a listing, ticked when the panel is open)
    const listed = this.codeAt(from) !== null;
    form.elements.code.disabled = !listed;
    form.elements.code.checked = listed && this.codeShown();
    $("anim-note").textContent = "";
    $("anim-dialog").showModal();
  }

  async make() {
    if (this.busy) return;
    const form = $("anim-form");
    const values = Object.fromEntries(new FormData(form).entries());
    const req = readAnimationForm(values, this.range().total);
    const note = $("anim-note");
    if (req.error) {
      note.textContent = req.error;
      return;
    }
    this.busy = true;
    const back = this.here();
    try {
      const { blob } = await recordAnimation({
        ...req,
        show: this.show,
        layout: this.layout,
        textAt: this.textAt,
        codeAt: req.code ? this.codeAt : null,
        stage: this.stage,
        progress: (done, all) => (note.textContent = `frame ${done} of ${all}…`),
      });
      const name = `convscope-steps-${req.from + 1}-${req.to + 1}.${req.format}`;
      note.textContent = `${name}: ${(blob.size / 1024).toFixed(0)} KB`;
      download(blob, name);
    } catch (err) {
      note.textContent = `Not made: ${err.message}`;
    } finally {
      this.busy = false;
      this.show(back);
    }
  }
}
