// The cells by keyboard: Tab reaches each figure's one Tab stop (a roving tabindex);
// there the arrow keys move between the figure's cells (across its slices at a slice's
// edge), Home and End go to its first and last cell, Enter or Space opens the cell's
// story (Escape there comes back to the cell), Escape gives the keys back to the
// player. Only a cell focused from the keyboard takes these keys: a click on a cell
// leaves them to the player (main.js keeps the focus off a clicked cell).

const MOVES = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };

/** The cell the key `key` moves to from `cell` (null: none), in its figure. */
function target(cell, key) {
  const grid = cell.parentElement;
  const cells = Array.from(grid.children);
  const i = cells.indexOf(cell);
  const cols = Number(grid.dataset.cols) || cells.length;
  const figure = cell.closest("figure.tensor");
  const grids = Array.from(figure.querySelectorAll(".grid"));
  const g = grids.indexOf(grid);
  if (key === "Home") return grids[0].firstElementChild;
  if (key === "End") return grids[grids.length - 1].lastElementChild;
  const [dr, dc] = MOVES[key];
  const row = Math.floor(i / cols) + dr;
  const col = (i % cols) + dc;
  if (row >= 0 && col >= 0 && col < cols && row * cols + col < cells.length) return cells[row * cols + col];
  // past a slice's edge: the next slice (right, down) or the previous one (left, up), on
  // the same row (left, right) or column (up, down)
  const next = grids[g + (dr + dc > 0 ? 1 : -1)];
  if (!next) return null;
  const there = next.children;
  const rows = Math.ceil(there.length / cols);
  const at = dc ? Math.floor(i / cols) * cols + (dc > 0 ? 0 : cols - 1) : (dr > 0 ? 0 : rows - 1) * cols + (i % cols);
  return there[Math.min(there.length - 1, at)] ?? null;
}

/**
 * Handle key event `e` on a cell focused from the keyboard: returns "inspect" (open the
 * focused cell's story), "leave" (give the keys back), "moved", or "" (not a cell key).
 */
export function cellKey(e) {
  const cell = e.target && e.target.closest ? e.target.closest(".cell") : null;
  if (!cell || e.ctrlKey || e.metaKey || e.altKey || !cell.matches(":focus-visible")) return "";
  if (e.key === "Enter" || e.key === " ") return "inspect";
  if (e.key === "Escape") return "leave";
  if (!(e.key in MOVES) && e.key !== "Home" && e.key !== "End") return "";
  // (a phone's close-up hides the cells around the step: stage/close-up.js)
  const to = target(cell, e.key);
  if (to && to.offsetParent !== null) {
    cell.removeAttribute("tabindex"); // (a cell with a tabindex would take focus on a click too)
    to.tabIndex = 0;
    to.focus();
  }
  return "moved";
}
