"""Follow mode's join QR code, drawn by segno on the server (``server/follow/join_qr.py``):
``GET /api/follow/join/{code}/qr.svg`` is the code of the session's join link, the link
the page shows. Read back by an independent decoder (zxing-cpp) in
test_browser_follow.py, from the page's own pixels; here, the route's contract."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from fastapi.testclient import TestClient
from test_browser_helpers import TEACHER_TOKEN

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def client(page_dir):
    from convscope.app import create_app
    from convscope.settings import Settings

    with TestClient(create_app(Settings(teacher_token=TEACHER_TOKEN), static_dir=page_dir)) as c:
        yield c


def _open(client) -> dict:
    answer = client.post("/api/follow/sessions", json={}, headers={"Authorization": f"Bearer {TEACHER_TOKEN}"})
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_the_qr_code_is_an_svg_of_the_join_link_the_session_names(client):
    session = _open(client)
    assert session["join_url"] == f"http://testserver/?follow={session['code']}"
    assert session["join_qr_path"] == f"/api/follow/join/{session['code']}/qr.svg"
    answer = client.get(session["join_qr_path"])
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/svg+xml"
    svg = ET.fromstring(answer.content)
    assert svg.tag == f"{SVG}svg"
    assert svg.find(f"{SVG}title").text == f"QR code of {session['join_url']}"
    # no size of its own (the page sizes it), square, with the 4-module quiet zone
    assert "width" not in svg.attrib and "height" not in svg.attrib
    _, _, w, h = map(int, svg.attrib["viewBox"].split())
    assert w == h and (w - 8 - 17) % 4 == 0 and 21 <= w - 8 <= 57  # versions 1 to 10
    # dark on white whatever the page's theme, and nothing that runs
    assert b"#fff" in answer.content and b"#000" in answer.content
    assert b"<script" not in answer.content and b"href" not in answer.content


def test_the_link_is_the_public_address_when_the_server_has_one(page_dir):
    from convscope.app import create_app
    from convscope.settings import Settings

    settings = Settings(teacher_token=TEACHER_TOKEN, public_url="http://10.1.2.3:8000/")
    with TestClient(create_app(settings, static_dir=page_dir)) as c:
        session = _open(c)
        assert session["join_url"] == f"http://10.1.2.3:8000/?follow={session['code']}"
        svg = ET.fromstring(c.get(session["join_qr_path"]).content)
        assert svg.find(f"{SVG}title").text == f"QR code of http://10.1.2.3:8000/?follow={session['code']}"


def test_a_code_of_no_session_is_a_404_that_names_it(client):
    _open(client)
    answer = client.get("/api/follow/join/zz99zz/qr.svg")
    assert answer.status_code == 404
    detail = answer.json()["detail"][0]
    assert detail["loc"] == ["path", "code"] and "'ZZ99ZZ'" in detail["msg"]


def test_a_code_is_read_as_the_join_lookup_reads_it(client):
    session = _open(client)
    code = session["code"]
    spaced = f"{code[:3].lower()}-{code[3:].lower()}"
    answer = client.get(f"/api/follow/join/{spaced}/qr.svg")
    assert answer.status_code == 200
    assert ET.fromstring(answer.content).find(f"{SVG}title").text.endswith(f"?follow={code}")


def test_qr_lookups_share_the_join_codes_rate_limit(page_dir):
    """A QR lookup says whether a code exists, as a join does: the same per-client bucket."""
    from convscope.app import create_app
    from convscope.settings import Settings

    settings = Settings(teacher_token=TEACHER_TOKEN, joins_per_minute=3)
    with TestClient(create_app(settings, static_dir=page_dir)) as c:
        answers = [c.get(f"/api/follow/join/AAAAA{i}/qr.svg").status_code for i in range(2, 9)]
    assert answers[0] == 404 and 429 in answers
