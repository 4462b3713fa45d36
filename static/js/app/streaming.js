// Running traces: an edit of the setup is traced after a pause; a request streams its
// trace into a TraceModel and dispatches what arrives (the header, events, the end and
// its check); a failure puts back the last good trace and says why. Effects only: what
// they learn goes to the store, the redraw shows it.

import { TraceModel, carryStep, replayCheck } from "../model/trace-model.js";
import { currentStep } from "../model/page-state.js";
import { badgeOf } from "../model/badge.js";
import { clone } from "../model/trace-config.js";
import { streamTrace, errorFields, ApiError } from "../io/api.js";
import { store, dispatch, probe, breakAwayIfFollowing } from "./page.js";

let controller = null; // the running trace request
let debounce = 0;

/** True while a trace request runs. */
export const running = () => controller !== null;

/** The setup was edited in the form: trace it after a pause (`immediate`: now). */
export function onConfigEdited(config, { immediate }) {
  breakAwayIfFollowing(); // (a student who edits the setup explores on their own)
  dispatch({ type: "edited", config });
  clearTimeout(debounce);
  debounce = setTimeout(() => run(config, { typed: true }), immediate ? 0 : 350);
}

/** Fetch and stream the trace of `config`; the previous trace stays until the header
 *  arrives. typed: the setup is what the user typed (kept in the form if the run fails). */
export async function run(config, { step = null, push = true, typed = false } = {}) {
  clearTimeout(debounce);
  if (controller) controller.abort();
  const mine = new AbortController();
  controller = mine;
  dispatch({ type: "runStarted" });
  probe.runStarted();
  let model = null;
  const before = store.state; // the trace on screen: put back if the stream fails after its header
  const lesson = before.lesson;
  try {
    await streamTrace(
      config,
      {
        onHeader(header) {
          if (mine.signal.aborted) return;
          model = new TraceModel(header);
          const old = store.state.trace;
          const target =
            step != null ? Math.min(step, model.total - 1) : old ? carryStep(old.model.phases, old.model.total, store.state.step, model.phases, model.total) : 0;
          dispatch({ type: "header", model, config: clone(config), lesson, step: target, push });
        },
        onEvents(events) {
          if (mine.signal.aborted || !model) return;
          model.addEvents(events);
          dispatch({ type: "events", model });
        },
        onEnd(end) {
          if (mine.signal.aborted || !model) return;
          model.addEnd(end);
          // two checks: this page replays every event's deltas and compares with the
          // header; the server verified the header's dx, dw and db against the forward pass
          dispatch({ type: "checked", badge: badgeOf(replayCheck(model), model.header) });
        },
      },
      mine.signal,
    );
  } catch (err) {
    if (err.name === "AbortError" || mine.signal.aborted) return;
    failed(err, { model, before, typed });
  } finally {
    if (controller === mine) {
      controller = null;
      dispatch({ type: "runDone" });
    }
  }
}

/** A run failed: the form says why; a half trace goes back to the last good one. */
function failed(err, { model, before, typed }) {
  const midStream = model !== null && store.state.trace?.model === model;
  let fields;
  if (err instanceof ApiError) {
    fields = errorFields(err.detail);
    if (err.status === 413 || midStream) fields = { ...fields, _: err.message };
  } else fields = { _: `The trace could not be loaded: ${err.message}` };
  // a half trace is no lesson: back to the last good one, still at its step; a lesson
  // picked or a link opened goes back with its trace; a typed setup stays typed
  const restore =
    midStream && before.trace
      ? { trace: before.trace, step: currentStep(before), badge: before.badge, ...(typed ? {} : { config: before.trace.config, lesson: before.trace.lesson }) }
      : null;
  const what = midStream ? `The trace stopped after ${model.received} of ${model.total} steps: ${err.message}` : `Not run: ${err.message}`;
  dispatch({
    type: "runFailed",
    message: Object.values(fields).join("; "),
    errors: fields,
    restore,
    clear: midStream && !before.trace,
    said: what,
    sayAgain: midStream, // (with the restored step)
    notice: midStream || store.state.projector,
  });
}
