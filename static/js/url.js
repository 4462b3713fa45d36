// The lesson in the URL: the whole config and the step, in the fragment so that a
// copied link reopens the same lesson at the same step. Pure.
//
//   #s=<step>&c=<base64url of the config's JSON>[&x=<speed index>]

function toBase64Url(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

/** "#s=12&c=..." for a config (plain JSON object) and a step (integer). */
export function encodeLesson({ config, step, speed }) {
  const parts = [`s=${Math.max(0, step | 0)}`];
  if (speed != null) parts.push(`x=${speed | 0}`);
  parts.push(`c=${toBase64Url(JSON.stringify(config))}`);
  return `#${parts.join("&")}`;
}

/**
 * The lesson in a URL fragment: {config, step, speed} with absent parts null.
 * Throws an Error naming the part when the fragment is damaged.
 */
export function decodeLesson(hash) {
  const out = { config: null, step: null, speed: null };
  const text = (hash ?? "").replace(/^#/, "");
  if (!text) return out;
  for (const part of text.split("&")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const key = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (key === "s" || key === "x") {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new Error(`the link's ${key === "s" ? "step" : "speed"} "${value}" is not a whole number`);
      out[key === "s" ? "step" : "speed"] = n;
    } else if (key === "c") {
      let config;
      try {
        config = JSON.parse(fromBase64Url(value));
      } catch {
        throw new Error("the link's lesson setup is damaged (it is not valid encoded JSON)");
      }
      if (!config || typeof config !== "object" || Array.isArray(config)) {
        throw new Error("the link's lesson setup is not an object of parameters");
      }
      out.config = config;
    }
  }
  return out;
}
