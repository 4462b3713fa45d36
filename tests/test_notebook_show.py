"""``show()`` (convscope.notebook) builds the offline player a notebook displays: with
``code=True`` the embedded lesson opens with the code panel, a convention's name also
chooses the listing's style, and anything else is refused naming the field. (The player
in a browser: tests/test_notebook.py.)"""

from __future__ import annotations

import json

import pytest

from convcore.trace import build_trace
from convscope import show
from convscope.export.lesson import LESSON_ELEMENT
from convscope.traces.presets import PRESETS


def embedded(html: str) -> dict:
    tag = f'<script type="application/json" id="{LESSON_ELEMENT}">'
    start = html.index(tag) + len(tag)
    return json.loads(html[start : html.index("</script>", start)])


def header(lesson: dict) -> dict:
    return lesson["lines"][0]


def test_the_player_opens_with_the_code_when_asked():
    plain = embedded(show(preset="cs231n", display=False).html)
    with_code = embedded(show(preset="cs231n", code=True, display=False).html)
    assert (plain["code"], with_code["code"]) == (False, True)
    assert "code" not in with_code["preset"]["config"]  # the lesson's own convention: CS231n's
    assert header(with_code)["code"]["convention"] == "cs231n"
    assert header(with_code)["code"]["lines"] == build_trace(PRESETS["cs231n"].config)["code"]["lines"]


def test_a_convention_chooses_the_style():
    lesson = embedded(show([[[[1, 2], [3, 4]]]], [[[[1]]]], code="torch", display=False).html)
    assert lesson["code"] is True and lesson["preset"]["config"]["code"] == "torch"
    assert header(lesson)["code"]["name"].startswith("torch_style/forward_window")


@pytest.mark.parametrize(
    ("code", "words"),
    [("fortran", ["code", "fortran", "'cs231n'"]), (3, ["code: True, False or a convention", "3"])],
)
def test_another_code_is_refused_naming_the_field(code, words):
    with pytest.raises(ValueError) as caught:
        show(preset="cs231n", code=code, display=False)
    for word in words:
        assert word in str(caught.value)
