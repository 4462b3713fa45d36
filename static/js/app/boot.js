// The page's start: the teacher token, the debug handle (?debug), the server's meta and
// the setup editors built from it, the wiring, then the place to open (a class session
// to follow, the address and the form's draft kept over a reload, a lesson file's own
// lesson, else the first lesson).

import { classPlace, isSettled, placeOf } from "../model/page-state.js";
import { adoptMeta, defaultConfig, clone } from "../model/trace-config.js";
import { fetchMeta } from "../io/api.js";
import { adoptTeacherToken } from "../io/teacher-token.js";
import { keepDraft, keptDraft, draftPlace } from "../io/form-draft.js";
import { embeddedLesson, embeddedStep } from "../io/lesson-file.js";
import { SetupEditors } from "../panels/setup-editors.js";
import { $, store, dispatch, stage, classroom, probe, setEditors } from "./page.js";
import { redraw, showForExport } from "./redraw.js";
import { installEffects } from "./effects.js";
import { run, running, onConfigEdited } from "./streaming.js";
import { loadLessons, openLesson, notify } from "./lessons.js";
import { readUrl, openPlace } from "./address.js";
import { wire, readRoom } from "./wiring.js";

/** What js/io/debug.js reads and drives (tests and benchmarks only). */
const page = { store, stage, redraw, probe, isSettled: () => isSettled(store.state) && !running(), clone, show: showForExport };

export async function start() {
  adoptTeacherToken(); // (before anything reads or writes the address)
  installEffects();
  if (new URLSearchParams(location.search).has("debug")) (await import("../io/debug.js")).install(page);
  const lessonsLoaded = loadLessons();
  try {
    adoptMeta(await fetchMeta());
  } catch (err) {
    dispatch({ type: "startFailed", message: `The page could not load its controls from the server: ${err.message}` });
    return;
  }
  const draft = keptDraft(); // (what the form held before a reload: the boot's own shows replace it)
  const keepFormDraft = () => {
    const place = placeOf(store.state);
    const held = editors.draft(place.config);
    keepDraft(held && { place: draftPlace(place), ...held });
  };
  const editors = new SetupEditors($("setup-form"), {
    onChange: onConfigEdited,
    // (after the drawing that may have found it: a new setup shown clears the problems)
    onProblem: () => queueMicrotask(() => dispatch({ type: "formProblems", has: editors.hasProblems })),
    onDraft: keepFormDraft,
  });
  setEditors(editors);
  wire();
  redraw();
  readRoom();
  // a student's link: follow the class session (the teacher's place arrives first)
  const code = new URLSearchParams(location.search).get("follow");
  if (code) {
    await lessonsLoaded;
    try {
      await classroom.join(code);
      return;
    } catch (err) {
      notify(`Could not join class session ${code}: ${err.message}`);
    }
  }
  const place = readUrl();
  if (place.lesson || place.config) {
    await lessonsLoaded; // (the lesson menu and its sentence need the list)
    await openPlace(place, { first: true });
    // a reload: what the form held for this setup and the stage did not show comes back
    if (draft && draft.place === draftPlace(placeOf(store.state))) {
      try {
        editors.restore(draft);
      } catch {
        keepDraft(null); // (a draft this page cannot read is dropped, not let stop the page)
      }
    }
    await classroom.resume(classPlace(store.state)); // a teacher's reload: the class follows on
    return;
  }
  if (place.projector) dispatch({ type: "projector", on: true });
  await lessonsLoaded;
  const lessons = store.state.lessons;
  const first = lessons.find((p) => p.name === "d2l") ?? lessons[0];
  const embedded = embeddedLesson(); // (a lesson file opens where it was downloaded)
  if (embedded && embedded.code === true) dispatch({ type: "codeOpen", on: true });
  if (first) await openLesson(first.name, { push: false, ...(embedded ? { step: embeddedStep(embedded) } : {}) });
  else {
    const config = defaultConfig();
    dispatch({ type: "customOpened", config });
    dispatch({ type: "formShow", config, fresh: true });
    await run(config, { step: 0, push: false });
  }
  await classroom.resume(classPlace(store.state));
}
