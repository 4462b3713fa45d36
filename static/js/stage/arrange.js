// Putting the stage's figures where a stage layout (model/stage-layout.js) says: its
// columns in the flow, each figure's slices `perLine` a line, the cell size and its
// text on the stage. The figures the phase does not use stay where they stand, hidden
// (stage/stage.js shows their names in the folded line). Only what differs from the DOM
// as it stands is touched: moving a figure walks all its cells and lays them out again.

import { el } from "./figure.js";
import { tagPx, DIGIT_EM } from "../model/stage-layout.js";

/**
 * Arrange `stage` = {container, flow, rest, columns (the flow's column
 * elements, grown here as needed), views: {name: view}} by `layout`; `columns`: the
 * layout's columns ([{names, perLine, shrink}]), `rest`: the names shown below them.
 * layout null: the style sheet's sizes (the columns given are one column of the shown
 * figures, wrapping their slices).
 */
export function placeFigures(stage, layout, columns, rest) {
  const st = stage.container.style;
  if (layout) {
    // (figures outside the layout, below it or folded, at the largest cell it gives)
    st.setProperty("--cell", `${Math.max(layout.cell, ...Object.values(layout.cells ?? {}))}px`);
    st.setProperty("--cell-font", `${layout.font}px`);
    st.setProperty("--tag", `${tagPx(layout.font)}px`);
    st.setProperty("--digit-em", String(DIGIT_EM));
  } else {
    st.removeProperty("--cell");
    st.removeProperty("--cell-font");
    st.removeProperty("--tag");
    st.removeProperty("--digit-em");
  }
  // (no room under the written cells' numbers for the tags of what a step added: no tags)
  stage.container.classList.toggle("untagged", Boolean(layout && layout.tagged === false));
  // a layout that does not fit whole: each column scrolls on its own, the stage not
  const colScroll = Boolean(layout && layout.scrolls === "columns");
  stage.container.classList.toggle("col-scroll", colScroll);
  stage.container.classList.toggle("stacked", Boolean(layout && layout.scrolls === "page"));
  if (colScroll) st.setProperty("--flow-height", `${layout.room.height}px`);
  else st.removeProperty("--flow-height");
  while (stage.columns.length < columns.length) {
    const col = el("div", "flow-col");
    stage.flow.append(col);
    stage.columns.push(col);
  }
  columns.forEach((c, i) => {
    const col = stage.columns[i];
    // (a column may shrink, its figures then scroll sideways, unless the layout says it
    // must show its whole width)
    const shrink = c.shrink === false ? "0" : "1";
    if (col.style.flexShrink !== shrink) col.style.flexShrink = shrink;
    const minWidth = c.minWidth ? `${c.minWidth}px` : "";
    if (col.style.minWidth !== minWidth) col.style.minWidth = minWidth;
    placeInOrder(col, c.names.map((n) => stage.views[n].fig));
    c.names.forEach((n) => {
      const v = stage.views[n];
      setCell(v.fig, layout && layout.cells ? layout.cells[n] : null);
      const lined = c.perLine > 0;
      v.bandsEl.classList.toggle("lined", lined);
      if (lined) v.bandsEl.style.setProperty("--per-line", c.perLine);
    });
  });
  for (let i = 0; i < stage.columns.length; i++) stage.columns[i].hidden = i >= columns.length;
  placeInOrder(stage.rest, rest.map((n) => stage.views[n].fig));
  for (const n of rest) {
    setCell(stage.views[n].fig, null);
    stage.views[n].bandsEl.classList.remove("lined");
  }
}

/** Make `figs` children of `parent` in this order, moving as few as can be: other
 *  children (hidden figures) may stand between them. */
function placeInOrder(parent, figs) {
  let prev = null;
  for (const f of figs) {
    const placed = f.parentElement === parent && (!prev || prev.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING);
    if (!placed) parent.insertBefore(f, prev ? prev.nextSibling : parent.firstChild);
    prev = f;
  }
}

/** A figure's own cell size (px), or the stage's (null). */
function setCell(fig, px) {
  const want = px ? `${px}px` : "";
  if (fig.style.getPropertyValue("--cell") !== want) {
    if (want) fig.style.setProperty("--cell", want);
    else fig.style.removeProperty("--cell");
  }
}
