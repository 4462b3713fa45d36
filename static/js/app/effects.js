// What a change of state sets going outside the page's drawing (touching no element): the
// ticker, the class session's place, the address, the toast's timer; then a redraw (at
// once for the ticker's step, which comes at the start of a frame; else in the next frame).

import { classPlace, placeOf } from "../model/page-state.js";
import { fetchQuestions } from "../io/api.js";
import { keepPredict, keepScore, keptScore } from "../io/predict-memory.js";
import { store, dispatch, ticker, classroom } from "./page.js";
import { classQuestionEffects } from "./class-question.js";
import { redraw, requestRedraw, drawNow } from "./redraw.js";
import { writeUrl } from "./address.js";

const NOTICE_MS = 3500;

export function installEffects() {
  let noticeTimer = 0;
  store.subscribe((state, prev, action) => {
    if (state.playing !== prev.playing) {
      if (state.playing) ticker.start();
      else ticker.stop();
    }
    if (state.notice !== prev.notice && state.notice) {
      clearTimeout(noticeTimer);
      const id = state.notice.id;
      noticeTimer = setTimeout(() => dispatch({ type: "noticeDone", id }), NOTICE_MS);
    }
    // a teacher's page sends its place to the class
    if (state.follow && state.follow.role === "teacher") {
      const place = JSON.stringify(classPlace(state));
      // a new place, or a session just opened or resumed (not every change of the bar's
      // facts: a count or a trouble message must not send the place again)
      const began = !prev.follow || prev.follow.role !== "teacher";
      if (place !== JSON.stringify(classPlace(prev)) || began) classroom.publish(classPlace(state));
    }
    predictEffects(state, prev, action);
    classQuestionEffects(state, prev);
    const place = placeOf(state);
    const before = placeOf(prev);
    if (action.type === "header") writeUrl(true, { push: action.push });
    else if (state.playing !== prev.playing || place.projector !== before.projector || place.allTensors !== before.allTensors || place.codeOpen !== before.codeOpen) writeUrl(true);
    else if (place.step !== before.step || place.speed !== before.speed) writeUrl(false);
    // the ticker runs at the start of a frame: its step is drawn in that frame
    if (action.type === "tick") redraw("tick");
    else {
      drawNow(state);
      requestRedraw();
    }
  });
}

/** Predict: a question opened fetches its step's questions; the score is kept per lesson
 *  (read back when another lesson's trace arrives); Predict on or off is kept. */
function predictEffects(state, prev, action) {
  const a = state.asking;
  if (a && !a.questions && (!prev.asking || prev.asking.step !== a.step)) {
    const { step } = a;
    const { model, config } = state.trace;
    fetchQuestions(config, step).then(
      (questions) => dispatch({ type: "questions", step, model, questions }),
      (err) => dispatch({ type: "questions", step, model, questions: null, error: `No question for this step: ${err.message}` }),
    );
  }
  const lesson = state.trace ? state.trace.lesson || "" : null;
  if (lesson !== null && lesson !== (prev.trace ? prev.trace.lesson || "" : null)) dispatch({ type: "scoreLoaded", score: keptScore(lesson) });
  else if (state.score !== prev.score && action.type !== "scoreLoaded" && lesson !== null) keepScore(lesson, state.score);
  if (state.predict !== prev.predict) keepPredict(state.predict);
}
