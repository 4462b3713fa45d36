// The setup drawer, open or closed, as the user last left it: kept in this browser's
// storage (a page that cannot keep it remembers it for this visit only).

const SETUP_KEY = "convscope.setup";

/** The drawer at start: as the user last left it, else open only on wide screens. */
export function initialSetupOpen() {
  let kept = null;
  try {
    kept = localStorage.getItem(SETUP_KEY);
  } catch {
    kept = null;
  }
  return kept ? kept === "open" : window.innerWidth >= 1440;
}

export function rememberSetupOpen(open) {
  try {
    localStorage.setItem(SETUP_KEY, open ? "open" : "closed");
  } catch {
    /* storage refused: the choice lasts this visit */
  }
}
