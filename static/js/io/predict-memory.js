// Predict's memory in this browser's storage: whether it is on, and each lesson's score
// (a page that cannot keep them remembers them for this visit only).

import { readScore, scoreKey, NO_SCORE } from "../model/predict.js";

const PREDICT_KEY = "convscope.predict";

function read(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    /* storage refused: kept for this visit */
  }
}

/** Predict at start: as the student last left it (off at first). */
export const keptPredict = () => read(PREDICT_KEY) === "on";

export const keepPredict = (on) => write(PREDICT_KEY, on ? "on" : "off");

/** The score of `lesson` ("": a custom setup) kept here, or none yet. */
export const keptScore = (lesson) => (read(scoreKey(lesson)) === null ? NO_SCORE : readScore(read(scoreKey(lesson))));

export const keepScore = (lesson, score) => write(scoreKey(lesson), JSON.stringify(score));
