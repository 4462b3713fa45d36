// Lessons: the list the server offers (its lessons and the mistakes lab), opening one by
// name, and "compare your numbers" (the setup's trace again, with the student's numbers).

import { mistakeLessons } from "../model/lab.js";
import { clone } from "../model/trace-config.js";
import { fetchPresets, fetchPreset, fetchMistakes } from "../io/api.js";
import { store, dispatch, handle } from "./page.js";
import { run, onConfigEdited } from "./streaming.js";

/** A notice in the toast (drawn from the state; effects.js hides it after a while). */
export const notify = (text) => dispatch({ type: "notice", text });

export async function loadLessons() {
  const [presets, mistakes] = await Promise.allSettled([fetchPresets(), fetchMistakes()]);
  if (presets.status === "rejected") notify(`Presets could not be loaded: ${presets.reason.message}`);
  else if (mistakes.status === "rejected") notify(`The mistakes lab could not be loaded: ${mistakes.reason.message}`);
  const lessons = [...(presets.value ?? []), ...mistakeLessons(mistakes.value ?? [])];
  if (lessons.length) dispatch({ type: "lessonsLoaded", lessons });
}

/** Compare your numbers (null: stop): the setup's trace runs again with them. */
export function setCompare(compare) {
  const state = store.state;
  if (!state.config) return;
  const config = clone(state.config);
  if (compare) config.compare = compare;
  else delete config.compare;
  dispatch({ type: "formShow", config });
  onConfigEdited(config, { immediate: true });
}
handle("setCompare", setCompare);

export async function openLesson(name, { step = 0, push = true } = {}) {
  if (!name) return;
  dispatch({ type: "lessonLoading", on: true });
  try {
    const mistake = store.state.lessons.find((q) => q.name === name && q.group === "mistakes");
    const p = mistake ?? (await fetchPreset(name));
    dispatch({ type: "lessonOpened", name, config: p.config });
    dispatch({ type: "formShow", config: p.config, fresh: true });
    await run(p.config, { step, push });
  } catch (err) {
    notify(`Preset ${name}: ${err.message}`);
  } finally {
    dispatch({ type: "lessonLoading", on: false });
  }
}
