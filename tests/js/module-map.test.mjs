// The page's modules against docs/page.md's module map: the folders under static/js
// say each module's role (model/ pure, stage/, panels/, io/, encode/, app/), and the map says
// what each module is. A module added, moved or renamed without its line fails here, as
// does a line naming no module; so do an import naming no file, a cycle of imports, a
// model/ module importing from outside model/ or using the browser, and two modules of
// one name in different folders.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const STATIC = join(ROOT, "static");
const JS = join(STATIC, "js");
const ENTRY = join(STATIC, "main.js");

/** Every .js file below `dir`, as absolute paths. */
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith(".js") ? [join(dir, d.name)] : [],
  );
}

/** `path` relative to static/js, with forward slashes ("model/frame.js"). */
const under = (path) => relative(JS, path).split(sep).join("/");

const MODULES = walk(JS).map(under).sort();

/** The module paths the map's table names, in its order. */
function mapped() {
  const doc = readFileSync(join(ROOT, "docs/page.md"), "utf8").split("\n");
  const start = doc.findIndex((line) => line.trim() === "### The module map");
  assert.ok(start >= 0, 'docs/page.md has no "### The module map" section');
  const rest = doc.slice(start + 1);
  const end = rest.findIndex((line) => line.startsWith("#"));
  return rest
    .slice(0, end < 0 ? undefined : end)
    .map((line) => /^\|\s*`([^`]+)`\s*\|/.exec(line))
    .filter(Boolean)
    .map((m) => m[1]);
}

/** The text without its comments (roughly: enough that no comment counts as code). */
const code = (text) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");

// static imports and re-exports (lists may span lines), side-effect imports, import()
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"'\n]+)\1/g;

/** The relative specifiers of `text`, each with the file it resolves to from `file`. */
function imports(file, text) {
  return [...text.matchAll(SPECIFIER)].map((m) => ({ spec: m[2], target: resolve(dirname(file), m[2]) }));
}

const SOURCES = new Map([ENTRY, ...walk(JS)].map((f) => [f, readFileSync(f, "utf8")]));

test("the module map names every module under static/js once, and nothing else", () => {
  const names = mapped();
  const missing = MODULES.filter((m) => !names.includes(m));
  const extra = names.filter((n) => !MODULES.includes(n));
  const twice = names.filter((n, i) => names.indexOf(n) !== i);
  assert.deepEqual(missing, [], `modules without a line in docs/page.md's module map: ${missing.join(", ")}`);
  assert.deepEqual(extra, [], `the module map names no such module: ${extra.join(", ")}`);
  assert.deepEqual(twice, [], `the module map names these twice: ${twice.join(", ")}`);
});

test("the module map lists each folder's modules together", () => {
  const folders = mapped().map((n) => n.split("/").slice(0, -1).join("/"));
  const runs = folders.filter((f, i) => i === 0 || f !== folders[i - 1]);
  assert.deepEqual(runs, [...new Set(runs)], `a folder's lines are apart: ${runs.join(" → ")}`);
});

test("every module sits in a folder of its role, and no two modules share a name", () => {
  const roles = new Set(["model", "stage", "panels", "io", "encode", "app"]);
  const loose = MODULES.filter((m) => !roles.has(m.split("/")[0]) || m.split("/").length !== 2);
  assert.deepEqual(loose, [], `modules outside model/, stage/, panels/, io/, encode/, app/: ${loose.join(", ")}`);
  const base = (m) => m.split("/").pop();
  const shared = MODULES.filter((m) => MODULES.some((o) => o !== m && base(o) === base(m)));
  assert.deepEqual(shared, [], `modules of one name in different folders: ${shared.join(", ")}`);
});

test("every relative import (comments' JSDoc types too) names a module that exists", () => {
  const broken = [];
  for (const [file, text] of SOURCES) {
    for (const { spec, target } of imports(file, text)) {
      if (!SOURCES.has(target)) broken.push(`${relative(ROOT, file)}: ${spec}`);
    }
  }
  assert.deepEqual(broken, []);
});

test("the page's imports have no cycle", () => {
  const graph = new Map([...SOURCES].map(([file, text]) => [file, imports(file, code(text)).map((i) => i.target)]));
  const state = new Map(); // file -> "open" while on the path, "done" after
  const path = [];
  const visit = (file) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      const cycle = [...path.slice(path.indexOf(file)), file].map((f) => relative(STATIC, f));
      assert.fail(`an import cycle: ${cycle.join(" → ")}`);
    }
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) visit(file);
});

test("model/ is pure: it imports only model/ and uses no browser global", () => {
  const BROWSER = /\b(document|window|fetch|localStorage|sessionStorage|location|history|navigator|EventSource|XMLHttpRequest)\b/;
  const wrong = [];
  for (const [file, text] of SOURCES) {
    if (!under(file).startsWith("model/")) continue;
    for (const { spec, target } of imports(file, code(text))) {
      if (!under(target).startsWith("model/")) wrong.push(`${under(file)} imports ${spec}`);
    }
    const used = BROWSER.exec(code(text));
    if (used) wrong.push(`${under(file)} uses ${used[1]}`);
  }
  assert.deepEqual(wrong, []);
});
