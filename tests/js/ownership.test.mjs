// One state owner: no module under static/js (nor static/main.js) assigns to a field of
// an object it imported or was handed (`x.y = …`, `x.y += …`, `x[k] = …`, `x.y++`,
// `Object.assign(x, …)`), and nothing outside the reducer assigns to the store's state.
// A module writes only `this`'s fields, objects it made itself (literals, `new` of a
// class of its own or of the platform, elements it created), and the DOM's own
// properties (textContent, hidden, style, dataset, …: drawing is the render path's job).
// Reading the sources takes a small tokenizer (no parser package offline): comments,
// strings, template literals and regular expressions are skipped, identifiers and
// punctuation kept. Each write's object is classified by the binding its name has in
// the innermost enclosing function or block that declares it. What a module owns: `this`
// and what it reaches; literals, `new` of a class not imported, created elements, copies
// and the results of plain function calls; a callback's item over what it owns
// (`mine.forEach((x) => …)`); the parameters of a private top-level function (not
// exported: only this module calls it). Imports, other parameters, `new` of an imported
// class and what a method call or another's field returns are not the module's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const STATIC = join(ROOT, "static");

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith(".js") ? [join(dir, d.name)] : [],
  );
}

const PUNCT = [">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>"];
const KEYWORDS_BEFORE_REGEX = new Set(["return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "instanceof", "yield", "await"]);

/** The tokens of `src`: {t: "id" | "num" | "str" | "p", v, line}. */
export function tokenize(src) {
  const out = [];
  let i = 0;
  let line = 1;
  const braces = []; // for template literals: a "${" pushes "tpl", a "{" pushes "{"
  const regexAllowed = () => {
    const last = out[out.length - 1];
    if (!last) return true;
    if (last.t === "id") return KEYWORDS_BEFORE_REGEX.has(last.v);
    if (last.t === "num" || last.t === "str") return false;
    return !(last.v === ")" || last.v === "]" || last.v === "}");
  };
  const template = () => {
    // i is just after a backtick or a "}" closing "${": read to the next "${" or "`"
    while (i < src.length) {
      const c = src[i];
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        out.push({ t: "str", v: "`", line });
        return;
      } else if (c === "$" && src[i + 1] === "{") {
        i += 2;
        braces.push("tpl");
        out.push({ t: "str", v: "`", line });
        return;
      } else {
        if (c === "\n") line++;
        i++;
      }
    }
  };
  while (i < src.length) {
    const c = src[i];
    if (c === "\n") {
      line++;
      i++;
    } else if (/\s/.test(c)) i++;
    else if (c === "/" && src[i + 1] === "/") {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      const stop = end < 0 ? src.length : end + 2;
      for (let k = i; k < stop; k++) if (src[k] === "\n") line++;
      i = stop;
    } else if (c === '"' || c === "'") {
      i++;
      while (i < src.length && src[i] !== c) i += src[i] === "\\" ? 2 : 1;
      i++;
      out.push({ t: "str", v: c, line });
    } else if (c === "`") {
      i++;
      template();
    } else if (c === "/" && regexAllowed()) {
      i++;
      let inClass = false;
      while (i < src.length) {
        const d = src[i];
        if (d === "\\") i += 2;
        else if (d === "[") (inClass = true), i++;
        else if (d === "]") (inClass = false), i++;
        else if (d === "/" && !inClass) break;
        else i++;
      }
      i++;
      while (/[a-z]/i.test(src[i] ?? "")) i++;
      out.push({ t: "str", v: "/", line });
    } else if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < src.length && /[\w$]/.test(src[j])) j++;
      out.push({ t: "id", v: src.slice(i, j), line });
      i = j;
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1]))) {
      let j = i + 1;
      while (j < src.length && /[\w.]/.test(src[j])) j++;
      out.push({ t: "num", v: src.slice(i, j), line });
      i = j;
    } else if (c === "{") {
      braces.push("{");
      out.push({ t: "p", v: c, line });
      i++;
    } else if (c === "}") {
      if (braces.pop() === "tpl") {
        i++;
        template();
      } else {
        out.push({ t: "p", v: c, line });
        i++;
      }
    } else {
      const p = PUNCT.find((q) => src.startsWith(q, i)) ?? c;
      out.push({ t: "p", v: p, line });
      i += p.length;
    }
  }
  return out;
}

const ASSIGN = new Set(["=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??="]);
// the DOM's and the canvas's own properties: writing them is drawing, not another module's state
const DOM_PROPS = new Set(
  ("textContent nodeValue inputMode innerHTML innerText hidden className title value disabled checked selected open max min " +
    "href src download alt id tabIndex htmlFor type placeholder rows cols width height scrollTop scrollLeft " +
    "fillStyle strokeStyle lineWidth font textAlign textBaseline globalAlpha lineCap lineJoin imageSmoothingEnabled " +
    "onload onerror onclick onmessage onopen onclose currentTime volume muted colSpan rowSpan spellcheck inert " +
    "indeterminate selectedIndex readOnly required name label lang dir draggable contentEditable")
    .split(" "),
);
const DOM_PARENTS = new Set(["style", "dataset", "classList"]);
// what makes a fresh object this module owns
const FRESH_CALLS = new Set(["createElement", "createElementNS", "createDocumentFragment", "createTextNode", "cloneNode", "structuredClone", "from", "of", "fromEntries", "create", "slice", "map", "filter", "concat"]);
const DECL = new Set(["const", "let", "var"]);
const NOT_CALLS = new Set(["if", "for", "while", "switch", "catch", "function", "return", "typeof", "await", "new", "import", "export"]);

/** The index of the token matching the opener at `i` ("(" / "[" / "{"), scanning forward. */
function closing(tokens, i) {
  const open = tokens[i].v;
  const close = { "(": ")", "[": "]", "{": "}" }[open];
  let depth = 0;
  for (let k = i; k < tokens.length; k++) {
    if (tokens[k].t !== "p") continue;
    if (tokens[k].v === open) depth++;
    else if (tokens[k].v === close && --depth === 0) return k;
  }
  return tokens.length - 1;
}

/** The index of the opener matching the closer at `i`, scanning back. */
function opening(tokens, i) {
  const close = tokens[i].v;
  const open = { ")": "(", "]": "[", "}": "{" }[close];
  let depth = 0;
  for (let k = i; k >= 0; k--) {
    if (tokens[k].t !== "p") continue;
    if (tokens[k].v === close) depth++;
    else if (tokens[k].v === open && --depth === 0) return k;
  }
  return 0;
}

/** The names a parameter list or destructuring pattern tokens[a..b] binds (roughly: its
 *  identifiers that are not a default's or a key renamed). */
function boundNames(tokens, a, b) {
  const names = [];
  let depthDefault = 0;
  for (let k = a; k <= b; k++) {
    const tk = tokens[k];
    if (tk.t === "p" && tk.v === "=") depthDefault = 1;
    else if (tk.t === "p" && (tk.v === "," || tk.v === "}" || tk.v === "]")) depthDefault = 0;
    else if (tk.t === "id" && !depthDefault && !(tokens[k + 1] && tokens[k + 1].v === ":") && !(tokens[k - 1] && tokens[k - 1].v === ".")) names.push(tk.v);
  }
  return names;
}

/**
 * The scopes of a module: for each token index, the bindings visible there. A scope is a
 * brace block (a function's parameters join its body's block; an arrow's expression body
 * gets a scope to the end of the expression). Kinds: "import", "param", "fresh" (made
 * here: a literal, `new` of a non-imported class, a created element), "foreign" (`new` of
 * an imported class), "other" (any other value: a call's result, a field, …), "function".
 */
export function writesOf(src) {
  const tokens = tokenize(src);
  const imports = new Set();
  // imports
  for (let k = 0; k < tokens.length; k++) {
    if (tokens[k].v !== "import" || tokens[k].t !== "id" || (tokens[k + 1] && tokens[k + 1].v === "(")) continue;
    let e = k + 1;
    while (e < tokens.length && !(tokens[e].t === "str")) e++;
    for (let m = k + 1; m < e; m++) {
      const tk = tokens[m];
      if (tk.t !== "id" || ["from", "as"].includes(tk.v)) continue;
      if (tokens[m + 1] && tokens[m + 1].v === "as") continue; // `a as b`: b is bound
      imports.add(tk.v);
    }
  }
  // scopes: a stack of Maps; at each "{" the pending parameters enter the new scope
  const stack = [new Map([...imports].map((n) => [n, "import"]))];
  const pending = []; // parameter names for the next "{" (a function's body)
  let pendingScope = null; // or an arrow's parameters, with their kinds
  const closers = []; // per open brace: pop a scope?
  const arrowEnds = []; // [{depth}]: expression-bodied arrows' scopes
  let depth = 0; // ( [ { depth
  let privateFunction = false;
  const lookup = (name) => {
    for (let s = stack.length - 1; s >= 0; s--) if (stack[s].has(name)) return stack[s].get(name);
    return "global";
  };
  // what a chain's root makes of the value: what `this` or a fresh object holds is the
  // module's own; anything reached from what was handed in is not
  const inherit = (kind) => (kind === "this" || kind === "fresh" ? kind : "other");
  const kindOfInit = (k) => {
    // tokens[k] is the first token of an initializer; `a ? b : c` is fresh when b and c are
    const ternary = branches(k);
    if (ternary) {
      const kinds = ternary.map((b) => (tokens[b] && tokens[b].v === "null" ? "fresh" : kindOfOperand(b)));
      return kinds.every((x) => x === "fresh") ? "fresh" : kinds.includes("this") && kinds.every((x) => x === "this" || x === "fresh") ? "this" : "other";
    }
    return kindOfOperand(k);
  };
  /** The starts of the branches of a conditional expression starting at k, or null. */
  const branches = (k) => {
    let d = 0;
    let q = null;
    for (let m = k; m < tokens.length; m++) {
      const t = tokens[m];
      if (m > k && t.line !== tokens[m - 1].line && d === 0 && t.t === "id" && !/^[=,.(+\-*/?:&|]/.test(tokens[m - 1].v) && t.v !== "?") return null;
      if (t.t !== "p") continue;
      if (t.v === "(" || t.v === "[" || t.v === "{") d++;
      else if (t.v === ")" || t.v === "]" || t.v === "}") {
        if (--d < 0) return null;
      } else if (d === 0 && (t.v === ";" || t.v === ",")) return null;
      else if (d === 0 && t.v === "?" && q === null) q = m + 1;
      else if (d === 0 && t.v === ":" && q !== null) return [q, m + 1];
    }
    return null;
  };
  const kindOfOperand = (k) => {
    while (tokens[k] && tokens[k].v === "(" && tokens[k].t === "p") k++;
    const tk = tokens[k];
    if (!tk) return "other";
    if (tk.t === "p" && (tk.v === "{" || tk.v === "[")) return "fresh";
    if (tk.t === "str" && tk.v === "/") return "fresh"; // a regular expression
    if (tk.t === "id" && tk.v === "new") {
      const cls = tokens[k + 1] && tokens[k + 1].v;
      return lookup(cls) === "import" ? "foreign" : "fresh";
    }
    if (tk.t !== "id") return "other";
    if (tk.v === "this") return "this";
    // a call of this module's own function, or of a copy: the module made the result
    if (tokens[k + 1] && tokens[k + 1].v === "(") return "fresh"; // (a plain function's result is the caller's)
    // a chain ending in a fresh-making call: document.createElement(…), Array.from(…), x.slice()
    let m = k;
    while (tokens[m] && tokens[m].t === "id" && tokens[m + 1] && tokens[m + 1].v === ".") m += 2;
    if (tokens[m] && tokens[m].t === "id" && FRESH_CALLS.has(tokens[m].v) && m > k && tokens[m + 1] && tokens[m + 1].v === "(") return "fresh";
    // a field or an entry of what this module owns is its own
    if (tokens[k + 1] && (tokens[k + 1].v === "." || tokens[k + 1].v === "[")) return inherit(lookup(tk.v));
    return "other";
  };
  // a callback's first parameter over what this module owns: xs.forEach((x) => …)
  const callbackKind = (k) => {
    // tokens[k] is the "(" of the arrow's parameters or its lone parameter
    const call = tokens[k - 1];
    if (!call || call.v !== "(" || !tokens[k - 2] || !["forEach", "map", "filter", "some", "every", "find"].includes(tokens[k - 2].v)) return "param";
    let m = k - 3;
    while (tokens[m] && (tokens[m].v === "." || tokens[m].t === "id") && tokens[m - 1] && (tokens[m].v === "." || tokens[m - 1].v === ".")) m--;
    const root = tokens[m];
    return root && root.t === "id" ? (root.v === "this" ? "this" : inherit(lookup(root.v))) : "param";
  };
  const writes = [];
  for (let k = 0; k < tokens.length; k++) {
    const tk = tokens[k];
    if (tk.t === "p" && (tk.v === "(" || tk.v === "[")) depth++;
    if (tk.t === "p" && (tk.v === ")" || tk.v === "]")) {
      depth--;
      while (arrowEnds.length && arrowEnds[arrowEnds.length - 1] > depth) arrowEnds.pop(), stack.pop();
    }
    if (tk.t === "p" && tk.v === "{") {
      depth++;
      const scope = pendingScope ?? new Map();
      pendingScope = null;
      for (const n of pending.splice(0)) scope.set(n, privateFunction ? "fresh" : "param");
      privateFunction = false;
      stack.push(scope);
      closers.push(true);
      continue;
    }
    if (tk.t === "p" && tk.v === "}") {
      depth--;
      while (arrowEnds.length && arrowEnds[arrowEnds.length - 1] > depth) arrowEnds.pop(), stack.pop();
      if (closers.pop()) stack.pop();
      continue;
    }
    if (tk.t === "p" && (tk.v === "," || tk.v === ";")) {
      while (arrowEnds.length && arrowEnds[arrowEnds.length - 1] >= depth) arrowEnds.pop(), stack.pop();
    }
    // parameters: function f(…) {, method(…) {, (…) => , x =>, catch (e) {
    if (tk.t === "p" && tk.v === "(") {
      const end = closing(tokens, k);
      const prev = tokens[k - 1];
      const after = tokens[end + 1];
      const isFunction = prev && prev.t === "id" && (prev.v === "function" || (tokens[k - 2] && tokens[k - 2].v === "function"));
      const isMethod = prev && prev.t === "id" && !NOT_CALLS.has(prev.v) && after && after.v === "{" && !(tokens[k - 2] && tokens[k - 2].v === ".");
      const isCatch = prev && prev.v === "catch";
      if (isFunction || isMethod || isCatch) pending.push(...boundNames(tokens, k + 1, end - 1));
      // a module's private function (not exported, at the top level) is handed only what
      // the module passes it
      if (isFunction && stack.length === 1 && !tokens.slice(Math.max(0, k - 4), k).some((t) => t.v === "export")) privateFunction = true;
      if (after && after.v === "=>") {
        const names = boundNames(tokens, k + 1, end - 1);
        const first = callbackKind(k);
        const scope = new Map(names.map((n, i) => [n, i === 0 ? first : "param"]));
        if (tokens[end + 2] && tokens[end + 2].v === "{") pendingScope = scope;
        else {
          stack.push(scope);
          arrowEnds.push(depth - 1); // closed by the "," ";" or closer that ends the expression
        }
      }
    }
    if (tk.t === "id" && tokens[k + 1] && tokens[k + 1].v === "=>" && !(tokens[k - 1] && tokens[k - 1].v === ".")) {
      const scope = new Map([[tk.v, callbackKind(k)]]);
      if (tokens[k + 2] && tokens[k + 2].v === "{") pendingScope = scope;
      else {
        stack.push(scope);
        arrowEnds.push(depth);
      }
    }
    // declarations
    if (tk.t === "id" && DECL.has(tk.v)) {
      let m = k + 1;
      for (;;) {
        const target = tokens[m];
        if (!target) break;
        let names;
        let next;
        if (target.t === "p" && (target.v === "{" || target.v === "[")) {
          const end = closing(tokens, m);
          names = boundNames(tokens, m + 1, end - 1).map((n) => [n, "other"]);
          next = end + 1;
        } else {
          names = [[target.v, "other"]];
          next = m + 1;
        }
        if (tokens[next] && tokens[next].v === "=") {
          if (names.length === 1 && target.t === "id") names[0][1] = kindOfInit(next + 1);
        }
        const scope = stack[stack.length - 1];
        for (const [n, kind] of names) scope.set(n, kind);
        // a `for (const x of …)` binds once; otherwise find a "," at this level for more
        if (tokens[next] && (tokens[next].v === "of" || tokens[next].v === "in")) break;
        let q = next;
        let d = 0;
        while (q < tokens.length) {
          const v = tokens[q].t === "p" ? tokens[q].v : null;
          if (v === "(" || v === "[" || v === "{") d++;
          else if (v === ")" || v === "]" || v === "}") {
            if (d === 0) break;
            d--;
          } else if (d === 0 && (v === ";" || (tokens[q].t === "id" && tokens[q].line !== tokens[q - 1].line && !tokens[q - 1].v.match(/^[=,.(+\-*/?:&|]/)))) break;
          else if (d === 0 && v === ",") {
            q = q + 1;
            break;
          }
          q++;
        }
        if (tokens[q - 1] && tokens[q - 1].v === "," && q > next) {
          m = q;
          continue;
        }
        break;
      }
    }
    if (tk.t === "id" && (tk.v === "function" || tk.v === "class") && tokens[k + 1] && tokens[k + 1].t === "id") {
      stack[stack.length - 1].set(tokens[k + 1].v, "function");
    }
    // `x = {…}` / `x = new …` later: x holds what this module made
    if (tk.t === "id" && tokens[k + 1] && tokens[k + 1].v === "=" && !(tokens[k - 1] && (tokens[k - 1].v === "." || DECL.has(tokens[k - 1].v)))) {
      const kind = kindOfInit(k + 2);
      if (kind === "fresh") {
        for (let s = stack.length - 1; s >= 0; s--) {
          if (stack[s].has(tk.v)) {
            if (stack[s].get(tk.v) === "other") stack[s].set(tk.v, "fresh");
            break;
          }
        }
      }
    }
    // writes: <chain> op, where the chain has a field or an index
    const op = tk.t === "p" && ASSIGN.has(tk.v) ? tk.v : null;
    const incdec = tk.t === "p" && (tk.v === "++" || tk.v === "--");
    if (op || incdec) {
      // walk back over .name and [ … ] to the chain's root
      let m = k - 1;
      const chain = [];
      if (incdec && !(tokens[m] && (tokens[m].t === "id" || tokens[m].v === "]"))) {
        // prefix ++x.y: the chain follows
        let e = k + 1;
        while (tokens[e + 1] && (tokens[e + 1].v === "." || tokens[e + 1].v === "[")) e = tokens[e + 1].v === "." ? e + 2 : closing(tokens, e + 1);
        m = e;
      }
      for (;;) {
        const t = tokens[m];
        if (!t) break;
        if (t.v === "]" && t.t === "p") {
          const o = opening(tokens, m);
          chain.unshift("[]");
          m = o - 1;
        } else if (t.t === "id" && tokens[m - 1] && tokens[m - 1].v === "." && tokens[m - 1].t === "p") {
          chain.unshift(t.v);
          m -= 2;
        } else break;
      }
      const root = tokens[m];
      if (!chain.length || !root || root.t !== "id") continue;
      if (op === "=" && tokens[k - 1] && tokens[k - 1].v === "]" && tokens[m - 1] && tokens[m - 1].v === "[" ) continue; // (destructuring)
      const last = chain[chain.length - 1];
      const stateWrite = root.v === "state" || chain.includes("state");
      if (!stateWrite && DOM_PROPS.has(last) || chain.some((c) => DOM_PARENTS.has(c)) || /^aria/.test(last) || /^--/.test(last)) continue;
      writes.push({ root: root.v, kind: root.v === "this" ? "this" : lookup(root.v), target: `${root.v}.${chain.join(".")}`.replace(/\.\[\]/g, "[]"), line: tk.line });
    }
    // Object.assign(x, …)
    if (tk.t === "id" && tk.v === "assign" && tokens[k - 2] && tokens[k - 2].v === "Object" && tokens[k + 1] && tokens[k + 1].v === "(") {
      const r = tokens[k + 2];
      if (r && r.t === "id") {
        const field = tokens[k + 3] && (tokens[k + 3].v === "." || tokens[k + 3].v === "[");
        writes.push({ root: r.v, kind: r.v === "this" ? "this" : field ? `${lookup(r.v)}-field` : lookup(r.v), target: `Object.assign(${r.v}${field ? "…" : ""})`, line: tk.line });
      }
    }
  }
  return writes;
}

/** The writes of `src` that break ownership: to a field of what was imported, handed in,
 *  or made by another module's class, or to the store's state. */
export function violationsOf(src) {
  return writesOf(src).filter((w) => {
    if (/(^|\.)state(\.|\[|$)/.test(w.target.replace(/^Object\.assign\(/, "")) && w.root !== "this") return true;
    return !["this", "fresh", "global", "this-field", "fresh-field", "global-field"].includes(w.kind);
  });
}

const FILES = [join(STATIC, "main.js"), ...walk(join(STATIC, "js"))];

test("the tokenizer skips strings, templates, regular expressions and comments", () => {
  const src = "const a = `x ${b.c = 1} y`; // d.e = 2\nconst r = /a.b = c/g; /* f.g = 3 */ const s = 'h.i = 4';";
  assert.deepEqual(
    tokenize(src).filter((t) => t.t === "id").map((t) => t.v),
    ["const", "a", "b", "c", "const", "r", "const", "s"],
  );
});

test("the check finds writes to what a module imported, was handed or did not make", () => {
  const src = `import { chrome, Stage } from "./x.js";
const stage = new Stage();
const mine = { a: 1 };
const list = [];
export function run(model, store) {
  chrome.panelEvent = undefined;
  stage.lastStep = 3;
  model.header.comparison = 1;
  store.state.step = 2;
  mine.a = 2;
  list[0] = 1;
  const el = document.createElement("p");
  el.textContent = "x";
  el.custom = 1;
  model.counts[2] += 1;
  Object.assign(model, { b: 2 });
}
class C { constructor(o) { this.o = o; this.o2 = 1; o.back = this; } }
const f = (p) => (p.x = 1);
`;
  const found = violationsOf(src).map((w) => w.target);
  assert.deepEqual(found, ["chrome.panelEvent", "stage.lastStep", "model.header.comparison", "store.state.step", "model.counts[]", "Object.assign(model)", "o.back", "p.x"]);
});

// (On main before this test there were 29 such writes: main.js's to the chrome, the stage
// and the trace's header, debug.js's to the stage and the probes, classroom.js's to a
// student's state handed to a method, the stage helpers' to the stage's figure views.)
test("no module under static/js assigns to another module's object fields or to the store's state outside the reducer", () => {
  const found = [];
  for (const file of FILES) {
    const rel = relative(STATIC, file).split(sep).join("/");
    for (const w of violationsOf(readFileSync(file, "utf8"))) found.push(`${rel}:${w.line} ${w.target} (${w.kind})`);
  }
  assert.deepEqual(found, [], `${found.length} writes to fields of objects the module does not own:\n${found.join("\n")}`);
});
