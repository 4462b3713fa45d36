"""Follow mode on the page, in Debian's Chromium against the real server: a teacher's
page starts a class session and shows its join code; a student's page opened from the
join link follows the teacher's lesson and step, breaks away (B, or moving the player)
and rejoins on the teacher's current place; the secret is never in the student's page."""

from __future__ import annotations

import pytest

from test_browser_helpers import require_chromium, wait_complete, wait_until

pytestmark = pytest.mark.browser

require_chromium()

from test_browser_helpers import base_url, browser, open_page  # noqa: E402,F401


def _step(page) -> int:
    return page.evaluate("window.convscope.step")


def test_a_student_follows_the_teacher_breaks_away_and_rejoins(open_page, browser, base_url):
    teacher = open_page("/#s=0&l=d2l", viewport=(1366, 768)).page
    teacher.click("#class-session")
    wait_until(teacher, "!document.getElementById('follow-bar').hidden && document.querySelector('#follow-bar .join-code')")
    code = teacher.inner_text("#follow-bar .join-code")
    link = teacher.inner_text("#follow-bar code")
    assert link.endswith(f"/?follow={code}"), link
    teacher.keyboard.press("ArrowRight")
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "window.convscope.step === 2")

    context = browser.new_context(viewport={"width": 1366, "height": 768})
    student = context.new_page()
    sent: list[str] = []
    student.on("request", lambda r: sent.append((r.url, r.post_data or "")))
    student.goto(base_url + f"/?debug&follow={code}")
    wait_complete(student)
    wait_until(student, "window.convscope.preset === 'd2l' && window.convscope.step === 2")
    assert "Following the teacher" in student.inner_text("#follow-bar")
    # the teacher moves: the student's page follows
    teacher.keyboard.press("ArrowRight")
    wait_until(student, "window.convscope.step === 3", 5)
    # B breaks away: the teacher's steps no longer move the student's page
    student.locator("#stage").click(position={"x": 2, "y": 2})
    student.keyboard.press("b")
    wait_until(student, "document.getElementById('follow-bar').innerText.includes('Exploring on your own')")
    student.keyboard.press("Escape")
    teacher.keyboard.press("ArrowRight")
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "window.convscope.step === 5")
    student.wait_for_timeout(700)
    assert _step(student) == 3
    # rejoin lands on the teacher's current place, and a new lesson follows too
    student.click("#follow-action")
    wait_until(student, "window.convscope.step === 5", 5)
    teacher.select_option("#preset", "cs231n")
    wait_until(teacher, "window.convscope.preset === 'cs231n' && window.convscope.complete")
    wait_until(student, "window.convscope.preset === 'cs231n' && window.convscope.complete", 15)
    # moving the player by hand also breaks away
    student.keyboard.press("End")
    wait_until(student, "document.getElementById('follow-bar').innerText.includes('Exploring on your own')")
    # the secret is the teacher's page's alone: no request of the student's carries it,
    # and the teacher's page keeps it out of the address and the page state
    assert "secret" not in teacher.evaluate("JSON.stringify(window.convscope.state) + location.href")
    assert not [u for u, body in sent if "secret" in body or (u.startswith(base_url + "/api/follow/") and u.endswith("/state"))], sent
    context.close()
    # the teacher ends the session: the class is told
    student2 = browser.new_context().new_page()
    student2.goto(base_url + f"/?debug&follow={code}")
    wait_complete(student2)
    teacher.click("#follow-action")
    wait_until(student2, "document.getElementById('follow-bar').innerText.includes('ended the class session')", 5)
    student2.context.close()


def test_a_lost_publication_is_sent_again_and_a_refused_one_ends_the_session(open_page, browser, base_url):
    """A worker restarting or a network hiccup loses a PUT: the teacher's page sends the
    latest place again and the class still follows; a refusal (another page took over,
    the session ended) ends it with the server's word."""
    watch = open_page("/#s=0&l=d2l", viewport=(1366, 768))
    teacher = watch.page
    teacher.click("#class-session")
    wait_until(teacher, "document.querySelector('#follow-bar .join-code')")
    code = teacher.inner_text("#follow-bar .join-code")
    student = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    student.goto(base_url + f"/?debug&follow={code}")
    wait_complete(student)
    wait_until(student, "window.convscope.preset === 'd2l' && window.convscope.step === 0")
    lost = []

    def lose_two(route):
        if route.request.method == "PUT" and len(lost) < 2:
            lost.append(route.request.url)
            route.abort("connectionreset")
        else:
            route.continue_()

    teacher.route("**/api/follow/sessions/*/state", lose_two)
    teacher.locator("#stage").focus()
    teacher.keyboard.press("ArrowRight")
    teacher.keyboard.press("ArrowRight")
    wait_until(student, "window.convscope.step === 2", 10)
    assert len(lost) == 2
    assert "Class session" in teacher.inner_text("#follow-bar")  # (still the teacher's)
    # a refusal: the server says the session is gone
    teacher.unroute("**/api/follow/sessions/*/state")
    teacher.route("**/api/follow/sessions/*/state", lambda route: route.fulfill(status=404, content_type="application/json", body='{"detail": "no class session abc"}'))
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "document.getElementById('follow-bar').innerText.includes('The class session stopped')", 5)
    assert "no class session abc" in teacher.inner_text("#follow-bar")
    student.context.close()
    # (the two lost requests and the 404 are this test's own doing)
    watch.errors[:] = [e for e in watch.errors if "ERR_CONNECTION_RESET" not in e and "status of 404" not in e]
