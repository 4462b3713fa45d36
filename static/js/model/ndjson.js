// NDJSON: one JSON object per line. Pure parsing over a stream of text chunks.

/**
 * Split text chunks into complete lines, keeping a partial last line for the next chunk.
 * Returns {lines, rest}.
 */
export function splitLines(rest, chunk) {
  const text = rest + chunk;
  const parts = text.split("\n");
  const tail = parts.pop();
  return { lines: parts.filter((l) => l.trim() !== ""), rest: tail };
}

/**
 * Async iterator over the JSON objects of an NDJSON byte stream (a ReadableStream of
 * Uint8Array, e.g. fetch's response.body), one array per network chunk so that a
 * consumer can draw once per chunk. Throws with the line number on bad JSON.
 */
export async function* readNdjsonBatches(byteStream) {
  const reader = byteStream.pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  let lineNo = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const split = splitLines(rest, value);
      rest = split.rest;
      if (split.lines.length) yield split.lines.map((line) => parseLine(line, ++lineNo));
    }
    if (rest.trim() !== "") yield [parseLine(rest, lineNo + 1)];
  } finally {
    reader.releaseLock();
  }
}

function parseLine(line, lineNo) {
  try {
    return JSON.parse(line);
  } catch (err) {
    throw new Error(`line ${lineNo} of the trace stream is not JSON: ${line.slice(0, 80)}`);
  }
}

/**
 * Feed batches of stream messages into handlers: header -> onHeader(header),
 * event(s) -> onEvents([...]) (once per batch), end -> onEnd(msg), error -> throws an
 * Error with .detail. A stream that stops without its end line is an error too.
 * @param {AsyncIterable<import("./trace-types.js").StreamLine[]>} batches
 * @param {{onHeader: function(import("./trace-types.js").Header): void,
 *   onEvents: function(import("./trace-types.js").Event[]): void, onEnd: function(object): void}} handlers
 */
export async function consumeTrace(batches, { onHeader, onEvents, onEnd }) {
  let sawEnd = false;
  for await (const batch of batches) {
    let pending = [];
    const flush = () => {
      if (pending.length) onEvents(pending);
      pending = [];
    };
    for (const msg of batch) {
      if (msg.type === "event") {
        const { type, ...ev } = msg;
        pending.push(ev);
      } else if (msg.type === "events") {
        pending.push(...msg.events);
      } else {
        flush();
        if (msg.type === "header") onHeader(msg);
        else if (msg.type === "end") {
          sawEnd = true;
          onEnd(msg);
        } else if (msg.type === "error") {
          const err = new Error(detailMessage(msg.detail));
          err.detail = msg.detail;
          throw err;
        }
      }
    }
    flush();
  }
  if (!sawEnd) throw new Error("the trace stream stopped before its end line");
}

/** One readable sentence from FastAPI's detail (a string or [{loc, msg}]). */
export function detailMessage(detail) {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map((d) => d.msg ?? String(d)).join("; ");
  return "the server refused the request";
}
