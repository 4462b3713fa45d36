// A phone's close-up on the stage (model/step-crop.js): each figure the step touches
// shows only its crop, the slices the step reaches and the rows and columns around its
// boxes; the figures it does not touch are hidden. Cells are hidden, never moved: the
// grid's columns become the crop's, and the cells left in row-major order fill it as the
// cut-out rectangle. Only what differs from the crop a figure shows is touched.

import { el } from "./figure.js";
import { cropCaption } from "../model/step-crop.js";

/** Show `crops` ({name: Crop}, or null: every figure whole) on the shown figures of
 *  `views`; `container` (the stage) gets class close-up while there is a crop. */
export function cropFigures(container, views, crops) {
  container.classList.toggle("close-up", Boolean(crops));
  for (const name in views) {
    const v = views[name];
    const c = crops ? crops[name] ?? null : null;
    const away = Boolean(crops) && !c;
    if (v.fig.classList.contains("crop-away") !== away) v.fig.classList.toggle("crop-away", away);
    cropView(v, c);
  }
}

function cropView(v, c) {
  const key = c ? `${c.slices.join(",")}:${c.r0},${c.r1},${c.c0},${c.c1}` : "";
  if ((v.cropKey ?? "") === key) return;
  v.cropKey = key;
  v.crop = c;
  const { rows, cols } = v.layout;
  const per = rows * cols;
  const shown = c ? new Set(c.slices) : null;
  const out = (v.cropOut ??= new Uint8Array(v.drawn.length));
  v.slicesEls.forEach((s, k) => {
    const away = Boolean(c) && !shown.has(k);
    if (s.classList.contains("crop-away") !== away) s.classList.toggle("crop-away", away);
    const nc = c ? c.c1 - c.c0 + 1 : cols;
    // (the size content-visibility reserves for a slice it skips: the crop's)
    s.style.setProperty("--rows", c ? c.r1 - c.r0 + 1 : rows);
    s.style.setProperty("--cols", nc);
    const g = v.grids[k];
    g.style.gridTemplateColumns = `repeat(${nc}, var(--cell))`;
    // (the read window's outline is placed by its grid cell, less the crop's corner)
    g.style.setProperty("--crop-r0", c ? c.r0 : 0);
    g.style.setProperty("--crop-c0", c ? c.c0 : 0);
    for (let p = 0; p < per; p++) {
      const r = (p / cols) | 0;
      const col = p - r * cols;
      const cut = c && (r < c.r0 || r > c.r1 || col < c.c0 || col > c.c1) ? 1 : 0;
      const at = k * per + p;
      if (out[at] !== cut) {
        out[at] = cut;
        v.cells[v.drawn[at]].classList.toggle("crop-out", cut === 1);
      }
    }
  });
  // the caption says which part of the grid is shown, in place of the description
  const note = c ? cropCaption(c, v.layout, v.meta.axes) : "";
  v.fig.classList.toggle("cropped", Boolean(note));
  if (note) {
    v.cropNoteEl ??= v.fig.firstChild.appendChild(el("span", "tcrop"));
    v.cropNoteEl.textContent = note;
  }
}
