"""Take the README's screenshots of the page.

    .venv/bin/python docs/screenshots/take_screenshots.py [screens] [follow] [views] [lab] [teach] [grader] [code] [trace] [predict] [class]

Starts the real app under uvicorn on a free loopback port and drives Debian's Chromium:
- {cs231n,depthwise}-{1024x768,1366x768,1920x1080,projector-{1024x768,1280x720,1920x1080},
  phone-390x844}.png:
  a backward step of the CS231n and the depthwise lessons on each classroom screen, each
  opened from its address (lesson, step, projector) as a bookmark would;
- page-1920x1080.png, projector-1920x1080.png, phone-390x844.png: CS231n's for the README;
- im2col-1920x1080.png, transposed-1920x1080.png: the two other views mid-backward;
- follow-teacher-1366x768.png, follow-student-1366x768.png: a class session's join screen
  (code, link, QR code) and a student's page following it; inspector-1366x768.png;
- mistake-divergence-1366x768.png: a mistake lesson (index grids that assume stride 1)
  at its first divergence; compare-1366x768.png: CS231n with a student's dx pasted, five
  of its cells wrong;
- dead-relu-1366x768.png: the nhwc_relu lesson at a backward step whose dz is 0 (its
  writes drawn as dead +0); stride2-gaps-1366x768.png: the stride2 lesson's last step,
  dx's never-reached cells marked; custom-follow-1366x768.png: a custom setup too large
  to fit whole (4 channels, 3 filters) at a backward step, each column following it;
- class-report-1366x768.png: `convscope check FOLDER --class-report` on a class of 33;
- code-cs231n-{1920x1080,1366x768,projector-1280x720,phone-390x844}.png: the code panel
  (C) at a backward step; code-assign_dx-1920x1080.png: a mistake's lines at its first
  divergence;
- code-trace-1366x768.png: a student's own code (student_width_stride.py) traced with
  `convscope trace-code`, at its first wrong write;
- predict-phone-390x844.png, predict-verdict-1366x768.png: Predict (Q) on CS231n's
  forward, a step's question on a phone, and a wrong answer's verdict at 1366x768;
- class-question-phone-390x844.png, class-answers-projector-1920x1080.png: a class
  question (A) on a student's phone, and the answers of a class of 12 revealed on the
  teacher's projector (three forgot the bias: the mistake is named).
With no argument it takes them all.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from playwright.sync_api import sync_playwright  # noqa: E402
from test_browser_helpers import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    IM2COL,
    TEACHER_TOKEN,
    debug_url,
    lesson_path,
    live_server,
    randint,
    wait_complete,
    wait_until,
)

OUT = Path(__file__).resolve().parent


TRANSPOSED = {
    "view": "transposed",
    "x": randint([1, 1, 5, 5], -2, 2, 13),
    "w": randint([1, 1, 3, 3], -1, 1, 14),
    "stride": 2,
    "padding": 1,
    "dout": randint([1, 1, 3, 3], -2, 2, 15),
}


def open_lesson(browser, base, viewport, path="/", preset=None, **ctx):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, **ctx)
    page = context.new_page()
    page.emulate_media(reduced_motion="reduce")  # no flash caught half-way
    page.goto(debug_url(base + path))
    wait_complete(page)
    if preset:
        page.select_option("#preset", preset)
        wait_until(
            page, f"window.convscope.preset === '{preset}' && window.convscope.complete && window.convscope.step === 0"
        )
    return context, page


def phase_step(page, phase, offset):
    """The step `offset` events into `phase`."""
    return page.evaluate(f"window.convscope.document().phases.find((p) => p.name === '{phase}').start") + offset


def settle(page):
    page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))")


def save(page, name):
    settle(page)
    page.screenshot(path=str(OUT / name))
    print("wrote", OUT / name)


SCREENS = [
    ("1024x768", (1024, 768), False),
    ("1366x768", (1366, 768), False),
    ("1920x1080", (1920, 1080), False),
    ("projector-1024x768", (1024, 768), True),
    ("projector-1280x720", (1280, 720), True),
    ("projector-1920x1080", (1920, 1080), True),
    ("phone-390x844", (390, 844), False),
]


def screens(browser, base) -> None:
    for lesson, offset in (("cs231n", 13), ("depthwise", 5)):
        for name, viewport, projector in SCREENS:
            phone = viewport[0] < 600
            extra = {"is_mobile": True, "has_touch": True, "device_scale_factor": 2} if phone else {}
            context, page = open_lesson(browser, base, viewport, f"/#s=0&l={lesson}", **extra)
            step = phase_step(page, "backward", offset)
            context.close()
            context, page = open_lesson(
                browser, base, viewport, f"/#s={step}&l={lesson}{'&p=1' if projector else ''}", **extra
            )
            # (a phone's page has scrolled the step's written cells under the docked player)
            save(page, f"{lesson}-{name}.png")
            if lesson == "cs231n" and name in ("1920x1080", "projector-1920x1080", "phone-390x844"):
                save(
                    page,
                    "page-1920x1080.png" if name == "1920x1080" else f"{name}.png".replace("projector-", "projector-"),
                )
            context.close()


def follow(browser, base) -> None:
    # follow mode: the teacher's join screen, a student's page following it, and the
    # inspector on a dx cell (CS231n, backward)
    context, teacher = open_lesson(browser, base, (1366, 768), f"/?teacher={TEACHER_TOKEN}#s=37&l=cs231n")
    teacher.click("#class-session")
    wait_until(teacher, "document.querySelector('#follow-bar .join-code')")
    code = teacher.inner_text("#follow-bar .join-code")
    student_context, student = open_lesson(browser, base, (1366, 768), f"/?follow={code}")
    wait_until(student, "window.convscope.preset === 'cs231n' && window.convscope.step === 37")
    save(student, "follow-student-1366x768.png")
    # the teacher's bar counts the class at its next publication (the heartbeat: 4 s)
    wait_until(teacher, "document.getElementById('follow-bar').innerText.includes('1 following')", 8)
    save(teacher, "follow-teacher-1366x768.png")
    student_context.close()
    teacher.click("#follow-action")
    teacher.click('.cell[data-tensor="dxp"][data-idx="16"]')
    wait_until(teacher, "document.getElementById('inspector').open")
    teacher.mouse.move(2, 300)  # (off the stage: the hover's dimming goes)
    teacher.locator("#insp-torch summary").click()  # the PyTorch lines open
    save(teacher, "inspector-1366x768.png")
    context.close()


def views(browser, base) -> None:
    for name, config, phase, offset in (("im2col", IM2COL, "col2im", 4), ("transposed", TRANSPOSED, "dx", 24)):
        context, page = open_lesson(browser, base, (1920, 1080), lesson_path(config))
        page.evaluate(f"window.convscope.seek({phase_step(page, phase, offset)})")
        save(page, f"{name}-1920x1080.png")
        context.close()


def layers(browser, base) -> None:
    """The layers beside Conv2d's defaults: reflect padding's gradient folding back (the
    fold step of the row that two padding rows mirror), a true convolution's flip, the
    transposed layer's stamps and the checkerboard of their overlaps, a causal Conv1d's
    window over the sequence and its gradient flowing back in time."""
    for name, lesson, phase, offset, viewport in (
        ("reflect-fold", "reflect_edge", "fold", 1, (1366, 768)),
        ("reflect-pad", "reflect_edge", "pad", 0, (1366, 768)),
        ("flip", "flip", "forward", 12, (1366, 768)),
        ("transposed-stamp", "gan_upsample", "stamp", 11, (1366, 768)),
        ("transposed-overlaps", "gan_upsample", "crop", 0, (1920, 1080)),
        ("causal-conv1d", "causal_audio", "forward", 4, (1366, 768)),
        ("causal-conv1d-backward", "causal_audio", "backward", 3, (1366, 768)),
    ):
        context, page = open_lesson(browser, base, viewport, f"/#s=0&l={lesson}")
        page.evaluate(f"window.convscope.seek({phase_step(page, phase, offset)})")
        if name == "transposed-overlaps":  # the stamps per cell: a figure no step reads
            page.click("#all-tensors")
            page.locator('[data-tensor="overlaps"]').first.scroll_into_view_if_needed()
        save(page, f"{name}-{viewport[0]}x{viewport[1]}.png")
        context.close()


def lab(browser, base) -> None:
    context, page = open_lesson(browser, base, (1366, 768), "/", preset="mistake-stride_one_index_grid")
    page.locator("#stage").focus()
    page.keyboard.press("d")
    wait_until(page, "!document.getElementById('eq-lab').hidden")
    save(page, "mistake-divergence-1366x768.png")
    context.close()
    context, page = open_lesson(browser, base, (1366, 768), "/", preset="cs231n")
    doc = page.evaluate("window.convscope.document()")
    dx = doc["tensors"]["dx"]
    mine = list(dx["data"])
    for flat, by in ((3, 1), (17, -2), (40, 2), (52, 1), (66, -1)):
        mine[flat] += by
    page.click("#compare-open")
    page.fill("#compare-dx", " ".join(str(v) for v in mine))  # bare numbers: the tensor's shape
    page.click("#compare-apply")
    wait_until(page, "document.querySelectorAll('#stage .cell.diff').length === 5", 20)
    page.keyboard.press("End")
    wait_until(page, f"window.convscope.step === {doc['total_events'] - 1}")
    save(page, "compare-1366x768.png")
    context.close()


def teach(browser, base) -> None:
    for name, path in (("dead-relu", "/#s=49&l=nhwc_relu"), ("stride2-gaps", "/#s=7&l=stride2")):
        context, page = open_lesson(browser, base, (1366, 768), path)
        if name == "stride2-gaps":
            page.locator("#all-tensors").click()  # (x and dx side by side: the gaps)
        save(page, f"{name}-1366x768.png")
        context.close()
    # a custom setup too large to fit whole (4 channels of 10x10 padded, 3 filters): each
    # column follows its part of a backward step, xp and dxp at smaller cells than dw's sums
    config = {
        "x": randint([1, 4, 8, 8], -2, 2, 3),
        "w": randint([3, 4, 3, 3], -1, 1, 4),
        "padding": 1,
        "dout": randint([1, 3, 8, 8], -2, 2, 5),
    }
    context, page = open_lesson(browser, base, (1366, 768), lesson_path(config))
    step = phase_step(page, "backward", 43)
    page.evaluate(f"window.convscope.seek({step})")
    wait_until(page, f"window.convscope.step === {step}")
    save(page, "custom-follow-1366x768.png")
    context.close()


def grader(browser, base) -> None:
    """class-report-1366x768.png: `convscope check FOLDER --class-report` on the test
    suite's class of 33 files whose truth is known (tests/test_grader_class.py)."""
    import socket
    import subprocess
    import tempfile

    from test_grader_class import make_class

    with tempfile.TemporaryDirectory() as folder:
        klass = Path(folder) / "class"
        # (the hostile file's socket: a loopback port nothing listens on)
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
        make_class(klass, "convscope-screenshot-marker", Path(folder) / "home-file", port)
        report = Path(folder) / "class.html"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "convscope",
                "check",
                str(klass),
                "--call-time-limit",
                "2",
                "--class-report",
                str(report),
            ],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page = context.new_page()
        page.goto(report.as_uri())
        page.screenshot(path=str(OUT / "class-report-1366x768.png"))
        context.close()


def code(browser, base) -> None:
    """The code panel (C): CS231n's backward step at 1920x1080 and 1366x768, in projector
    mode at 1280x720 and on a phone; the assign_dx mistake at its first divergence."""
    context, page = open_lesson(browser, base, (1366, 768), "/#s=0&l=cs231n")
    step = phase_step(page, "backward", 13)
    context.close()
    for name, viewport, extra in (
        ("1920x1080", (1920, 1080), ""),
        ("1366x768", (1366, 768), ""),
        ("projector-1280x720", (1280, 720), "&p=1"),
        ("phone-390x844", (390, 844), ""),
    ):
        phone = viewport[0] < 600
        more = {"is_mobile": True, "has_touch": True, "device_scale_factor": 2} if phone else {}
        context, page = open_lesson(browser, base, viewport, f"/#s={step}&l=cs231n&k=1{extra}", **more)
        wait_until(page, "document.querySelector('#code .code-line.current')")
        save(page, f"code-cs231n-{name}.png")
        context.close()
    context, page = open_lesson(browser, base, (1920, 1080), "/#s=0&l=mistake-assign_dx&k=1")
    page.locator("#stage").focus()
    page.keyboard.press("d")
    wait_until(page, "window.convscope.step === window.convscope.document().first_divergence")
    save(page, "code-assign_dx-1920x1080.png")
    context.close()


STUDENT_FILE = ROOT / "docs" / "screenshots" / "student_width_stride.py"


def trace(browser, base) -> None:
    """Trace your own code: `convscope check student_width_stride.py --trace` (its width
    stride dropped where dx is scattered), the lesson file at its first wrong write (D)."""
    import tempfile

    from convscope.cli import main as convscope

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "trace.html"
        convscope(["trace-code", str(STUDENT_FILE), "--case", '{"stride": [2, 2]}', "-o", str(out)])
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page = context.new_page()
        page.goto(out.as_uri() + "?debug")
        wait_complete(page)
        page.locator("#stage").focus()
        page.keyboard.press("d")
        wait_until(page, "window.convscope.step === window.convscope.document().first_divergence")
        save(page, "code-trace-1366x768.png")
        context.close()


def predict(browser, base) -> None:
    """Predict (Q): the question of a forward step of CS231n on a phone, and at 1366x768
    the verdict of an answer one off."""
    asked = "!document.getElementById('ask').hidden && !document.getElementById('ask-form').hidden"
    for name, viewport in (("phone-390x844", (390, 844)), ("verdict-1366x768", (1366, 768))):
        phone = viewport[0] < 600
        more = {"is_mobile": True, "has_touch": True, "device_scale_factor": 2} if phone else {}
        context, page = open_lesson(browser, base, viewport, "/#s=0&l=cs231n", **more)
        step = phase_step(page, "forward", 4)
        page.evaluate(f"window.convscope.seek({step - 1})")
        page.locator("#stage").focus()
        page.keyboard.press("q")
        page.keyboard.press("ArrowRight")
        wait_until(page, asked)
        if not phone:
            answer = page.evaluate(
                f"fetch('api/questions', {{method: 'POST', headers: {{'Content-Type': 'application/json'}}, body: JSON.stringify({{config: window.convscope.config, step: {step}}})}}).then((r) => r.json()).then((qs) => qs[0].answer)"
            )
            page.fill("#ask-input", f"{answer + 1:.6g}")
            page.press("#ask-input", "Enter")
            wait_until(page, "document.getElementById('ask').dataset.verdict === 'wrong'")
        save(page, f"predict-{name}.png")
        page.evaluate("localStorage.clear()")
        context.close()


def class_question(browser, base) -> None:
    """A class question: asked on the teacher's projector, answered by a phone and eleven
    scripted pages, revealed."""
    import httpx

    context, teacher = open_lesson(browser, base, (1920, 1080), f"/?teacher={TEACHER_TOKEN}#s=0&l=cs231n&p=1")
    teacher.click("#class-session")
    wait_until(teacher, "document.querySelector('#follow-bar .join-code')")
    code = teacher.inner_text("#follow-bar .join-code")
    step = phase_step(teacher, "forward", 4)
    teacher.evaluate(f"window.convscope.seek({step - 1})")
    phone_context, phone = open_lesson(
        browser,
        base,
        (390, 844),
        f"/?follow={code}",
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
    )
    wait_until(phone, f"window.convscope.step === {step - 1}")
    teacher.locator("#stage").focus()
    teacher.keyboard.press("a")
    wait_until(phone, "!document.getElementById('ask').hidden && !document.getElementById('ask-form').hidden")
    save(phone, "class-question-phone-390x844.png")
    session = teacher.evaluate("JSON.parse(sessionStorage.getItem('convscope.classSession')).session")
    number = 1  # (the session's first question)
    answer = httpx.post(
        base + "/api/questions", json={"config": teacher.evaluate("window.convscope.config"), "step": step}
    ).json()[0]["answer"]
    phone.fill("#ask-input", f"{answer:.6g}")
    phone.press("#ask-input", "Enter")
    # (CS231n's b[0] is 1: answer - 1 is what code that never adds the bias leaves there)
    for i, given in enumerate([answer] * 6 + [answer - 1] * 3 + [answer + 1] * 2):
        httpx.post(
            f"{base}/api/follow/sessions/{session}/questions/{number}/answers",
            json={"voter": f"screenshot-page-{i:04d}", "given": given},
        )
    wait_until(teacher, "document.getElementById('ask-count').textContent.startsWith('12 answered')")
    teacher.keyboard.press("ArrowRight")
    wait_until(teacher, "document.querySelectorAll('#ask-tally li').length > 0")
    save(teacher, "class-answers-projector-1920x1080.png")
    phone_context.close()
    context.close()


GROUPS = {
    "screens": screens,
    "follow": follow,
    "views": views,
    "layers": layers,
    "lab": lab,
    "teach": teach,
    "grader": grader,
    "code": code,
    "trace": trace,
    "predict": predict,
    "class": class_question,
}


def main() -> None:
    chosen = sys.argv[1:] or list(GROUPS)
    # the join link as `convscope serve --classroom` gives it: the machine's network
    # address (a documentation address), not the loopback the screenshots are taken on
    with live_server(public_url="http://192.0.2.20:8000/") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name in chosen:
            GROUPS[name](browser, base)
        browser.close()


if __name__ == "__main__":
    main()
