"""The page bundler (server/export/bundle.py) on small stand-in pages: it follows the
module graph from index.html (nested, re-exported, dynamic and cyclic imports), inlines
styles and files, embeds data safely, and refuses a page that names a missing file or
one outside its folder."""

from __future__ import annotations

import base64
import json
import re

import pytest

from convscope.export.bundle import MODULE_PREFIX, BundleError, inline_page, module_graph
from convscope.http.static_files import find_static_dir


def _page(tmp_path, files: dict[str, str]):
    root = tmp_path / "static"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


INDEX = """<!doctype html><html><head><meta charset="utf-8"><title>T</title>
<link rel="icon" href="icon.svg"><link rel="stylesheet" href="css/style.css">
<script type="module" src="main.js"></script></head><body><img src="icon.svg" alt=""><a href="#x">x</a></body></html>"""


def _imports(html: str) -> dict[str, str]:
    found = re.search(r'<script type="importmap">(.*?)</script>', html, re.S)
    mapping = json.loads(found.group(1))["imports"]
    return {k: base64.b64decode(v.split(",", 1)[1]).decode() for k, v in mapping.items()}


def test_the_module_graph_is_followed_and_rewritten(tmp_path):
    root = _page(
        tmp_path,
        {
            "index.html": INDEX,
            "icon.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>",
            "css/style.css": "body { background: url('../icon.svg'); }",
            "main.js": 'import { a } from "./js/a.js";\nimport {\n  b,\n  c as see\n} from "./js/b.js";\nimport "./js/side.js";\nconst lazy = () => import("./js/lazy.js");\n',
            "js/a.js": 'export * from "./deep/d.js";\nexport const a = 1;\n',
            "js/b.js": 'import { a } from "./a.js";\nexport const b = a, c = 2;\n',
            "js/side.js": 'import { b } from "./b.js";\n',
            "js/lazy.js": 'import { a } from "./a.js";\nexport default a;\n',
            "js/deep/d.js": 'import { b } from "../b.js";\nexport const d = b;\n',  # a cycle through b -> a -> d -> b
            "js/unused.js": "export const never = 1;\n",
        },
    )
    html = inline_page(root, {"lesson": '{"t": "</script><!--"}'})
    modules = _imports(html)
    assert sorted(modules) == [
        MODULE_PREFIX + m for m in ("js/a.js", "js/b.js", "js/deep/d.js", "js/lazy.js", "js/side.js", "main.js")
    ]
    assert f'from "{MODULE_PREFIX}js/deep/d.js"' in modules[MODULE_PREFIX + "js/a.js"]
    assert f'import("{MODULE_PREFIX}js/lazy.js")' in modules[MODULE_PREFIX + "main.js"]
    assert f'}} from "{MODULE_PREFIX}js/b.js"' in modules[MODULE_PREFIX + "main.js"]
    assert f'from "{MODULE_PREFIX}js/b.js"' in modules[MODULE_PREFIX + "js/deep/d.js"]
    assert all('"./' not in m and '"../' not in m for m in modules.values())
    assert 'src="main.js"' not in html and 'href="css/style.css"' not in html and 'src="icon.svg"' not in html
    assert 'url("data:image/svg+xml' in html and 'href="#x"' in html
    data = re.search(r'<script type="application/json" id="lesson">(.*?)</script>', html, re.S).group(1)
    assert "</script>" not in data and json.loads(data) == {"t": "</script><!--"}
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert (
        "connect-src 'none'" in policy
        and "default-src 'none'" in policy
        and "unsafe-inline" not in policy.split("style-src")[0]
    )
    assert html.index("Content-Security-Policy") < html.index("<script")


@pytest.mark.parametrize(
    "files, words",
    [
        ({"main.js": 'import { a } from "./js/missing.js";\n'}, ["./js/missing.js", "names no file"]),
        ({"main.js": 'import { a } from "../secret.js";\n'}, ["../secret.js", "outside the page's folder"]),
        ({"main.js": "", "css/style.css": "a { background: url(nothere.png) }"}, ["nothere.png", "names no file"]),
    ],
)
def test_a_broken_page_is_refused_by_name(tmp_path, files, words):
    (tmp_path / "secret.js").write_text("export const a = 1;\n")
    base = {"index.html": INDEX, "icon.svg": "<svg/>", "css/style.css": "", **files}
    with pytest.raises(BundleError) as err:
        inline_page(_page(tmp_path, base), {})
    assert all(w in str(err.value) for w in words), str(err.value)


def test_every_module_of_the_real_page_is_reached(tmp_path):
    """Each .js file of static/ that some module imports is in the graph from main.js."""
    root = find_static_dir()
    graph = module_graph(root, root / "main.js")
    imported = set()
    for path in root.rglob("*.js"):
        for spec in re.findall(r'from\s+"(\.{1,2}/[^"]+)"', path.read_text(encoding="utf-8")):
            imported.add((path.parent / spec).resolve().relative_to(root).as_posix())
    assert imported <= set(graph) and "js/io/lesson-file.js" in graph and "main.js" in graph
