// The code panel: the trace's listing (model/code-view.js) beside the stage, the line the
// step runs marked `current` (each line an element with data-line), the loops around it
// and the other lines the step runs marked too, what the step writes noted on its line,
// the loop variables and scalars above. In a mistake lesson the mistaken lines are
// marked, each with the correct line under it. Hovering a line lights the cells it
// writes at this step; clicking one goes to the next step that runs it. Brief (projector
// mode, a phone): only the current line and its loops, large.

import { el } from "../stage/figure.js";
import { codeOf, codeStep, correctLine, correctUnder, writesOfLine, nextStepRunning } from "../model/code-view.js";

export class CodePanel {
  /** section: the panel's element; cellOf(tensor, flat): a stage cell; where(): {model,
   *  event, step} now, or null; goto(step): move the player there. */
  constructor(section, { cellOf, where, goto }) {
    this.section = section;
    this.cellOf = cellOf;
    this.where = where;
    this.goto = goto;
    this.code = null;
    this.lineEls = [];
    this.lit = [];
    this.shown = { current: null, runs: new Set(), headers: new Set(), notes: {} };
    this.name = el("span", "code-name");
    this.vars = el("span", "code-vars");
    this.vars.id = "code-vars";
    const head = el("div", "code-head");
    head.append(this.name, this.vars);
    this.list = el("ol", "code-lines");
    this.list.setAttribute("aria-label", "The code this step runs");
    this.empty = el("p", "code-empty", "This trace has no listing: its steps have no line of code to show.");
    section.replaceChildren(head, this.list, this.empty);
    this.list.addEventListener("pointerover", (e) => {
      const li = e.target.closest(".code-line");
      if (li) this.light(Number(li.dataset.line));
    });
    this.list.addEventListener("pointerleave", () => this.unlight());
    this.list.addEventListener("click", (e) => {
      const li = e.target.closest(".code-line");
      if (li) this.jump(Number(li.dataset.line));
    });
  }

  /** Draw the panel for `model` at `event` (compiled, or null); open: shown at all;
   *  brief: only the current line and its loops; diverges: the step is a mistake's first
   *  divergence (its mistaken lines are lit and brought into view). */
  draw(model, event, { open, brief, diverges = false }) {
    const section = this.section;
    if (section.hidden === open) section.hidden = !open;
    section.classList.toggle("brief", brief);
    if (!open) return;
    const code = codeOf(model);
    if (code !== this.code) this.build(code);
    if (!code) return;
    const step = codeStep(code, event);
    const was = this.shown;
    const touched = new Set([was.current, step.current, ...was.runs, ...step.runs, ...was.headers, ...step.headers, ...Object.keys(was.notes).map(Number), ...Object.keys(step.notes).map(Number)]);
    for (const n of touched) {
      const li = this.lineEls[n - 1];
      if (!li) continue;
      li.classList.toggle("current", n === step.current);
      li.classList.toggle("runs", step.runs.has(n) && n !== step.current);
      li.classList.toggle("header", step.headers.has(n));
      const note = step.notes[n] ?? "";
      if (li.note.textContent !== note) li.note.textContent = note;
    }
    if (step.current !== was.current) {
      const cur = this.lineEls[step.current - 1];
      if (cur) cur.setAttribute("aria-current", "step");
      const old = this.lineEls[was.current - 1];
      if (old && old !== cur) old.removeAttribute("aria-current");
    }
    const vars = [step.loop, step.scalars].filter(Boolean).join("  ·  ");
    if (this.vars.textContent !== vars) this.vars.textContent = vars;
    this.shown = step;
    if (step.current !== was.current) this.follow();
    // (after the current line: at a divergence the mistaken line is the one to see)
    if (diverges !== this.diverged) {
      this.diverged = diverges;
      for (const n of code.changed ?? []) this.lineEls[n - 1]?.classList.toggle("diverged", diverges);
      if (diverges) this.reveal(code.changed?.[0]);
    }
  }

  /** The listing's lines, once per listing (null: the setting has none). */
  build(code) {
    this.code = code;
    this.shown = { current: null, runs: new Set(), headers: new Set(), notes: {} };
    this.lineEls = [];
    this.diverged = false;
    this.list.replaceChildren();
    this.empty.hidden = Boolean(code);
    this.name.textContent = code ? `${code.name} · ${code.convention}` : "";
    this.vars.textContent = ""; // (the last listing's loop values: the step draws its own)
    if (!code) return;
    code.lines.forEach((text, k) => {
      const n = k + 1;
      const li = el("li", "code-line");
      li.dataset.line = String(n);
      // (the indent apart: a brief strip leaves it out)
      const src = el("code", "src");
      const body = text.trimStart();
      if (body.length < text.length) src.append(el("span", "indent", text.slice(0, text.length - body.length)));
      src.append(body || " ");
      li.append(el("span", "ln", String(n)), src);
      li.note = el("span", "code-note");
      li.append(li.note);
      const correct = correctLine(code, n);
      if (correct !== null) {
        li.classList.add("changed");
        li.title = `the mistake: this line, where the correct code has ${correct.trim()}`;
      }
      this.list.append(li);
      this.lineEls.push(li);
      const under = correctUnder(code, n);
      if (under !== null) {
        // the correct line under the mistaken one(s) (no data-line: it is not run)
        const fix = el("li", "code-correct");
        fix.append(el("span", "ln", "✓"), el("code", "src", under));
        this.list.append(fix);
      }
    });
  }

  /** Keep the current line in the panel's view (the panel scrolls, never the page). */
  follow() {
    this.reveal(this.shown.current);
  }

  /** Scroll the panel (never the page) to show line `n`. */
  reveal(n) {
    const cur = this.lineEls[n - 1];
    const box = this.list;
    if (!cur || box.scrollHeight <= box.clientHeight) return;
    const top = cur.offsetTop - box.offsetTop;
    if (top < box.scrollTop || top + cur.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = Math.max(0, top - box.clientHeight / 3);
  }

  /** Light the cells line `n` writes at this step. */
  light(n) {
    this.unlight();
    const here = this.where();
    if (!here) return;
    for (const w of writesOfLine(here.event, n)) {
      for (const flat of w.idx) {
        const c = this.cellOf(w.tensor, flat);
        if (c) {
          c.classList.add("code-lit");
          this.lit.push(c);
        }
      }
    }
  }

  unlight() {
    for (const c of this.lit) c.classList.remove("code-lit");
    this.lit = [];
  }

  /** Go to the next step that runs line `n` (after the current one, round to the start). */
  jump(n) {
    const here = this.where();
    if (!here) return;
    const to = nextStepRunning(here.model.compiled, here.model.received, here.step, n);
    if (to !== null) this.goto(to);
  }
}
