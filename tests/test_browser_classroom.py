"""The page as a classroom instrument, in Debian's Chromium: keys always drive the
player, the address is the place (lesson, step, projector), nothing typed is lost."""

from __future__ import annotations


import pytest

from test_browser_helpers import (
    choose_preset,
    require_chromium,
    step_of,
    wait_complete,
    wait_until,
)

pytestmark = pytest.mark.browser

require_chromium()

from test_browser_helpers import base_url, browser, open_page  # noqa: E402,F401


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
    page.evaluate("window.convscope.seek(49)")
    page.keyboard.press("p")
    wait_until(page, "document.body.classList.contains('projector') && location.hash.includes('p=1')", 3)
    wait_until(page, "location.hash.startsWith('#s=49&')", 3)
    title = page.inner_text("#preset-sentence")
    assert title
    link = page.url
    assert "l=cs231n" in link

    def lands(p) -> None:
        wait_complete(p)
        assert p.evaluate("window.convscope.preset") == "cs231n"
        assert p.input_value("#preset") == "cs231n"
        assert p.inner_text("#preset-sentence") == title
        assert step_of(p) == 49
        assert p.evaluate("document.body.classList.contains('projector')")
        assert p.evaluate("location.hash").startswith("#s=49&")

    for _ in range(3):
        page.reload()
        lands(page)
    # a bookmark: a fresh tab opened on the address
    lands(open_page(link.removeprefix(base_url), viewport=(1366, 768)).page)
    # the address bar typed by hand (the fragment parts in another order)
    lands(open_page("/#l=cs231n&p=1&s=49", viewport=(1366, 768)).page)


def test_back_and_forward_move_between_setups_not_steps(open_page):
    page = open_page(viewport=(1366, 768)).page
    choose_preset(page, "cs231n")
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    wait_until(page, "location.hash.startsWith('#s=5&')", 3)
    choose_preset(page, "stride2")
    page.go_back()
    wait_until(page, "window.convscope.preset === 'cs231n' && window.convscope.complete && window.convscope.step === 5", 10)
    page.go_forward()
    wait_until(page, "window.convscope.preset === 'stride2' && window.convscope.complete", 10)
