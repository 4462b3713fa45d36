"""A class question in a follow session (server/follow/question_routes.py): the teacher
asks, a class of 30 answers, each page once, the distribution equals the answers sent
and each answer is judged as ``convcore.trace.questions.judge`` judges it; nothing is
answered after the close, nothing is seen before it, and only the teacher's secret asks,
tallies and closes. With the in-process broker, and across two workers sharing Redis
(where consecutive requests land on either worker)."""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from follow_helpers import TEACHER_TOKEN, convscope_serve, redis_missing_reason, redis_server
from test_browser_helpers import live_server

from convcore.trace.questions import judge
from convscope.follow.broker import Answered, MemoryBroker, QuestionClosed, StaleDriver, TooManyAnswers
from convscope.follow.session import new_credentials
from convscope.traces.presets import PRESETS

CS231N = PRESETS["cs231n"].config
CLASS = 30


@pytest.fixture(scope="module", params=["memory", "redis"])
def base(request):
    if request.param == "memory":
        with live_server() as url:
            yield url
        return
    reason = redis_missing_reason()
    if reason and os.environ.get("CI") == "true":
        raise RuntimeError(f"class questions across two workers cannot be tested in CI: {reason}")
    if reason:
        pytest.skip(reason)
    with redis_server() as url, convscope_serve("--redis-url", url, workers=2) as served:
        yield served


def _open(client: httpx.Client) -> tuple[str, str]:
    r = client.post(
        "/api/follow/sessions",
        json={"state": {"lesson": "cs231n", "step": 0}},
        headers={"Authorization": f"Bearer {TEACHER_TOKEN}"},
    )
    r.raise_for_status()
    return r.json()["session"], r.json()["secret"]


def _questions(client: httpx.Client, step: int) -> list[dict]:
    r = client.post("/api/questions", json={"config": CS231N, "step": step})
    r.raise_for_status()
    return r.json()


def _value_step(client: httpx.Client) -> int:
    return next(k for k in range(1, 38) if _questions(client, k)[0]["kind"] == "value")


def _answer(base: str, path: str, voter: str, given) -> httpx.Response:
    with httpx.Client(base_url=base, timeout=30) as c:  # (a page of its own: any worker)
        return c.post(path, json={"voter": voter, "given": given})


def test_a_class_of_30_answers_once_each_and_the_tally_is_what_they_sent(base):
    rng = random.Random(25)
    with httpx.Client(base_url=base, timeout=60) as client:
        session, secret = _open(client)
        step = _value_step(client)
        r = client.post(
            f"/api/follow/sessions/{session}/questions",
            json={"secret": secret, "driver": 1, "config": CS231N, "step": step, "index": 0},
        )
        assert r.status_code == 201, r.text
        number, asked = r.json()["question"], r.json()["asked"]
        # the question the students' pages ask, with the numbers catalogued mistakes leave there
        assert {k: v for k, v in asked.items() if k != "mistakes"} == _questions(client, step)[0]
        assert all(m["value"] != asked["answer"] for m in asked["mistakes"])
        path = f"/api/follow/sessions/{session}/questions/{number}"
        right = asked["answer"]
        sent = {
            f"page-{i:02d}-{rng.getrandbits(64):016x}": rng.choice([right, right + 1, right - 2, 0.5])
            for i in range(CLASS)
        }
        with ThreadPoolExecutor(8) as pool:
            replies = list(pool.map(lambda item: _answer(base, path + "/answers", *item), sent.items()))
        assert [r.status_code for r in replies] == [201] * CLASS, [r.text for r in replies if r.status_code != 201]
        # a second answer from one page is refused, whatever it says
        again = _answer(base, path + "/answers", next(iter(sent)), right)
        assert again.status_code == 409 and "has answered question" in again.json()["detail"][0]["msg"]
        # before the close: the count only, and only for the teacher
        before = client.post(path + "/tally", json={"secret": secret}).json()
        assert before == {"question": number, "open": True, "answered": CLASS, "distribution": None, "right": None}
        assert client.post(path + "/tally", json={"secret": "not-the-secret"}).status_code == 403
        assert client.post(path + "/close", json={"secret": "not-the-secret", "driver": 1}).status_code == 403
        closed = client.post(path + "/close", json={"secret": secret, "driver": 1}).json()
        counts = Counter(float(v) for v in sent.values())
        assert {d["given"]: d["count"] for d in closed["distribution"]} == counts
        assert [d["count"] for d in closed["distribution"]] == sorted(counts.values(), reverse=True)
        for d in closed["distribution"]:
            assert d["right"] == judge(asked, d["given"])
        assert closed["right"] == sum(n for v, n in counts.items() if judge(asked, v))
        assert (closed["open"], closed["answered"]) == (False, CLASS)
        late = _answer(base, path + "/answers", "page-late-000000000000", right)
        assert late.status_code == 409 and "has closed question" in late.json()["detail"][0]["msg"]


def test_each_kind_takes_its_own_answers_and_refuses_others_with_the_numbers(base):
    with httpx.Client(base_url=base, timeout=60) as client:
        session, secret = _open(client)
        doc = client.post("/api/trace", json=CS231N).json()
        forward = next(p for p in doc["phases"] if p["name"] == "forward")["start"]
        asked = _questions(client, forward)
        ask = lambda index: client.post(  # noqa: E731
            f"/api/follow/sessions/{session}/questions",
            json={"secret": secret, "driver": 1, "config": CS231N, "step": forward, "index": index},
        )
        kinds = [q["kind"] for q in asked]
        # (a writes question is none a page asks: its hidden cells would answer it)
        if "writes" in kinds:
            r = ask(kinds.index("writes"))
            assert r.status_code == 422 and "not index" in r.json()["detail"][0]["msg"]
        r = ask(len(asked))
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "index"]
        shape = ask(kinds.index("shape")).json()
        path = f"/api/follow/sessions/{session}/questions/{shape['question']}/answers"
        bad = _answer(base, path, "page-shape-0000000001", 7)
        assert bad.status_code == 422 and "asks for the sizes; got 7" in bad.json()["detail"][0]["msg"]
        assert _answer(base, path, "page-shape-0000000001", shape["asked"]["answer"]).status_code == 201
        # asking another closes this one to answers: they name the question open now
        reads = ask(kinds.index("reads")).json()
        stale = _answer(base, path, "page-shape-0000000002", [1, 2, 3, 3])
        assert stale.status_code == 409
        assert f"question {reads['question']} is" in stale.json()["detail"][0]["msg"]
        path = f"/api/follow/sessions/{session}/questions/{reads['question']}/answers"
        cells = reads["asked"]["answer"]["cells"]
        wrong_rank = _answer(base, path, "page-reads-0000000001", [[0, 1]])
        assert wrong_rank.status_code == 422 and "4 indices each" in wrong_rank.json()["detail"][0]["msg"]
        assert _answer(base, path, "page-reads-0000000001", list(reversed(cells))).status_code == 201
        assert _answer(base, path, "page-reads-0000000002", cells[:1]).status_code == 201
        closed = client.post(
            f"/api/follow/sessions/{session}/questions/{reads['question']}/close", json={"secret": secret, "driver": 1}
        ).json()
        assert sorted((d["right"], d["count"]) for d in closed["distribution"]) == [(False, 1), (True, 1)]
        # a page that was taken over from asks nothing
        client.post(f"/api/follow/sessions/{session}/takeover", json={"secret": secret}).raise_for_status()
        assert ask(kinds.index("shape")).status_code == 409


def test_the_memory_broker_keeps_one_question_a_session_and_bounds_its_answers():
    asyncio.run(_one_question_a_session())


async def _one_question_a_session() -> None:
    broker = MemoryBroker(max_sessions=2, idle_seconds=60)
    c = new_credentials()
    await broker.create(c, None)
    first = await broker.ask(c.session, 1, '{"kind": "changes", "answer": false}')
    assert await broker.answer(c.session, first, "a" * 16, "false", limit=2) == 1
    with pytest.raises(Answered):
        await broker.answer(c.session, first, "a" * 16, "true", limit=2)
    assert await broker.answer(c.session, first, "b" * 16, "true", limit=2) == 2
    with pytest.raises(TooManyAnswers):
        await broker.answer(c.session, first, "c" * 16, "true", limit=2)
    assert (await broker.tally(c.session, first)).counts == {"false": 1, "true": 1}
    second = await broker.ask(c.session, 1, '{"kind": "changes", "answer": true}')
    assert second == first + 1 and (await broker.tally(c.session, second)).answered == 0
    with pytest.raises(QuestionClosed):
        await broker.tally(c.session, first)
    with pytest.raises(StaleDriver):
        await broker.close_question(c.session, 2, second)
    assert not (await broker.close_question(c.session, 1, second)).open
    with pytest.raises(QuestionClosed):
        await broker.answer(c.session, second, "d" * 16, "true", limit=2)


def test_a_wrong_answer_a_catalogued_mistake_gives_is_named_at_the_close(base):
    with httpx.Client(base_url=base, timeout=60) as client:
        session, secret = _open(client)
        # a written cell of out in filter 0 (CS231n's b[0] = 1: the bias shows there)
        step, question = next(
            (k, q)
            for k in range(1, 38)
            for q in _questions(client, k)[:1]
            if q["kind"] == "value" and q["cell"]["tensor"] == "out" and q["cell"]["index"][1] == 0
        )
        asked = client.post(
            f"/api/follow/sessions/{session}/questions",
            json={"secret": secret, "driver": 1, "config": CS231N, "step": step, "index": 0},
        ).json()
        path = f"/api/follow/sessions/{session}/questions/{asked['question']}"
        no_bias = question["answer"] - CS231N["b"][0]
        for i, given in enumerate([no_bias, no_bias, question["answer"], question["answer"] + 100]):
            assert _answer(base, path + "/answers", f"named-page-{i:06d}", given).status_code == 201
        rows = client.post(path + "/close", json={"secret": secret, "driver": 1}).json()["distribution"]
        named = {d["given"]: d["mistake"] for d in rows}
        assert named[no_bias] == "Bias computed in db but never added", rows
        assert named[question["answer"]] is None and named[question["answer"] + 100] is None
        assert rows[0]["given"] == no_bias and rows[0]["count"] == 2  # the most common, first
