// The address: the place (lesson or setup, step, speed, modes) written into the fragment
// as the page changes (model/url-fragment.js), and read back on a reload, a link,
// back/forward or an address edited by hand.

import { encodeLesson, decodeLesson } from "../model/url-fragment.js";
import { currentStep, placeOf } from "../model/page-state.js";
import { store, dispatch, handle } from "./page.js";
import { run } from "./streaming.js";
import { openLesson, notify } from "./lessons.js";

let urlTimer = 0;
// the address as this page last wrote or read it (null: not yet): another one came from
// outside (typed, a link, back/forward), and its popstate has yet to open it
let known = null;

/** Write the place into the address: `push` for a new setup (back/forward move between
 *  setups), a replacement for a new step or view setting. Never over an address from
 *  outside that the page has not read yet (a write waiting for its 150 ms would
 *  otherwise replace it: the page would stay where it was). */
export function writeUrl(now, { push = false } = {}) {
  if (!store.state.config) return;
  const write = () => {
    urlTimer = 0;
    if (known !== null && location.hash !== known) return;
    const hash = encodeLesson(placeOf(store.state));
    if (location.hash === hash) return;
    try {
      if (push && location.hash) history.pushState(null, "", `${location.search}${hash}`);
      else history.replaceState(null, "", `${location.search}${hash}`);
      known = location.hash;
    } catch {
      // a page that cannot keep its URL (a lesson in a notebook's iframe srcdoc) still plays
    }
  };
  // while playing, one write a second at most, of the place then (a step every half
  // second that put the write off again would never let it happen: a reload went back
  // to where play began); a step or a view setting, 150 ms after the last one
  if (now || !store.state.playing) clearTimeout(urlTimer);
  if (now) write();
  else if (!store.state.playing) urlTimer = setTimeout(write, 150);
  else if (!urlTimer) urlTimer = setTimeout(write, 1000);
}

export function readUrl() {
  known = location.hash;
  try {
    return decodeLesson(location.hash);
  } catch (err) {
    notify(err.message);
    return decodeLesson("");
  }
}

/** Go to the place the address names (a reopened link, back/forward, an edited address). */
export async function openPlace(place, { first = false } = {}) {
  const state = store.state;
  if (place.speed != null) dispatch({ type: "speed", index: place.speed });
  dispatch({ type: "projector", on: place.projector });
  dispatch({ type: "allTensors", on: place.allTensors });
  dispatch({ type: "codeOpen", on: place.codeOpen });
  const step = place.step ?? 0;
  const sameStep = () => state.trace && step === currentStep(store.state);
  if (place.lesson) {
    if (place.lesson !== state.lesson || first) await openLesson(place.lesson, { step, push: false });
    else if (!sameStep()) dispatch({ type: "goto", step });
  } else if (place.config) {
    if (first || state.lesson || JSON.stringify(place.config) !== JSON.stringify(state.config)) {
      dispatch({ type: "customOpened", config: place.config });
      dispatch({ type: "formShow", config: place.config, fresh: true });
      await run(place.config, { step, push: false });
    } else if (!sameStep()) dispatch({ type: "goto", step });
  }
}
handle("openPlace", openPlace);
