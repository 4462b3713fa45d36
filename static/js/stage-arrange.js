// Putting the stage's figures where a stage layout (stage-layout.js) says: its columns
// in the flow, each figure's slices `perLine` a line, the cell size and its text on the
// stage, the figures the phase does not use in the folded line. Only what differs from
// the DOM as it stands is touched (moving a figure lays all its cells out again).

import { el } from "./stage-figure.js";

/**
 * Arrange `stage` = {container, flow, rest, folded, columns (the flow's column
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
  } else {
    st.removeProperty("--cell");
    st.removeProperty("--cell-font");
  }
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
    c.names.forEach((n, k) => {
      const v = stage.views[n];
      if (col.children[k] !== v.fig) col.insertBefore(v.fig, col.children[k] ?? null);
      setCell(v.fig, layout && layout.cells ? layout.cells[n] : null);
      const lined = c.perLine > 0;
      v.bandsEl.classList.toggle("lined", lined);
      if (lined) v.bandsEl.style.setProperty("--per-line", c.perLine);
    });
  });
  for (let i = 0; i < stage.columns.length; i++) stage.columns[i].hidden = i >= columns.length;
  rest.forEach((n, k) => {
    const v = stage.views[n];
    setCell(v.fig, null);
    v.bandsEl.classList.remove("lined");
    if (stage.rest.children[k] !== v.fig) stage.rest.insertBefore(v.fig, stage.rest.children[k] ?? null);
  });
  for (const n in stage.views) {
    const v = stage.views[n];
    if (v.folded && v.fig.parentElement !== stage.folded) stage.folded.append(v.fig);
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
