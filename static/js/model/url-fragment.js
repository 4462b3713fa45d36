// The place in the URL: the lesson (by name when it is an unchanged lesson, else the
// whole config), the step and the view settings, in the fragment so that a reload, a
// bookmark or a copied link reopens the same place. Pure.
//
//   #s=<step>[&x=<speed index>][&p=1 projector][&a=1 all tensors](&l=<lesson> | &c=<base64url of the config's JSON>)

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

/** The view settings the address keeps beside the lesson and step: key -> state field. */
const FLAGS = { p: "projector", a: "allTensors", k: "codeOpen" };
const LESSON_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The address of a place: "#s=12&l=d2l&p=1" for an unchanged lesson (by name), or
 * "#s=12&c=<config>" for any other setup. place: {step, lesson?, config?, speed?,
 * projector?, allTensors?, codeOpen?}; the lesson wins over the config when both are given.
 */
export function encodeLesson({ config, lesson, step, speed, projector, allTensors, codeOpen }) {
  const parts = [`s=${Math.max(0, step | 0)}`];
  if (speed != null) parts.push(`x=${speed | 0}`);
  for (const [key, field] of Object.entries(FLAGS)) {
    const on = { projector, allTensors, codeOpen }[field];
    if (on) parts.push(`${key}=1`);
  }
  if (lesson) parts.push(`l=${encodeURIComponent(lesson)}`);
  else if (config) parts.push(`c=${toBase64Url(JSON.stringify(config))}`);
  return `#${parts.join("&")}`;
}

/**
 * The place in a URL fragment: {config, lesson, step, speed, projector, allTensors, codeOpen},
 * absent parts null (flags false). Throws an Error naming the part when it is damaged.
 */
export function decodeLesson(hash) {
  const out = { config: null, lesson: null, step: null, speed: null, projector: false, allTensors: false, codeOpen: false };
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
    } else if (key in FLAGS) {
      out[FLAGS[key]] = value === "1";
    } else if (key === "l") {
      const name = decodeURIComponent(value);
      if (!LESSON_NAME.test(name)) throw new Error(`the link's lesson name "${name.slice(0, 40)}" is not a lesson name`);
      out.lesson = name;
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
