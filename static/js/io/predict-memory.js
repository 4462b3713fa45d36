// Predict's memory in this browser's storage: whether it is on, each lesson's score, and
// the page's token for class questions (a page that cannot keep them remembers them for
// this visit only).

import { readScore, scoreKey } from "../model/predict.js";

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

/** The score of `lesson` ("": a custom setup) kept here, or none yet (readScore). */
export const keptScore = (lesson) => readScore(read(scoreKey(lesson)));

export const keepScore = (lesson, score) => write(scoreKey(lesson), JSON.stringify(score));

const VOTER_KEY = "convscope.voter";

/** This page's token for class questions (one answer per page and question; a reload
 *  keeps it, for this tab): random, naming no one. */
export function voterToken() {
  let token = null;
  try {
    token = sessionStorage.getItem(VOTER_KEY);
  } catch {
    token = null;
  }
  if (!token) {
    token = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
    try {
      sessionStorage.setItem(VOTER_KEY, token);
    } catch {
      /* kept for this page only */
    }
  }
  return token;
}
