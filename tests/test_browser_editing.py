"""The setup's tensor editors in Debian's Chromium (issue 21): a pasted block of rows lands
as a block from the cell it is pasted on, whatever separates its numbers; a block that
does not fit, or holds an empty cell, is refused whole with a message saying why; a cell
refused as not a number is marked where it can be seen, until it is fixed.

Pastes are real clipboard events (a ClipboardEvent whose DataTransfer holds the text) on
the focused cell, as Ctrl+V or a phone's Paste sends them."""

from __future__ import annotations

import json

import pytest
from test_browser_helpers import lesson_path, require_chromium, wait_until

pytestmark = pytest.mark.browser

require_chromium()

# x (1, 1, 5, 5) typed: x[0,0,r,c] = 5r + c, every cell told apart from its neighbours
X = [[[[5 * r + c for c in range(5)] for r in range(5)]]]
SETUP = {"x": X, "w": [[[[0, 1], [2, 3]]]]}
PHONE = {"viewport": (390, 844), "is_mobile": True, "has_touch": True}
# what an edit waits for before it is traced (static/js/app/streaming.js), and some more
EDIT_PAUSE_MS = 1200


def _open(open_page, **kwargs):
    page = open_page(lesson_path(SETUP), **kwargs).page
    if page.get_attribute("#toggle-setup", "aria-expanded") == "false":
        page.click("#toggle-setup")  # a phone opens with the setup drawer shut
    page.evaluate("document.querySelector('[data-editor=x]').open = true")
    return page


def _cell(index: str) -> str:
    return f'[data-editor="x"] input[aria-label="x[{index}]"]'


def _paste(page, index: str, text: str) -> None:
    """Focus the cell x[index] and paste `text` into it as the clipboard would."""
    page.focus(_cell(index))
    page.evaluate(
        """(text) => { const dt = new DataTransfer(); dt.setData('text/plain', text);
             document.activeElement.dispatchEvent(new ClipboardEvent('paste',
               {clipboardData: dt, bubbles: true, cancelable: true})); }""",
        text,
    )


def _grid(page) -> list[list[str]]:
    """The x editor's cells as they read, row by row (its inputs, by data-idx)."""
    texts = page.evaluate(
        """() => Array.from(document.querySelectorAll('[data-editor="x"] .edit-grid input'))
             .sort((a, b) => a.dataset.idx - b.dataset.idx).map((i) => i.value)"""
    )
    assert len(texts) == 25, texts
    return [texts[5 * r : 5 * r + 5] for r in range(5)]


def _traced(page, x) -> None:
    """Wait until the trace on screen was made from x."""
    compact = json.dumps(json.dumps(x, separators=(",", ":")))
    wait_until(page, f"window.convscope.complete && JSON.stringify(window.convscope.config.x) === {compact}", 10)


def _message(page) -> str:
    box = page.locator('[data-error-for="x_values"]')
    return box.inner_text() if box.is_visible() else ""


def _with_block(rows: list[list[float]], at: tuple[int, int]) -> list:
    """X with `rows` written as a block from row, column `at`."""
    grid = [list(row) for row in X[0][0]]
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            grid[at[0] + r][at[1] + c] = v
    return [[grid]]


def _unchanged(page) -> None:
    """Nothing was pasted: not in the cells, not in the trace (even after the edit pause)."""
    page.wait_for_timeout(EDIT_PAUSE_MS)
    assert page.evaluate("window.convscope.config.x") == X
    assert _grid(page) == [[str(v) for v in row] for row in X[0][0]]


BLOCK = [[9, 8, 7], [6, 5, 4]]
BLOCK_TEXTS = {
    "spreadsheet": "9\t8\t7\r\n6\t5\t4\r\n",
    "commas": "9,8,7\n6,5,4",
    "spaces": "9 8 7\n6 5 4",
    "numpy-print": "[[9 8 7]\n [6 5 4]]",
    "numpy-repr": "array([[9, 8, 7],\n       [6, 5, 4]])",
    "list-of-lists": "[[9, 8, 7], [6, 5, 4]]",
    # NumPy wraps a row longer than its line width; the brackets say where rows end
    "numpy-wrapped-rows": "[[9. 8.\n  7.]\n [6. 5.\n  4.]]",
    "torch-print": "tensor([[9., 8., 7.],\n        [6., 5., 4.]], requires_grad=True)",
}


@pytest.mark.parametrize("form", list(BLOCK_TEXTS))
def test_a_pasted_block_lands_as_a_block_from_the_cell(open_page, form):
    page = _open(open_page)
    _paste(page, "0,0,1,0", BLOCK_TEXTS[form])
    want = _with_block(BLOCK, (1, 0))  # rows 1 and 2, columns 0-2; every other cell as it was
    _traced(page, want)
    assert _grid(page) == [[str(v) for v in row] for row in want[0][0]]
    assert _message(page) == ""


def test_a_pasted_block_lands_as_a_block_on_a_phone(open_page):
    page = _open(open_page, **PHONE)
    _paste(page, "0,0,3,2", "1\t2\t3\n4\t5\t6")  # to the grid's last row and column
    want = _with_block([[1, 2, 3], [4, 5, 6]], (3, 2))
    _traced(page, want)
    assert _grid(page) == [[str(v) for v in row] for row in want[0][0]]


def test_a_single_row_pastes_along_the_row_as_before(open_page):
    page = _open(open_page)
    _paste(page, "0,0,1,3", "9\t8\t7")  # two cells left in row 1: reading order goes on to row 2
    want = [[[[0, 1, 2, 3, 4], [5, 6, 7, 9, 8], [7, 11, 12, 13, 14], *X[0][0][3:]]]]
    _traced(page, want)
    assert _message(page) == ""


@pytest.mark.parametrize(
    ("index", "text", "size", "room"),
    [
        ("0,0,1,3", "1 2 3\n4 5 6", "2×3", "4×2"),  # too wide
        ("0,0,3,0", "1\n2\n3", "3×1", "2×5"),  # too tall: never into another slice
    ],
)
def test_a_block_that_does_not_fit_is_refused_naming_its_size_and_the_room(open_page, index, text, size, room):
    page = _open(open_page)
    _paste(page, index, text)
    message = _message(page)
    assert f"The pasted block is {size}; from x[{index}] there is room for {room}." in message, message
    assert "Nothing was pasted" in message, message
    _unchanged(page)
    assert _message(page) == message  # still said, after the pause an edit waits for


def test_a_spreadsheet_block_with_an_empty_cell_is_refused_not_shifted(open_page):
    page = _open(open_page)
    _paste(page, "0,0,1,0", "9\t\t7\n6\t5\t4")
    message = _message(page)
    assert "x[0,0,1,0] refused" in message and "row 1, column 2 of the pasted block is empty" in message, message
    _unchanged(page)


def _look(page, index: str) -> dict:
    return page.evaluate(
        """(sel) => { const c = document.querySelector(sel); const s = getComputedStyle(c);
             return {width: s.borderTopWidth, style: s.borderTopStyle, colour: s.borderTopColor,
                     invalid: c.getAttribute('aria-invalid')}; }""",
        _cell(index),
    )


@pytest.mark.parametrize("screen", ["laptop", "phone"])
def test_a_refused_cell_is_marked_red_until_it_is_fixed(open_page, screen):
    page = _open(open_page, **(PHONE if screen == "phone" else {"viewport": (1366, 768)}))
    plain = _look(page, "0,0,0,1")
    # typed from the keyboard: the word, then Tab on to the next cell
    page.focus(_cell("0,0,0,1"))
    page.keyboard.press("Control+A")
    page.keyboard.type("abc")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "x[0,0,0,2]"
    marked = _look(page, "0,0,0,1")
    write = page.evaluate("getComputedStyle(document.body).getPropertyValue('--write').trim()")
    assert marked["invalid"] == "true"
    assert marked["width"] == "2px" and marked["style"] == "solid", marked
    assert marked["colour"] != plain["colour"] and plain["width"] == "1px", (plain, marked)
    # the colour is the page's --write (reddish), resolved as the browser resolves it
    probe = page.evaluate(
        """(c) => { const d = document.createElement('div'); d.style.color = c; document.body.append(d);
             const v = getComputedStyle(d).color; d.remove(); return v; }""",
        write,
    )
    assert marked["colour"] == probe, (marked, write, probe)
    assert "x[0,0,0,1]" in _message(page) and '"abc"' in _message(page)
    assert _look(page, "0,0,0,0")["width"] == "1px"  # only the refused cell
    # fixed: the mark and the message go
    page.fill(_cell("0,0,0,1"), "7")
    page.keyboard.press("Tab")
    want = [[[[0, 7, 2, 3, 4], *X[0][0][1:]]]]
    _traced(page, want)
    assert _look(page, "0,0,0,1") == plain
    assert _message(page) == ""


def test_a_generator_picked_over_a_refused_cell_clears_its_mark(open_page):
    page = _open(open_page)
    page.fill(_cell("0,0,0,1"), "abc")
    page.locator(_cell("0,0,0,1")).blur()
    assert _look(page, "0,0,0,1")["invalid"] == "true"
    page.select_option('select[name="x_fill"]', "ones")
    wait_until(page, "window.convscope.complete && window.convscope.config.x.fill === 'ones'", 10)
    # every cell now shows the generator's values: none is refused, nothing is said wrong
    assert _look(page, "0,0,0,1")["invalid"] is None
    assert _grid(page) == [["1"] * 5] * 5
    assert _message(page) == ""
    # (the badge is drawn in the next animation frame after the form reports no problem,
    # which a loaded machine can hold back past the reads above)
    wait_until(page, "document.getElementById('badge').dataset.state !== 'stale'", 5)


def test_ctrl_v_from_the_keyboard_pastes_a_block_and_a_refused_one_leaves_the_cell_alone(open_page):
    # the browser's own paste (Ctrl+V, trusted): had the page not refused it, the text
    # would land in the focused cell
    page = _open(open_page, permissions=["clipboard-read", "clipboard-write"])
    page.focus(_cell("0,0,1,3"))
    page.evaluate("navigator.clipboard.writeText('1\\t2\\t3\\n4\\t5\\t6')")
    page.keyboard.press("Control+V")
    assert "The pasted block is 2×3; from x[0,0,1,3] there is room for 4×2." in _message(page)
    _unchanged(page)
    page.focus(_cell("0,0,1,0"))
    page.keyboard.press("Control+V")
    want = _with_block([[1, 2, 3], [4, 5, 6]], (1, 0))
    _traced(page, want)
    assert _grid(page) == [[str(v) for v in row] for row in want[0][0]]
