"""The page as one self-contained HTML text.

A page opened from ``file://`` cannot load ES modules by ``src`` nor ``fetch`` files, so
everything is inlined, found from ``index.html`` rather than listed (the page's modules
may be split or renamed without touching this):

- the stylesheets become ``<style>`` (their ``url(...)`` files become data: URIs);
- the module graph is followed from the entry ``<script type="module" src>`` through
  every relative ``import``/``export ... from``/``import()``; each module is rewritten to
  import bare names (``convscope/js/model/trace-model.js``) and an import map maps each name to the
  module's text as a data: URL;
- other files the page names (``src``/``href``: the icon) become data: URIs;
- the data to embed go in ``<script type="application/json" id=...>``;
- a Content-Security-Policy meta tag allows no network at all (``connect-src 'none'``,
  scripts only from the file itself), so the file cannot call out even by mistake.
"""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["BundleError", "MODULE_PREFIX", "inline_page", "module_graph"]

MODULE_PREFIX = "convscope/"

# static imports and re-exports (named lists may span lines), side-effect imports, import()
_STATIC_IMPORT = re.compile(
    r"""(?P<head>\b(?:import|export)\s*(?:[\w*{}\s,$]*?\s*\bfrom\s*)?)(?P<q>["'])(?P<spec>\.{1,2}/[^"'\n]+)(?P=q)"""
)
_DYNAMIC_IMPORT = re.compile(r"""(?P<head>\bimport\(\s*)(?P<q>["'])(?P<spec>\.{1,2}/[^"'\n]+)(?P=q)""")
_MODULE_SCRIPT = re.compile(r"""<script\s+type=["']module["']\s+src=["'](?P<src>[^"']+)["']\s*>\s*</script>""")
_STYLESHEET = re.compile(r"""<link\s+rel=["']stylesheet["']\s+href=["'](?P<href>[^"']+)["']\s*/?>""")
_FILE_ATTR = re.compile(r"""\b(?P<attr>src|href)=(?P<q>["'])(?P<ref>[^"'#:?][^"':?]*)(?P=q)""")
_CSS_URL = re.compile(r"""url\(\s*(?P<q>["']?)(?P<ref>[^"')#:?][^"'):?]*)(?P=q)\s*\)""")


class BundleError(ValueError):
    """The page cannot be bundled: a file it names is missing or outside its folder."""


def _inside(root: Path, base: Path, ref: str) -> Path:
    path = (base / ref).resolve()
    if root != path and root not in path.parents:
        raise BundleError(f"{ref!r} (from {base.relative_to(root) or '.'}) points outside the page's folder {root}")
    if not path.is_file():
        raise BundleError(f"{ref!r} (from {base.relative_to(root) or '.'}/) names no file under {root}")
    return path


def _data_uri(path: Path, mime: str | None = None) -> str:
    kind = mime or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if kind == "image/svg+xml" or kind.startswith("text/"):
        kind += ";charset=utf-8"
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def module_graph(root: Path, entry: Path) -> dict[str, str]:
    """Every module reachable from ``entry`` by relative imports: {path relative to
    ``root`` ("js/model/trace-model.js"): source rewritten to import bare ``convscope/...`` names}."""
    modules: dict[str, str] = {}
    todo = [entry.resolve()]
    while todo:
        path = todo.pop()
        name = path.relative_to(root).as_posix()
        if name in modules:
            continue
        modules[name] = ""  # claimed: an import cycle stops here

        def rename(match: re.Match, path: Path = path) -> str:
            target = _inside(root, path.parent, match["spec"])
            todo.append(target)
            bare = MODULE_PREFIX + target.relative_to(root).as_posix()
            return f"{match['head']}{match['q']}{bare}{match['q']}"

        source = path.read_text(encoding="utf-8")
        source = _STATIC_IMPORT.sub(rename, source)
        modules[name] = _DYNAMIC_IMPORT.sub(rename, source)
    return modules


def _module_url(source: str) -> str:
    return "data:text/javascript;charset=utf-8;base64," + base64.b64encode(source.encode("utf-8")).decode("ascii")


def _stylesheet(root: Path, path: Path) -> str:
    css = path.read_text(encoding="utf-8")
    return _CSS_URL.sub(lambda m: f'url("{_data_uri(_inside(root, path.parent, m["ref"]))}")', css)


def _json_script(element_id: str, text: str) -> str:
    # "<" only occurs inside JSON strings, where \u003c means the same: no "</script>"
    return f'<script type="application/json" id="{element_id}">{text.replace("<", chr(92) + "u003c")}</script>'


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def inline_page(root: Path, embedded: Mapping[str, str], title: str | None = None) -> str:
    """The page at ``root``/index.html as one HTML text needing no server and no network.

    embedded : {element id: JSON text} put in ``<script type="application/json">``
    title : replaces the page's ``<title>`` when given
    """
    root = root.resolve()
    html = (root / "index.html").read_text(encoding="utf-8")
    entries = _MODULE_SCRIPT.findall(html)
    if len(entries) != 1:
        raise BundleError(f"index.html must load exactly one module script, it loads {len(entries)}")
    modules = module_graph(root, _inside(root, root, entries[0]))
    import_map = json.dumps(
        {"imports": {MODULE_PREFIX + name: _module_url(src) for name, src in modules.items()}}, separators=(",", ":")
    )
    boot = f'import "{MODULE_PREFIX}{Path(entries[0]).as_posix().lstrip("./")}";'
    scripts = f'<script type="importmap">{import_map}</script>\n<script type="module">{boot}</script>'
    policy = (
        "default-src 'none'; "
        f"script-src {_hash(import_map)} {_hash(boot)} data:; "
        "style-src 'unsafe-inline'; img-src data: blob:; media-src data: blob:; "
        "connect-src 'none'; font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"
    )
    html = _STYLESHEET.sub(lambda m: f"<style>\n{_stylesheet(root, _inside(root, root, m['href']))}</style>", html)
    html = _MODULE_SCRIPT.sub(lambda m: "\x00SCRIPTS\x00", html)
    html = _FILE_ATTR.sub(lambda m: f"{m['attr']}={m['q']}{_data_uri(_inside(root, root, m['ref']))}{m['q']}", html)
    if title is not None:
        html = re.sub(r"<title>.*?</title>", lambda m: f"<title>{_escape(title)}</title>", html, count=1, flags=re.S)
    # the policy first in <head> (after the charset), the data at the end of <body>:
    # modules run after the whole file is parsed
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
    charset = re.search(r"<meta\s+charset=[^>]*>", html)
    at = charset.end() if charset else html.index("<head>") + len("<head>")
    html = html[:at] + "\n" + meta + html[at:]
    data = "\n".join(_json_script(element_id, text) for element_id, text in embedded.items())
    end = html.rindex("</body>") if "</body>" in html else len(html)
    html = html[:end] + data + "\n" + html[end:]
    return html.replace("\x00SCRIPTS\x00", scripts)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
