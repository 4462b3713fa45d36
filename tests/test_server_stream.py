"""A real uvicorn process on a free loopback port: the NDJSON stream's first line leaves
before generation ends, a reader that stalls holds bytes of the reply buffer but no
build slot, and a client that goes away stops generation.

The server runs with CONVSCOPE_DEBUG=1, which mounts GET /api/debug/stats: counters of
the events the stream generator has pulled from ``iter_trace`` (incremented in the
worker thread as each event is generated, before it is sent).
"""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest
from live_server import held_socket, launch, stop_server, uvicorn_on

# ~150 000 events (~75 MB of NDJSON): far more than loopback socket buffers hold.
BIG = {
    "x": {"fill": "randint", "shape": [1, 4, 16, 16], "low": -3, "high": 3, "seed": 1},
    "w": {"fill": "randint", "shape": [8, 4, 3, 3], "low": -2, "high": 2, "seed": 2},
    "padding": 1,
    "granularity": "mac",
}


@pytest.fixture(scope="module")
def live_server():
    settings = {
        "CONVSCOPE_DEBUG": "1",
        "CONVSCOPE_MAX_EVENTS": "400000",
        "CONVSCOPE_MAX_TRACE_BYTES": "1000000000",
        "CONVSCOPE_BUFFER_BYTES": "1000000000",
        "CONVSCOPE_MAX_WORK": "1000000",
        "CONVSCOPE_MAX_TENSOR_ELEMENTS": "4096",
        "CONVSCOPE_STREAM_CHUNK_EVENTS": "64",
        # short, so the stalled-body test is quick; the streams below outlast it, which
        # also shows the deadline stops counting once the body has arrived
        "CONVSCOPE_REQUEST_TIMEOUT": "2",
        "CONVSCOPE_IDLE_TIMEOUT": "30",
    }
    sock = held_socket()
    protocol = ["--http", "convscope.http.protocol:DeadlineH11Protocol", "--no-server-header"]
    command = uvicorn_on(sock, *protocol, "--log-level", "warning")
    process, url, _, _ = launch(command, held=sock, **settings)
    try:
        yield url
    finally:
        stop_server(process)


def stats(url: str) -> dict:
    return httpx.get(url + "api/debug/stats", timeout=5).json()


def wait_for(predicate, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def settled_count(url: str) -> int:
    """events_generated once it stops changing (three equal reads 0.2 s apart)."""
    last, same = -1, 0
    for _ in range(100):
        now = stats(url)["events_generated"]
        same = same + 1 if now == last else 0
        if same >= 2:
            return now
        last = now
        time.sleep(0.2)
    raise AssertionError("events_generated never settled")


def test_whole_stream_arrives_in_order(live_server):
    small = {**BIG, "granularity": "window"}
    with httpx.stream("POST", live_server + "api/trace/stream", json=small, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in response.iter_lines() if line]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "end"
    assert len(lines) - 2 == lines[0]["total_events"] == lines[-1]["total_events"]


def test_first_line_leaves_before_generation_ends_and_a_stalled_reader_holds_no_slot(live_server):
    before = settled_count(live_server)
    base = stats(live_server)
    with httpx.Client(timeout=60) as client:
        with client.stream("POST", live_server + "api/trace/stream", json=BIG) as response:
            assert response.status_code == 200
            lines = response.iter_lines()
            header = json.loads(next(lines))
            assert header["type"] == "header"
            total = header["total_events"]
            assert total > 100_000
            generated_at_header = stats(live_server)["events_generated"] - before
            # The header came before generation ended.
            assert generated_at_header < total
            for _ in range(100):
                assert json.loads(next(lines))["type"] == "event"
            # The client stops reading: the build does not wait for it. It runs to the
            # end into the reply buffer and gives its slot back; the reader holds bytes.
            assert wait_for(lambda: stats(live_server)["streams_completed"] == base["streams_completed"] + 1, 60)
            held = stats(live_server)
            assert held["running"] == 0 and held["held_bytes"] > 0, held
            assert settled_count(live_server) - before == total
        # Leaving the block closes the connection mid-stream: its bytes go back.
    assert wait_for(lambda: stats(live_server)["held_bytes"] == 0)
    print(f"header at {generated_at_header} of {total} events")


def test_a_client_that_leaves_mid_generation_stops_it(live_server):
    before = settled_count(live_server)
    base = stats(live_server)
    with httpx.Client(timeout=60) as client:
        with client.stream("POST", live_server + "api/trace/stream", json={**BIG, "backward": "separate"}) as response:
            assert response.status_code == 200
            header = json.loads(next(response.iter_lines()))
            total = header["total_events"]
        # Leaving the block closes the connection right after the header.
    assert wait_for(lambda: stats(live_server)["streams_cancelled"] == base["streams_cancelled"] + 1)
    after = settled_count(live_server) - before
    print(f"stopped at {after} of {total} events")
    assert after < total, f"{after} of {total} events generated after the client left"
    final = stats(live_server)
    assert final["streams_completed"] == base["streams_completed"]
    assert (final["running"], final["held_bytes"]) == (0, 0), final


def _raw_post(url: str, parts: list[bytes], declared: int, pause: float) -> bytes:
    """POST /api/conv by hand: headers declaring ``declared`` bytes, then ``parts`` with
    ``pause`` seconds between them; returns everything the server answered."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(
            b"POST /api/conv HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {declared}\r\nConnection: close\r\n\r\n".encode()
        )
        for part in parts:
            try:
                sock.sendall(part)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server answered and closed
            time.sleep(pause)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    return answer


def test_a_stalled_request_body_gets_a_408_not_an_open_connection(live_server):
    started = time.monotonic()
    answer = _raw_post(live_server, [b'{"stride": '], declared=100, pause=0)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"headers and body must be in within 2 s" in answer
    assert time.monotonic() - started < 10


def test_a_slow_body_within_the_deadline_is_read(live_server):
    body = json.dumps({"stride": 1, "padding": 1}).encode()
    parts = [body[k : k + 8] for k in range(0, len(body), 8)]  # 0.3 s pauses, about 1 s in all
    answer = _raw_post(live_server, parts, declared=len(body), pause=0.3)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


def test_a_dripped_body_gets_its_408_at_the_whole_request_deadline(live_server):
    # one byte every 0.5 s never pauses long, but the whole request is not in after 2 s
    started = time.monotonic()
    answer = _raw_post(live_server, [b"{"] * 20, declared=100, pause=0.5)
    took = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b'"loc":["request"]' in answer and b"content-security-policy" in answer.lower()
    assert took < 4
