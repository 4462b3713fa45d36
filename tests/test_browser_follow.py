"""Follow mode on the page, in Debian's Chromium against the real server: a teacher's
page starts a class session and shows its join code; a student's page opened from the
join link follows the teacher's lesson and step, breaks away (B, or moving the player)
and rejoins on the teacher's current place; the secret is never in the student's page."""

from __future__ import annotations

import io
import json
import time

import httpx
import pytest
import zxingcpp  # the test extra: an independent QR decoder
from PIL import Image
from test_browser_helpers import TEACHER_TOKEN, require_chromium, wait_complete, wait_until

pytestmark = pytest.mark.browser

require_chromium()


def _step(page) -> int:
    return page.evaluate("window.convscope.step")


def test_a_student_follows_the_teacher_breaks_away_and_rejoins(open_page, browser, base_url):
    teacher = open_page(f"/?teacher={TEACHER_TOKEN}#s=0&l=d2l", viewport=(1366, 768)).page
    assert TEACHER_TOKEN not in teacher.url  # the page took it out of its address
    teacher.click("#class-session")
    wait_until(
        teacher, "!document.getElementById('follow-bar').hidden && document.querySelector('#follow-bar .join-code')"
    )
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
    assert not [
        u for u, body in sent if "secret" in body or (u.startswith(base_url + "/api/follow/") and u.endswith("/state"))
    ], sent
    # nor the teacher token: not in the join link, the student's requests or address
    assert TEACHER_TOKEN not in link and TEACHER_TOKEN not in str(sent) and TEACHER_TOKEN not in student.url
    context.close()
    # the teacher ends the session: the class is told
    student2 = browser.new_context().new_page()
    student2.goto(base_url + f"/?debug&follow={code}")
    wait_complete(student2)
    teacher.click("#follow-action")
    wait_until(student2, "document.getElementById('follow-bar').innerText.includes('ended the class session')", 5)
    student2.context.close()


# the QR image is loaded, and nothing covers it: on a phone the page's own follow-scroll
# (the frames after a load) moves it, and the docked player sticks over the page's top
_QR_SHOWN = """(() => {
  const i = document.querySelector('#follow-bar img.join-qr');
  if (!i || !i.complete || !i.naturalWidth) return false;
  const r = i.getBoundingClientRect();
  const at = (x, y) => document.elementFromPoint(x, y) === i;
  const shown = r.top >= 0 && r.bottom <= innerHeight && at(r.left + 2, r.top + 2) && at(r.right - 2, r.top + 2)
    && at(r.left + 2, r.bottom - 2) && at(r.right - 2, r.bottom - 2);
  if (!shown) i.scrollIntoView({block: 'center'});  // (below the dock; polled again)
  return shown;
})()"""


def _qr_on_screen(page) -> str:
    """The text the page's QR code holds, read from a screenshot of it by zxing-cpp, once
    the page has settled (its follow-scroll done) and the code is whole on screen."""
    page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))")
    wait_until(page, _QR_SHOWN)
    shot = Image.open(io.BytesIO(page.locator("#follow-bar img.join-qr").screenshot()))
    found = zxingcpp.read_barcodes(shot)
    assert len(found) == 1, f"{len(found)} codes read from a {shot.size} screenshot"
    return found[0].text


@pytest.mark.parametrize("viewport", [(1366, 768), (390, 844)])
def test_the_join_qr_code_on_screen_reads_as_the_link_the_page_shows(open_page, viewport):
    teacher = open_page(f"/?teacher={TEACHER_TOKEN}#s=0&l=d2l", viewport=viewport).page
    teacher.click("#class-session")
    wait_until(teacher, "document.querySelector('#follow-bar .join-code')")
    link = teacher.inner_text("#follow-bar code")
    assert _qr_on_screen(teacher) == link
    box = teacher.locator("#follow-bar img.join-qr").bounding_box()
    assert box["width"] >= 100 and box["width"] == box["height"]  # big enough to scan from a seat
    # a reload keeps the session, its link and its code
    teacher.reload()
    wait_complete(teacher)
    wait_until(teacher, "document.querySelector('#follow-bar .join-code')", 10)
    assert teacher.inner_text("#follow-bar code") == link
    assert _qr_on_screen(teacher) == link


def _a_class_of_one(open_page, browser, base_url):
    """A teacher's page (its PageWatch) in a class session on d2l at 1366×768, and one
    student's page following it at step 0."""
    watch = open_page(f"/?teacher={TEACHER_TOKEN}#s=0&l=d2l", viewport=(1366, 768))
    watch.page.click("#class-session")
    wait_until(watch.page, "document.querySelector('#follow-bar .join-code')")
    code = watch.page.inner_text("#follow-bar .join-code")
    student = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    student.goto(base_url + f"/?debug&follow={code}")
    wait_complete(student)
    wait_until(student, "window.convscope.preset === 'd2l' && window.convscope.step === 0")
    return watch, student


def test_a_lost_publication_is_sent_again_and_a_refused_one_ends_the_session(open_page, browser, base_url):
    """A worker restarting or a network hiccup loses a PUT: the teacher's page sends the
    latest place again and the class still follows; a refusal (another page took over,
    the session ended) ends it with the server's word."""
    watch, student = _a_class_of_one(open_page, browser, base_url)
    teacher = watch.page
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
    teacher.route(
        "**/api/follow/sessions/*/state",
        lambda route: route.fulfill(
            status=404, content_type="application/json", body='{"detail": "no class session abc"}'
        ),
    )
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "document.getElementById('follow-bar').innerText.includes('The class session stopped')", 5)
    assert "no class session abc" in teacher.inner_text("#follow-bar")
    student.context.close()
    # (the two lost requests and the 404 are this test's own doing)
    watch.errors[:] = [e for e in watch.errors if "ERR_CONNECTION_RESET" not in e and "status of 404" not in e]


def test_a_publication_without_a_reply_is_given_up_and_the_class_still_follows(open_page, browser, base_url):
    """A PUT whose reply never comes (a connection dropped without a word, as a room's
    Wi-Fi does) held every later step and the heartbeat, since a fetch waits for minutes:
    the page gives it up after its deadline (8 s) and sends the latest place again."""
    watch, student = _a_class_of_one(open_page, browser, base_url)
    teacher = watch.page
    held = []

    def hold_one(route):
        if route.request.method == "PUT" and not held:
            held.append(time.monotonic())  # (neither answered nor refused: it hangs)
        else:
            route.continue_()

    teacher.route("**/api/follow/sessions/*/state", hold_one)
    teacher.locator("#stage").focus()
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "window.convscope.step === 1")
    teacher.keyboard.press("ArrowRight")
    wait_until(student, "window.convscope.step === 2", 20)
    waited = time.monotonic() - held[0]
    assert len(held) == 1 and 7 < waited < 20, (held, waited)
    assert "Class session" in teacher.inner_text("#follow-bar")  # (still the teacher's)
    # the heartbeat goes on after it: the count of who follows is the server's again
    wait_until(teacher, "document.getElementById('follow-bar').innerText.includes('1 following')", 10)
    teacher.unroute("**/api/follow/sessions/*/state")
    student.context.close()


def test_a_page_without_the_teacher_token_cannot_open_a_class_session(open_page):
    """A student's join link (or the plain address) opens the page but not a session:
    Class says what is missing; the server refused it with a 401."""
    watch = open_page("/#s=0&l=d2l", viewport=(1366, 768))
    page = watch.page
    page.evaluate("localStorage.removeItem('convscope.teacherToken')")
    answers: list[int] = []
    page.on("response", lambda r: answers.append(r.status) if r.url.endswith("/api/follow/sessions") else None)
    page.click("#class-session")
    wait_until(page, "document.body.innerText.includes('teacher token')", 5)
    assert answers == [401]
    assert page.locator("#follow-bar .join-code").count() == 0
    watch.errors[:] = [e for e in watch.errors if "status of 401" not in e]  # (Chromium logs the refusal)


def _start_class(open_page):
    watch = open_page(f"/?teacher={TEACHER_TOKEN}#s=0&l=d2l", viewport=(1366, 768))
    teacher = watch.page
    teacher.click("#class-session")
    wait_until(teacher, "document.querySelector('#follow-bar .join-code')")
    return watch, teacher, teacher.inner_text("#follow-bar .join-code")


def _student(browser, base_url: str, code: str, slow: float = 0.0):
    """A student's page following ``code``; ``slow``: seconds each trace takes to start
    arriving (a classroom's Wi-Fi)."""
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    if slow:
        page.route("**/api/trace/stream", lambda route: (time.sleep(slow), route.continue_()))
    page.goto(base_url + f"/?debug&follow={code}")
    wait_complete(page)
    return page


def _bar(page) -> str:
    return page.inner_text("#follow-bar")


def test_a_teacher_who_reloads_keeps_the_session_and_the_class_follows_on(open_page, browser, base_url):
    _, teacher, code = _start_class(open_page)
    student = _student(browser, base_url, code)
    wait_until(student, "window.convscope.preset === 'd2l' && window.convscope.step === 0")
    teacher.keyboard.press("ArrowRight")
    wait_until(student, "window.convscope.step === 1", 5)
    wait_until(teacher, "document.getElementById('follow-bar').innerText.includes('1 following')", 10)
    teacher.reload()
    wait_complete(teacher)
    # the same session, driven by the reloaded page: the same code on its bar
    wait_until(teacher, f"document.querySelector('#follow-bar .join-code')?.textContent === '{code}'", 10)
    start = teacher.evaluate("window.convscope.step")  # (the address it reloaded may lag a step)
    teacher.locator("#stage").click(position={"x": 2, "y": 2})
    teacher.keyboard.press("ArrowRight")
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, f"window.convscope.step === {start + 2}")
    wait_until(student, f"window.convscope.step === {start + 2}", 5)
    assert "Following the teacher" in _bar(student)
    # the kept secret is this tab's own: not in its address or its page state
    assert "secret" not in teacher.evaluate("JSON.stringify(window.convscope.state) + location.href")
    student.context.close()


def test_students_are_told_within_10_s_when_the_teacher_has_left(open_page, browser, base_url):
    watch, teacher, code = _start_class(open_page)
    student = _student(browser, base_url, code)
    wait_until(student, "window.convscope.preset === 'd2l'")
    # a quiet teacher is not a gone one: the heartbeat keeps the students following
    student.wait_for_timeout(12_000)
    assert "Following the teacher" in _bar(student), _bar(student)
    teacher.close()
    closed = time.monotonic()
    wait_until(student, "document.getElementById('follow-bar').innerText.includes('The teacher has left')", 16)
    took = time.monotonic() - closed
    # the heartbeat comes every 4 s: the last one at most 4 s before the close, and the
    # student says so 10 s after the last it heard
    assert took < 4 + 10 + 1, took
    student.context.close()


def test_ten_rapid_lesson_switches_leave_each_student_on_the_teachers_lesson_and_step(open_page, browser, base_url):
    _, teacher, code = _start_class(open_page)
    # one student on a slow network: the teacher's next places come while its lesson loads
    students = [_student(browser, base_url, code), _student(browser, base_url, code, slow=0.4)]
    for s in students:
        wait_until(s, "window.convscope.preset === 'd2l'")
    lessons = ["cs231n", "d2l", "stride2", "cs231n", "depthwise", "d2l", "cs231n", "stride2", "depthwise", "cs231n"]
    for k, lesson in enumerate(lessons):
        teacher.locator("#stage").click(position={"x": 2, "y": 2})
        teacher.keyboard.press("End")  # deep into the lesson: its step must not leak into the next
        teacher.wait_for_timeout(150)
        teacher.select_option("#preset", lesson)
        teacher.locator("#stage").click(position={"x": 2, "y": 2})
        for _ in range(k % 3 + 1):  # a step or three at once, while the lesson may still load
            teacher.keyboard.press("ArrowRight")
        wait_until(teacher, f"window.convscope.preset === '{lesson}' && window.convscope.complete")
        want = teacher.evaluate("window.convscope.step")
        for s in students:
            wait_until(
                s,
                f"window.convscope.preset === '{lesson}' && window.convscope.complete "
                f"&& window.convscope.step === {want}",
                10,
            )
            assert "Following the teacher" in _bar(s), _bar(s)
    for s in students:
        s.context.close()


def test_a_student_who_picks_a_lesson_has_broken_away_and_the_bar_says_so(open_page, browser, base_url):
    _, teacher, code = _start_class(open_page)
    student = _student(browser, base_url, code)
    wait_until(student, "window.convscope.preset === 'd2l'")
    student.select_option("#preset", "cs231n")
    wait_until(student, "document.getElementById('follow-bar').innerText.includes('Exploring on your own')", 5)
    teacher.locator("#stage").click(position={"x": 2, "y": 2})
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "window.convscope.step === 1")
    student.wait_for_timeout(700)
    assert student.evaluate("window.convscope.preset") == "cs231n"  # not overwritten
    student.context.close()


def test_a_place_that_comes_while_a_lesson_loads_is_applied_after_it_and_the_latest_wins(open_page, browser, base_url):
    """The teacher's states {lesson B, step 30} then {lesson B, step 1}, 50 ms apart,
    reach a student whose lesson takes 0.4 s to start loading: it ends on step 1."""
    watch, teacher, code = _start_class(open_page)
    kept = json.loads(teacher.evaluate("sessionStorage.getItem('convscope.classSession')"))
    student = _student(browser, base_url, code, slow=0.4)
    wait_until(student, "window.convscope.preset === 'd2l'")
    teacher.close()  # (its heartbeat would send its own place again)
    url = f"{base_url}/api/follow/sessions/{kept['session']}/state"
    for lesson, steps in (("stride2", (30, 1)), ("cs231n", (30, 2)), ("depthwise", (25, 3))):
        for step in steps:
            answer = httpx.put(
                url, json={"secret": kept["secret"], "driver": 1, "state": {"lesson": lesson, "step": step}}
            )
            assert answer.status_code == 200, answer.text
            time.sleep(0.05)
        wait_until(student, f"window.convscope.preset === '{lesson}' && window.convscope.complete", 10)
        student.wait_for_timeout(800)
        assert student.evaluate("window.convscope.step") == steps[-1], (
            lesson,
            student.evaluate("window.convscope.step"),
        )
    student.context.close()


def test_a_setup_too_large_to_share_is_said_and_the_session_goes_on(browser):
    """A state over the server's limit (here 1,000 bytes) gets 413: the teacher's page
    says so, sends it no more, and the class follows the next lesson as usual."""
    from test_browser_helpers import lesson_path, live_server

    big = {"x": [[[[float(i * 20 + j) for j in range(20)] for i in range(20)]]], "w": [[[[1.0, 0.0], [0.0, -1.0]]]]}
    with live_server(follow_max_state_bytes=1000) as base:
        teacher = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
        teacher.goto(base + f"/?debug&teacher={TEACHER_TOKEN}#s=0&l=d2l")
        wait_complete(teacher)
        teacher.click("#class-session")
        wait_until(teacher, "document.querySelector('#follow-bar .join-code')")
        code = teacher.inner_text("#follow-bar .join-code")
        student = _student(browser, base, code)
        wait_until(student, "window.convscope.preset === 'd2l'")
        puts: list[int] = []
        teacher.on("response", lambda r: puts.append(r.status) if r.url.endswith("/state") else None)
        teacher.evaluate(f"location.hash = {lesson_path(big)[1:]!r}")  # a custom setup, too large to share
        wait_until(teacher, "document.getElementById('follow-bar').innerText.includes('too large to share')", 10)
        teacher.wait_for_timeout(6000)  # a heartbeat's time: the state is not sent again
        assert puts.count(413) == 1, puts
        teacher.select_option("#preset", "stride2")
        wait_until(student, "window.convscope.preset === 'stride2'", 10)
        assert "End session" in teacher.inner_text("#follow-bar")
        student.context.close()
        teacher.context.close()
