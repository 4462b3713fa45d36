// The lab on the page: the bar above the stage (the mistake, or your numbers, and what
// differs), the marks on the differing cells, and the step panel's note at the first
// divergence. What to draw comes from model/lab.js (pure); this module only writes the
// DOM, and only when the trace, its comparison or the step changes.

import { labKind, labSummary, differenceMarks, divergenceNote } from "../model/lab.js";

const $ = (id) => document.getElementById(id);

export class LabView {
  /** cellOf(tensor, flat): a cell's element (the Stage's); onDivergence(): jump to the
   *  first divergence; onCompare(): open the paste dialog. */
  constructor({ cellOf, onDivergence, onCompare, onStopComparing }) {
    this.cellOf = cellOf;
    this.key = undefined; // (model, comparison) last drawn
    this.noteKey = undefined;
    this.marked = [];
    $("lab-divergence").addEventListener("click", () => onDivergence());
    $("lab-edit").addEventListener("click", () => onCompare());
    $("lab-stop").addEventListener("click", () => onStopComparing());
  }

  /** Draw the lab for `model` (null: none) at `step`; sent: the request's compare object. */
  draw(model, step, sent) {
    const header = model ? model.header : null;
    const key = model ? [model, header.comparison] : null;
    if (!this.key || !key || key[0] !== this.key[0] || key[1] !== this.key[1]) {
      this.key = key;
      this._drawBar(header);
      this._mark(header ? differenceMarks(header, sent) : {}, labKind(header) === "mistake");
      this.noteKey = undefined;
    }
    const note = header ? divergenceNote(header, step) : "";
    if (note !== this.noteKey) {
      this.noteKey = note;
      $("eq-lab").hidden = !note;
      $("eq-lab").textContent = note;
    }
  }

  _drawBar(header) {
    const s = header ? labSummary(header) : null;
    const bar = $("lab-bar");
    bar.hidden = !s;
    document.body.classList.toggle("lab-mistake", Boolean(s && s.kind === "mistake"));
    $("legend-diff").hidden = !s;
    if (!s) return;
    bar.dataset.kind = s.kind;
    const mistake = s.kind === "mistake" && !s.student;
    $("lab-title").textContent = mistake ? `Mistake: ${s.title}.` : s.student ? `${s.title}.` : `${s.title}:`;
    $("lab-wrong").textContent = mistake ? `${s.wrong} Should: ${s.should}` : s.student ? [s.wrong, s.should].filter(Boolean).join(" ") : "";
    $("lab-lines").replaceChildren(
      ...s.lines.map((line) => {
        const span = document.createElement("span");
        span.className = line.ok ? "lab-ok" : "lab-bad";
        span.dataset.tensor = line.tensor;
        span.textContent = line.text;
        return span;
      }),
    );
    const d = $("lab-divergence");
    d.hidden = s.kind !== "mistake";
    d.disabled = s.firstDivergence == null;
    const none = s.student ? "No wrong write on this case" : "No divergence: this setup hides the mistake";
    d.textContent = s.firstDivergence == null ? none : `${s.student ? "First wrong write" : "First divergence"}, step ${s.firstDivergence + 1} (D)`;
    $("lab-edit").hidden = s.kind !== "compare";
    $("lab-stop").hidden = s.kind !== "compare";
    $("legend-diff-text").textContent =
      s.kind === "mistake" ? "differs from the truth (✓ the true value)" : "your number differs (tag: yours; the cell: the truth)";
  }

  /** Mark the differing cells; mistake: the tag holds the truth (else the numbers sent). */
  _mark(marks, mistake) {
    for (const c of this.marked) {
      c.classList.remove("diff");
      delete c.dataset.other;
      c.removeAttribute("title");
    }
    this.marked = [];
    for (const [tensor, cells] of Object.entries(marks)) {
      for (const { flat, other, title } of cells) {
        const c = this.cellOf(tensor, flat);
        if (!c) continue; // (a slice the stage does not draw)
        c.classList.add("diff");
        c.dataset.other = mistake ? `✓${other}` : `you ${other}`;
        c.title = title;
        this.marked.push(c);
      }
    }
  }
}
