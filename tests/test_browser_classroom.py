"""The page as a classroom instrument, in Debian's Chromium: keys always drive the
player, the address is the place (lesson, step, projector), nothing typed is lost."""

from __future__ import annotations

import pytest
from test_browser_helpers import (
    choose_preset,
    open_setup,
    require_chromium,
    step_of,
    wait_complete,
    wait_until,
)

pytestmark = pytest.mark.browser

require_chromium()


def _state(page) -> dict:
    return page.evaluate(
        "({step: window.convscope.step, playing: window.convscope.playing, preset: window.convscope.preset,"
        " menu: document.getElementById('preset').value, speed: document.getElementById('speed').value})"
    )


@pytest.mark.parametrize("menu", ["#preset", "#speed"])
def test_after_a_pick_in_a_menu_the_keys_drive_the_player_not_the_menu(open_page, menu):
    page = open_page(viewport=(1366, 768)).page
    page.focus(menu)
    if menu == "#preset":
        page.select_option(menu, "cs231n")
        wait_until(page, "window.convscope.preset === 'cs231n' && window.convscope.complete")
    else:
        page.select_option(menu, "1")
    before = _state(page)
    picked = page.input_value(menu)
    assert before["step"] == 0
    page.keyboard.press("PageDown")
    wait_until(page, "window.convscope.step === 1", 3)
    page.keyboard.press("ArrowRight")
    wait_until(page, "window.convscope.step === 2", 3)
    # focus back on the menu itself (a click on it): the keys still go to the player
    page.focus(menu)
    page.keyboard.press("PageDown")
    wait_until(page, "window.convscope.step === 3", 3)
    page.keyboard.press("ArrowRight")
    wait_until(page, "window.convscope.step === 4", 3)
    after = _state(page)
    assert (after["preset"], after["menu"], after["speed"]) == (before["preset"], before["menu"], before["speed"])
    page.keyboard.press(" ")
    wait_until(page, "window.convscope.playing", 3)
    page.keyboard.press(" ")
    wait_until(page, "!window.convscope.playing", 3)
    assert page.input_value(menu) == picked


def test_space_on_a_focused_button_plays_and_escape_leaves_a_field(open_page):
    page = open_page(viewport=(1366, 768)).page
    page.focus("#btn-next")
    page.keyboard.press(" ")
    wait_until(page, "window.convscope.playing", 3)
    page.keyboard.press(" ")
    wait_until(page, "!window.convscope.playing", 3)
    page.focus("#btn-play")
    page.keyboard.press(" ")
    wait_until(page, "window.convscope.playing", 3)
    page.keyboard.press("Space")
    wait_until(page, "!window.convscope.playing", 3)
    page.evaluate("window.convscope.seek(0)")
    # in a number field the keys are the field's; Escape hands them back
    if page.evaluate("document.body.classList.contains('setup-closed')"):
        page.click("#toggle-setup")
    page.focus("input[name=H]")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("PageDown")
    assert step_of(page) == 0
    page.keyboard.press("Escape")
    page.keyboard.press("PageDown")
    wait_until(page, "window.convscope.step === 1", 3)


def test_reloads_a_bookmark_and_a_typed_address_land_on_the_same_lesson_step_and_mode(open_page, base_url, browser):
    page = open_page(viewport=(1366, 768)).page
    choose_preset(page, "cs231n")
    page.evaluate("window.convscope.seek(35)")
    page.keyboard.press("p")
    wait_until(page, "document.body.classList.contains('projector') && location.hash.includes('p=1')", 3)
    wait_until(page, "location.hash.startsWith('#s=35&')", 3)
    title = page.inner_text("#preset-sentence")
    assert title
    link = page.url
    assert "l=cs231n" in link

    def lands(p) -> None:
        wait_complete(p)
        assert p.evaluate("window.convscope.preset") == "cs231n"
        assert p.input_value("#preset") == "cs231n"
        assert p.inner_text("#preset-sentence") == title
        # (the menu's title: the lesson's whole name where a narrow menu cuts it)
        assert p.get_attribute("#preset", "title") == p.evaluate(
            "document.getElementById('preset').selectedOptions[0].text"
        )
        assert step_of(p) == 35
        assert p.evaluate("document.body.classList.contains('projector')")
        assert p.evaluate("location.hash").startswith("#s=35&")

    for _ in range(3):
        page.reload()
        lands(page)
    # a bookmark: a fresh tab opened on the address
    lands(open_page(link.removeprefix(base_url), viewport=(1366, 768)).page)
    # the address bar typed by hand (the fragment parts in another order)
    lands(open_page("/#l=cs231n&p=1&s=35", viewport=(1366, 768)).page)


def test_an_address_from_outside_is_never_replaced_by_a_write_waiting_to_happen(open_page):
    """A step's address is written 150 ms after it. An address that comes from outside in
    between (typed, a link, a test's goto), before its popstate is handled, used to be
    replaced by that write: the popstate then read the old place, and the page stayed
    where it was (CI saw a phone test reload onto the previous step this way)."""
    page = open_page("/#s=5&l=cs231n").page
    kept = page.evaluate(
        """async () => {
          window.convscope.seek(6);
          history.replaceState(null, '', location.search + '#s=20&l=cs231n');
          await new Promise((r) => setTimeout(r, 400));
          const kept = location.hash;
          window.dispatchEvent(new PopStateEvent('popstate'));
          return kept;
        }"""
    )
    assert kept == "#s=20&l=cs231n"
    wait_until(page, "window.convscope.step === 20 && location.hash.startsWith('#s=20')", 10)


def test_back_and_forward_move_between_setups_not_steps(open_page):
    page = open_page(viewport=(1366, 768)).page
    choose_preset(page, "cs231n")
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    wait_until(page, "location.hash.startsWith('#s=5&')", 3)
    choose_preset(page, "stride2")
    page.go_back()
    wait_until(
        page, "window.convscope.preset === 'cs231n' && window.convscope.complete && window.convscope.step === 5", 10
    )
    page.go_forward()
    wait_until(page, "window.convscope.preset === 'stride2' && window.convscope.complete", 10)


# -- nothing typed is lost -------------------------------------------------------------


def _config(page) -> dict:
    return page.evaluate("window.convscope.config")


def _settled(page) -> None:
    wait_until(page, "window.convscope.complete")


def _stale(page) -> str:
    """The stage's banner when it shows the last good trace, not the form ('' if not),
    read after the next two frames: the page draws what an edit changed in the frame
    after it (one redraw per frame), and a read straight after the edit can come first."""
    return page.evaluate(
        """async () => {
             for (let k = 0; k < 2; k++) await new Promise((r) => requestAnimationFrame(r));
             const b = document.getElementById('stale');
             return b.hidden ? '' : b.textContent;
           }"""
    )


def _edit(page, name: str, value: str) -> None:
    page.fill(f'input[name="{name}"]', value)
    page.locator(f'input[name="{name}"]').blur()


def _open_editor(page, name: str) -> None:
    page.evaluate(f"document.querySelector('[data-editor={name}]').open = true")


def _paste(page, selector: str, text: str) -> None:
    page.evaluate(
        """([sel, text]) => { const dt = new DataTransfer(); dt.setData('text/plain', text);
             document.querySelector(sel).dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true})); }""",
        [selector, text],
    )


D2L_W = [[[[0, 1], [2, 3]]]]
D2L_X = [[[[0, 1, 2], [3, 4, 5], [6, 7, 8]]]]


def test_typed_values_survive_an_error_elsewhere_and_a_shape_away_and_back(open_page):
    page = open_page().page  # d2l: x and w are typed values
    assert _config(page)["w"] == D2L_W
    # KH 2 -> 5: the server refuses it; the stage says it shows the last good trace
    _edit(page, "KH", "5")
    page.locator('[data-error-for="w"]').wait_for(state="visible", timeout=5000)
    wait_until(page, "document.getElementById('badge').dataset.state === 'stale'", 5)
    assert "last good trace" in _stale(page)
    assert "last good trace" in page.inner_text("#badge")
    _edit(page, "KH", "2")
    _settled(page)
    assert _config(page)["w"] == D2L_W
    assert _stale(page) == ""
    # H -1 (refused here, never sent) and back to 3: x is the typed x
    _edit(page, "H", "-1")
    page.locator('[data-error-for="x"]').wait_for(state="visible", timeout=5000)
    assert "H must be at least 1; got -1" in page.inner_text('[data-error-for="x"]')
    assert "last good trace" in _stale(page)
    assert _marked(page) == ["H"]  # (the field typed, not every size of x)
    _edit(page, "H", "3")
    _settled(page)
    assert _config(page)["x"] == D2L_X
    assert _marked(page) == []
    # "e3", typed key by key: the number field cannot read it (its value is "", not the
    # text): said as such, not as empty, and the text stays for the student to mend (the
    # form's redraw used to put the last good H back, under "H is empty")
    page.locator('input[name="H"]').select_text()
    page.locator('input[name="H"]').press_sequentially("e3")
    page.locator('input[name="H"]').blur()
    page.locator('[data-error-for="x"]').wait_for(state="visible", timeout=5000)
    page.wait_for_timeout(300)
    assert "H as typed is not a number; type a whole number" in page.inner_text('[data-error-for="x"]')
    assert _marked(page) == ["H"]
    assert page.evaluate("document.querySelector('input[name=\"H\"]').validity.badInput")
    # another field's edit brings a new trace, and the form is shown from its setup: H
    # keeps what was typed, still refused (it used to get the setup's 3 back)
    _edit(page, "stride_w", "2")
    wait_until(page, "window.convscope.complete && window.convscope.config.stride[1] === 2", 10)
    page.wait_for_timeout(300)
    assert page.evaluate("document.querySelector('input[name=\"H\"]').validity.badInput")
    assert "H as typed is not a number" in page.inner_text('[data-error-for="x"]') and _marked(page) == ["H"]
    _edit(page, "stride_w", "1")
    _edit(page, "H", "3")
    _settled(page)
    assert _config(page)["x"] == D2L_X
    assert _marked(page) == []
    # C 100000: x would be past the server's limit; said on C with the numbers, never sent
    traces = []
    page.on("request", lambda r: "/api/trace" in r.url and traces.append(r.url))
    _edit(page, "C", "100000")
    page.locator('[data-error-for="x"]').wait_for(state="visible", timeout=5000)
    said = page.inner_text('[data-error-for="x"]')
    assert said.startswith("C = 100000 gives x 900,000 elements (N·C·H·W = 1·100000·3·3); the limit is "), said
    assert said.endswith(" per tensor"), said
    assert _marked(page) == ["C"] and traces == [], (_marked(page), traces)
    _edit(page, "C", "1")
    _settled(page)
    assert _config(page)["x"] == D2L_X and _marked(page) == []
    # a larger shape keeps every typed value and says so; back again, all of them return
    _edit(page, "W", "4")
    _settled(page)
    assert _config(page)["x"] == [[[[0, 1, 2, 0], [3, 4, 5, 0], [6, 7, 8, 0]]]]
    assert "x: 9 typed values kept, 3 new cells set to 0." in page.inner_text("#form-note")
    _edit(page, "W", "2")
    _settled(page)
    assert "3 set aside" in page.inner_text("#form-note")
    _edit(page, "W", "3")
    _settled(page)
    assert _config(page)["x"] == D2L_X


def _lesson_with_setup(open_page, lesson: str):
    """A page at 1366×768 on `lesson`, its trace whole and the setup drawer open."""
    page = open_page(f"/#l={lesson}", viewport=(1366, 768)).page
    wait_complete(page)
    open_setup(page)
    return page


def _type_cell(page, idx: str, text: str) -> None:
    """Type `text` into x's cell x[idx] and leave it (its change comes)."""
    cell = f'[data-editor="x"] input[aria-label="x[{idx}]"]'
    page.fill(cell, text)
    page.locator(cell).blur()


def _form_reads(page) -> dict:
    """What the setup form shows: some fields' text, the messages beside fields, and the
    x editor's first cells (a refused one ends in '!')."""
    return page.evaluate(
        """() => ({
          KH: document.querySelector('input[name=KH]').value,
          H: document.querySelector('input[name=H]').value,
          said: Array.from(document.querySelectorAll('#setup-form [data-error-for]')).filter((e) => !e.hidden)
            .map((e) => e.dataset.errorFor),
          cells: Array.from(document.querySelectorAll('[data-editor=x] .edit-grid input')).slice(0, 3)
            .map((i) => i.value + (i.getAttribute('aria-invalid') === 'true' ? '!' : '')),
          shown: JSON.stringify(window.convscope.state.trace),
        })"""
    )


def test_a_reload_keeps_what_the_form_held_over_the_last_good_trace(open_page):
    """A setup the server refuses, a field and a cell refused here and a cell typed while
    another is refused are none of them on the stage: the address keeps the lesson on
    screen (a step used to write the refused setup into it, and a reload then opened a
    stage with no trace at all), and a reload puts each back in the form, said again."""
    page = _lesson_with_setup(open_page, "d2l")
    _edit(page, "KH", "5")  # refused by the server
    page.locator('[data-error-for="w"]').wait_for(state="visible", timeout=5000)
    _edit(page, "H", "-1")  # refused here
    _open_editor(page, "x")
    _type_cell(page, "0,0,0,1", "abc")
    _type_cell(page, "0,0,0,2", "7")  # (no edit runs while a cell is refused)
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    wait_until(page, "window.convscope.step === 2 && location.hash.startsWith('#s=2&')", 5)
    assert "l=d2l" in page.evaluate("location.hash") and "c=" not in page.evaluate("location.hash")
    before = _form_reads(page)
    assert (before["KH"], before["H"], before["cells"]) == ("5", "-1", ["0", "abc!", "7"]), before
    for _ in range(2):
        page.reload()
        wait_complete(page)
        # the lesson's trace at its step, and over it the form as it was, its problems said
        wait_until(
            page,
            "window.convscope.step === 2 && document.querySelectorAll('[data-error-for]:not([hidden])').length >= 3",
            10,
        )
        after = _form_reads(page)
        assert (after["KH"], after["H"], after["cells"]) == ("5", "-1", ["0", "abc!", "7"]), after
        assert {"w", "x", "x_values"} <= set(after["said"]), after
        assert '"lesson":"d2l"' in after["shown"] and "last good trace" in _stale(page)
        assert "H" in _marked(page)
    # mended, the typed cell runs with the rest; the draft is gone, a reload shows the trace
    _edit(page, "KH", "2")
    _edit(page, "H", "3")
    _open_editor(page, "x")
    _type_cell(page, "0,0,0,1", "1")
    wait_until(
        page,
        "window.convscope.complete && JSON.stringify(window.convscope.config.x) === '[[[[0,1,7],[3,4,5],[6,7,8]]]]'",
        10,
    )
    wait_until(page, "sessionStorage.getItem('convscope.formDraft') === null", 5)
    page.reload()
    wait_complete(page)
    assert page.evaluate("JSON.stringify(window.convscope.config.x)") == "[[[[0,1,7],[3,4,5],[6,7,8]]]]"
    assert _marked(page) == [] and _stale(page) == ""
    # a draft is put back only over its own setup: another lesson's address opens clean
    _edit(page, "H", "0")
    page.locator('[data-error-for="x"]').wait_for(state="visible", timeout=5000)
    assert page.evaluate("sessionStorage.getItem('convscope.formDraft')")  # (kept, for d2l)
    page.goto(page.url.split("?")[0] + "?debug&again#l=cs231n")  # (the same tab: its session storage)
    wait_until(page, "window.convscope.preset === 'cs231n' && window.convscope.complete", 15)
    page.wait_for_timeout(300)
    assert _marked(page) == [] and page.input_value('input[name="H"]') != "0"


# each trace request waits 1.5 s before it is sent (the page's own fetch): a reload can
# then come while a lesson picked is on its way
SLOW_TRACES = """(() => { const send = window.fetch;
  window.fetch = async (...args) => {
    if (String(args[0]).includes('api/trace/stream')) await new Promise((r) => setTimeout(r, 1500));
    return send(...args);
  }; })()"""


def _draft(page):
    return page.evaluate("sessionStorage.getItem('convscope.formDraft')")


def test_a_lesson_picked_is_no_draft_of_the_lesson_before_it(open_page):
    """A lesson picked while the last one is on the stage is not a setup typed: a reload
    before its trace arrives used to open it as a custom setup (the draft of the old)."""
    page = open_page("/#l=d2l", viewport=(1366, 768)).page
    page.add_init_script(SLOW_TRACES)
    page.reload()
    wait_complete(page)
    page.select_option("#preset", "cs231n")
    page.wait_for_timeout(300)  # (its trace not yet asked for)
    assert page.evaluate("window.convscope.state.trace.lesson") == "d2l"
    assert _draft(page) is None
    page.reload()
    wait_complete(page)
    assert page.evaluate("window.convscope.preset") == "d2l" and page.input_value("#preset") == "d2l"


def test_a_new_lesson_of_the_same_shape_drops_refused_cells(open_page):
    """stride2 and flip both have x of 1×1×5×5: a refused cell of one used to stay in the
    other's grid (no message, the stage 'not the form'), and a reload said it again."""
    page = _lesson_with_setup(open_page, "stride2")
    _open_editor(page, "x")
    _type_cell(page, "0,0,0,1", "zz")
    page.locator('[data-error-for="x_values"]').wait_for(state="visible", timeout=5000)
    assert "last good trace" in _stale(page)
    choose_preset(page, "flip")
    page.wait_for_timeout(200)
    cells = page.evaluate(
        "Array.from(document.querySelectorAll('[data-editor=x] .edit-grid input'), (i) => i.value + (i.getAttribute('aria-invalid') || ''))"
    )
    assert "zz" not in "".join(cells) and "true" not in "".join(cells), cells
    assert _stale(page) == "" and _draft(page) is None
    assert not page.locator('[data-error-for="x_values"]').is_visible()


def test_a_mended_field_takes_the_stage_back_to_the_form(open_page):
    page = _lesson_with_setup(open_page, "d2l")
    _edit(page, "KH", "0")  # refused here: the stage says it shows the last good trace
    page.locator('[data-error-for="w"]').wait_for(state="visible", timeout=5000)
    assert "last good trace" in _stale(page)
    _edit(page, "KH", "1")  # mended: a new trace, and nothing says the form has an error
    wait_until(page, "window.convscope.complete && window.convscope.config.w[0][0].length === 1", 10)
    assert _stale(page) == "" and _marked(page) == []
    assert "not the form" not in page.inner_text("#badge")


def test_a_refused_cell_keeps_its_place_when_the_shape_grows_and_goes_when_it_shrinks(open_page):
    page = _lesson_with_setup(open_page, "d2l")
    _open_editor(page, "x")
    cell = '[data-editor="x"] input[aria-label="x[0,0,2,1]"]'
    _type_cell(page, "0,0,2,1", "abc")
    page.locator('[data-error-for="x_values"]').wait_for(state="visible", timeout=5000)
    _edit(page, "H", "4")  # x 1×1×4×3: x[0,0,2,1] is still there, still refused
    wait_until(page, "window.convscope.complete && window.convscope.config.x[0][0].length === 4", 10)
    page.wait_for_timeout(200)
    assert page.input_value(cell) == "abc" and page.get_attribute(cell, "aria-invalid") == "true"
    assert "x[0,0,2,1]" in page.inner_text('[data-error-for="x_values"]')
    _edit(page, "H", "2")  # x 1×1×2×3: the cell is gone, and its message with it
    wait_until(page, "window.convscope.complete && window.convscope.config.x[0][0].length === 2", 10)
    page.wait_for_timeout(200)
    assert not page.locator('[data-error-for="x_values"]').is_visible()
    assert _stale(page) == "" and _draft(page) is None


def test_back_over_a_field_being_typed_shows_the_setup_gone_back_to(open_page):
    page = _lesson_with_setup(open_page, "d2l")
    _edit(page, "KH", "1")
    wait_until(page, "window.convscope.complete && window.convscope.config.w[0][0].length === 1", 10)
    page.fill('input[name="KH"]', "0")  # refused, and the field keeps the focus
    page.locator('[data-error-for="w"]').wait_for(state="visible", timeout=5000)
    page.go_back()
    wait_until(page, "window.convscope.preset === 'd2l' && window.convscope.complete", 10)
    page.wait_for_timeout(200)
    assert page.input_value('input[name="KH"]') == "2"
    assert _marked(page) == [] and _stale(page) == ""


def test_a_cell_typed_and_not_yet_left_is_kept_over_a_reload(open_page):
    page = _lesson_with_setup(open_page, "d2l")
    _open_editor(page, "x")
    page.fill('[data-editor="x"] input[aria-label="x[0,0,1,1]"]', "9")  # (no Tab: no change yet)
    page.reload()
    wait_complete(page)
    wait_until(page, "window.convscope.complete && window.convscope.config.x[0][0][1][1] === 9", 10)


def test_the_address_follows_the_step_while_playing(open_page):
    """A reload during play lands near the step played to, not where play began (the
    address's write used to be put off by every step, and never came)."""
    page = open_page("/#l=cs231n", viewport=(1366, 768)).page
    wait_complete(page)
    page.keyboard.press("]")  # faster
    page.keyboard.press(" ")
    wait_until(page, "window.convscope.playing && window.convscope.step >= 6", 10)
    hash_step = wait_until(page, "window.convscope.playing && Number((location.hash.match(/s=(\\d+)/) || [])[1])", 5)
    assert hash_step >= 3, page.evaluate("location.hash")


def _marked(page) -> list[str]:
    """The setup form's controls marked invalid (outside the tensor editors' grids)."""
    return page.evaluate(
        "Array.from(document.querySelectorAll('#setup-form [aria-invalid=\"true\"]'))"
        ".filter((e) => !e.closest('.edit-grid')).map((e) => e.name)"
    )


def test_a_generator_and_back_restores_the_typed_values(open_page):
    page = open_page().page
    _open_editor(page, "w")
    page.select_option('select[name="w_fill"]', "ones")
    _settled(page)
    assert _config(page)["w"]["fill"] == "ones"
    page.select_option('select[name="w_fill"]', "values")
    _settled(page)
    assert _config(page)["w"] == D2L_W


def test_a_word_in_a_cell_is_marked_and_kept_with_a_message_naming_the_cell(open_page):
    page = open_page().page
    _open_editor(page, "x")
    cell = 'input[aria-label="x[0,0,0,1]"]'
    page.fill(cell, "abc")
    page.locator(cell).blur()
    assert page.get_attribute(cell, "aria-invalid") == "true"
    message = page.inner_text('[data-error-for="x_values"]')
    assert "x[0,0,0,1]" in message and '"abc"' in message, message
    assert "last good trace" in _stale(page)
    page.evaluate("window.convscope.seek(3)")
    assert page.input_value(cell) == "abc"  # never silently reverted
    assert _config(page)["x"] == D2L_X
    page.fill(cell, "7")
    page.locator(cell).blur()
    _settled(page)
    assert _config(page)["x"][0][0][0][1] == 7
    assert page.get_attribute(cell, "aria-invalid") is None
    assert _stale(page) == ""


def test_a_paste_with_a_word_or_too_many_values_is_refused_saying_why(open_page):
    page = open_page().page
    _open_editor(page, "x")
    first = 'input[aria-label="x[0,0,0,0]"]'
    _paste(page, first, "1 two 3")
    message = page.inner_text('[data-error-for="x_values"]')
    assert '"two"' in message and "token 2 of 3" in message, message
    _paste(page, first, " ".join(str(v) for v in range(10)))
    message = page.inner_text('[data-error-for="x_values"]')
    assert "10 values pasted, but only 9 cells" in message, message
    assert page.evaluate("window.convscope.complete")
    assert _config(page)["x"] == D2L_X  # nothing was pasted
    _paste(page, 'input[aria-label="x[0,0,2,0]"]', "-1 -2 -3")
    _settled(page)
    assert _config(page)["x"][0][0][2] == [-1, -2, -3]


def test_a_pasted_block_lands_as_rows_and_one_too_big_is_refused_with_its_size(open_page):
    page = open_page().page  # d2l: x is 3×3
    _open_editor(page, "x")
    _paste(page, 'input[aria-label="x[0,0,1,0]"]', "9 8\n6 5")
    _settled(page)
    assert _config(page)["x"] == [[[[0, 1, 2], [9, 8, 5], [6, 5, 8]]]]  # rows stay rows
    _paste(page, 'input[aria-label="x[0,0,2,1]"]', "1 2 3\n4 5 6")
    message = page.inner_text('[data-error-for="x_values"]')
    assert "The pasted block is 2×3; from x[0,0,2,1] there is room for 1×2. Nothing was pasted." in message, message
    assert _config(page)["x"] == [[[[0, 1, 2], [9, 8, 5], [6, 5, 8]]]]  # nothing was pasted


def test_a_refused_cell_is_marked_where_it_can_be_seen(open_page):
    page = open_page().page
    _open_editor(page, "x")
    cell = 'input[aria-label="x[0,0,0,1]"]'
    plain = page.evaluate(f"getComputedStyle(document.querySelector('{cell}')).borderTopWidth")
    page.fill(cell, "abc")
    page.locator(cell).blur()
    marked = page.evaluate(f"""(() => {{ const s = getComputedStyle(document.querySelector('{cell}'));
        return [s.borderTopWidth, s.borderTopColor, s.backgroundColor]; }})()""")
    other = page.evaluate("getComputedStyle(document.querySelector('input[aria-label=\"x[0,0,0,0]\"]')).borderTopColor")
    assert marked[0] == "2px" and plain != "2px", (plain, marked)
    assert marked[1] != other  # the colour of a write, not the grey of every cell


def test_a_non_integer_stride_is_refused_never_rounded(open_page):
    page = open_page().page
    _edit(page, "stride_h", "1.5")
    err = page.locator('[data-error-for="stride"]')
    err.wait_for(state="visible", timeout=5000)
    assert "stride h must be a whole number; got 1.5 (never rounded)" in err.inner_text()
    assert page.get_attribute('input[name="stride_h"]', "aria-invalid") == "true"
    assert "stride" not in _config(page) or _config(page)["stride"] == 1
    assert "last good trace" in _stale(page)


def test_every_menu_offers_what_the_server_publishes(open_page, base_url):
    import httpx

    meta = httpx.get(base_url + "/api/meta").json()
    page = open_page().page
    options = page.evaluate(
        """() => Object.fromEntries(Array.from(document.querySelectorAll('#setup-form select[name]'),
             (s) => [s.name, Array.from(s.options, (o) => [o.value, o.textContent])]))"""
    )
    want = {
        "activation": meta["activations"],
        "view": meta["views"],
        "layout": meta["choices"]["layout"],
        "granularity": meta["choices"]["granularity"],
        "backward": meta["choices"]["backward"],
        "phases": meta["choices"]["phases"],
        "padding_form": meta["padding_forms"],
        "padding_mode": meta["choices"]["padding_mode"],
    }
    for name, items in want.items():
        assert options[name] == [[c["name"], c["title"]] for c in items], name
    fills = [[f["name"], f["title"]] for f in meta["fills"]]
    for inp in meta["inputs"]:
        got = options[f"{inp['name']}_fill"]
        assert got[-1] == ["values", "typed values"]
        assert got[:-1] == ([["default", inp["null"]]] if inp["null"] else []) + fills, inp["name"]
    # the default setup's menus show the server's defaults
    page.select_option("#preset", "")
    for key in ("activation", "view", "granularity", "backward", "phases", "layout"):
        assert page.input_value(f'select[name="{key}"]') == meta["defaults"][key]


PHONE_JS = """async () => {
  const frames = async (n) => { for (let k = 0; k < n; k++) await new Promise((r) => requestAnimationFrame(r)); };
  await frames(4);
  const dockBottom = () => document.querySelector('.dock').getBoundingClientRect().bottom;
  const off = (c) => {
    const r = c.getBoundingClientRect();
    let box = {left: 0, top: dockBottom(), right: innerWidth, bottom: innerHeight};
    for (let e = c.parentElement; e && e !== document.documentElement; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== 'visible') { const b = e.getBoundingClientRect();
        box = {...box, left: Math.max(box.left, b.left), right: Math.min(box.right, b.right)}; }
    }
    return r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1;
  };
  // scroll the page to each group of cells in turn, as a student does (the page keeps
  // the player on top and follows sideways inside each tensor)
  const seen = {rd: {n: 0, off: []}, wr: {n: 0, off: []}};
  for (const cls of ['rd', 'wr']) {
    const all = Array.from(document.querySelectorAll(`.cell.${cls}`));
    for (const name of new Set(all.map((c) => c.dataset.tensor))) {
      const cells = all.filter((c) => c.dataset.tensor === name);
      // (twice: the player sticks to the top once the page scrolls, its bottom moves)
      for (let k = 0; k < 2; k++) {
        const top = Math.min(...cells.map((c) => c.getBoundingClientRect().top));
        window.scrollTo(0, window.scrollY + top - dockBottom() - 8);
        await frames(2);
      }
      seen[cls].n += cells.length;
      seen[cls].off.push(...cells.filter(off).map((c) => `${c.dataset.tensor}[${c.dataset.idx}]`));
    }
  }
  const targets = Array.from(document.querySelectorAll('.player button, .player select, #scrubber, .topbar button, .topbar select'))
    .filter((e) => e.getBoundingClientRect().width > 0)
    .map((e) => { const r = e.getBoundingClientRect(); return [e.id || e.className || e.tagName, Math.round(r.width), Math.round(r.height)]; });
  return {seen, small: targets.filter(([, w, h]) => w < 44 || h < 44)};
}"""


@pytest.mark.parametrize("lesson", ["d2l", "cs231n"])
def test_phone_shows_each_read_window_and_written_block_of_a_backward_step(open_page, base_url, lesson):
    import httpx

    doc = httpx.post(
        base_url + "/api/trace", json=httpx.get(f"{base_url}/api/presets/{lesson}").json()["config"]
    ).json()
    backward = next(p for p in doc["phases"] if p["name"] == "backward")
    step = backward["start"] + (backward["stop"] - backward["start"]) // 2
    page = open_page(f"/#s={step}&l={lesson}", viewport=(390, 844), is_mobile=True, has_touch=True).page
    assert step_of(page) == step
    got = page.evaluate(PHONE_JS)
    assert not got["small"], f"touch targets under 44 px: {got['small']}"
    off = {cls: got["seen"][cls]["off"] for cls in ("rd", "wr")}
    for cls in ("rd", "wr"):
        assert got["seen"][cls]["n"] and not off[cls], (cls, got["seen"][cls])


def test_a_page_opened_without_debug_loads_no_hooks(browser, base_url):
    """The test and benchmark handle (window.convscope, js/io/debug.js) loads only with
    ?debug; the page a class opens plays without it."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(base_url + "/#s=2&l=d2l")
    wait_until(page, "document.getElementById('badge').dataset.state === 'ok'")
    page.keyboard.press("ArrowRight")
    wait_until(page, "document.getElementById('step-counter').textContent.startsWith('step 4 /')")
    assert page.evaluate("typeof window.convscope") == "undefined"
    assert not [u for u in requests if "debug" in u], requests
    page.goto(base_url + "/?debug#s=2&l=d2l")
    wait_complete(page)
    assert page.evaluate("window.convscope.step") == 2
    assert any(u.endswith("/js/io/debug.js") for u in requests)
    context.close()
