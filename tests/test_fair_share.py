"""A client address's shares and the teacher token, through the app (``server/http/fair_share.py``,
``server/follow/routes.py``); the same against a real server with many addresses is
tests/test_server_fair.py."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from convscope.app import create_app
from convscope.http.fair_share import TokenBucket
from convscope.settings import Settings

TOKEN = "a-teacher-token"


def client(**settings) -> TestClient:
    return TestClient(create_app(Settings(teacher_token=TOKEN, **settings), static_dir=None))


def test_a_token_bucket_gives_its_burst_then_its_rate():
    bucket = TokenBucket(rate=2.0, burst=3)
    assert [bucket.take(0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(0.0) == pytest.approx(0.5)  # the next token comes in 1/rate s
    assert bucket.take(0.5) == 0.0
    assert bucket.take(10.0) == 0.0 and bucket.tokens == pytest.approx(2.0)  # refilled to the burst, less one


def test_past_its_burst_an_address_gets_429_naming_the_share_with_retry_after():
    with client(client_burst=5, client_requests_per_second=0.5) as c:
        statuses = [c.get("/api/health").status_code for _ in range(7)]
        refused = c.get("/api/health")
        assert c.get("/").status_code in (200, 404)  # the page's files are not counted
    assert statuses == [200] * 5 + [429] * 2
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    msg = refused.json()["detail"][0]["msg"]
    assert "testclient" in msg and "0.5 API requests a second" in msg and "bursts of 5" in msg


def test_join_codes_cannot_be_enumerated():
    with client(joins_per_minute=30) as c:
        statuses = [c.get(f"/api/follow/join/ABC{k:03d}").status_code for k in range(12)]
    assert statuses.count(404) == 10 and statuses[10:] == [429, 429], statuses  # a burst of 30 / 3


@pytest.mark.parametrize(
    "headers, words",
    [
        ({}, "needs the teacher token"),
        ({"Authorization": "Basic abc"}, "needs the teacher token"),
        ({"Authorization": "Bearer not-the-token"}, "is not this server's"),
    ],
)
def test_opening_a_class_session_needs_the_teacher_token(headers, words):
    with client() as c:
        refused = c.post("/api/follow/sessions", json={}, headers=headers)
        opened = c.post("/api/follow/sessions", json={}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert words in refused.json()["detail"][0]["msg"]
    assert refused.json()["detail"][0]["loc"] == ["header", "authorization"]
    assert opened.status_code == 201
    assert TOKEN not in opened.text  # nothing a student could read carries it


def test_a_server_without_a_token_opens_no_session_and_says_how_to_get_one():
    with TestClient(create_app(Settings(), static_dir=None)) as c:
        refused = c.post("/api/follow/sessions", json={}, headers={"Authorization": "Bearer "})
    assert refused.status_code == 401
    assert "convscope serve" in refused.json()["detail"][0]["msg"]


def test_a_teacher_publishing_faster_than_the_pace_gets_429():
    with client(follow_states_per_second=2) as c:
        created = c.post(
            "/api/follow/sessions", json={"state": {"step": 0}}, headers={"Authorization": f"Bearer {TOKEN}"}
        ).json()
        body = {"secret": created["secret"], "driver": 1, "state": {"step": 1}}
        statuses = [c.put(f"/api/follow/sessions/{created['session']}/state", json=body).status_code for _ in range(6)]
    assert statuses == [200] * 4 + [429] * 2, statuses  # bursts of twice the rate
