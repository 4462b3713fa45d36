"""The convscope command line: --version, trace without a server, serve."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from live_server import launch, stop_server

import convcore.trace.code as trace_code
from convcore import __version__
from convcore.trace import build_trace
from convscope.cli import main
from convscope.traces.presets import PRESETS

ROOT = Path(__file__).resolve().parent.parent


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"convscope {__version__}"


def test_trace_writes_the_document(tmp_path):
    config = PRESETS["cs231n"].config
    (tmp_path / "c.json").write_text(json.dumps(config))
    assert main(["trace", str(tmp_path / "c.json"), "-o", str(tmp_path / "t.json")]) == 0
    assert json.loads((tmp_path / "t.json").read_text()) == json.loads(json.dumps(build_trace(config)))


def test_trace_writes_ndjson(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps(PRESETS["d2l"].config))
    assert main(["trace", str(tmp_path / "c.json"), "--ndjson", "-o", str(tmp_path / "t.ndjson")]) == 0
    lines = [json.loads(line) for line in (tmp_path / "t.ndjson").read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1] == {"type": "end", "total_events": len(lines) - 2}


def test_trace_of_a_preset_to_stdout(capsysbinary):
    assert main(["trace", "preset:d2l"]) == 0
    doc = json.loads(capsysbinary.readouterr().out)
    assert doc["schema"] == "convscope.trace/3"


def test_trace_code_marks_the_steps_line(capsysbinary):
    """--code --step N: the listing, numbered, the step's line marked >> and its other
    lines (a fused backward step's db and dw) > , under the step's loop values."""
    doc = build_trace(PRESETS["cs231n"].config)
    step = next(k for k, e in enumerate(doc["events"]) if e["phase"] == "backward" and e["loop"]["j"] == 1)
    event = doc["events"][step]
    assert main(["trace", "preset:cs231n", "--code", "--step", str(step + 1)]) == 0
    out = capsysbinary.readouterr().out.decode()
    title, where, text, blank, *listing = out.splitlines()
    assert title == f"{doc['code']['name']} (cs231n)" and text == event["text"] and blank == ""
    assert where.startswith(f"step {step + 1} of {doc['total_events']} · backward · n=0 f=0 i=0 j=1 · g=")
    assert len(listing) == len(doc["code"]["lines"])
    marked = {int(line.split()[0]): line.split()[1] for line in listing if line.split()[1:2] in ([">>"], [">"])}
    assert marked == {event["lines"][0]: ">", event["lines"][1]: ">", event["line"]: ">>"}
    assert listing[event["line"] - 1].endswith(doc["code"]["lines"][event["line"] - 1])


def test_trace_code_without_a_step_and_its_errors(tmp_path, capsysbinary, monkeypatch):
    assert main(["trace", "preset:nhwc_relu", "--code"]) == 0
    out = capsysbinary.readouterr().out.decode().splitlines()
    assert out[0].startswith("layer/forward_window") and out[1] == "" and "class Conv2D:" in out[5]
    assert not any(line.split()[1:2] == [">>"] for line in out[2:] if line.split())
    assert main(["trace", "preset:d2l", "--code", "--step", "9"]) == 2
    assert "--step 9: this trace has steps 1 to 8" in capsysbinary.readouterr().err.decode()
    assert main(["trace", "preset:d2l", "--code", "--step", "0"]) == 2
    assert "--step 0: this trace has steps 1 to 8" in capsysbinary.readouterr().err.decode()
    # a setting without a listing (none today: a layer still to come may have none)
    monkeypatch.setattr(trace_code, "_find", lambda *args, **setting: (None, "no listing"))
    (tmp_path / "c.json").write_text(json.dumps({"view": "im2col", "stride": [1, 2]}))
    assert main(["trace", str(tmp_path / "c.json"), "--code"]) == 2
    assert "no code beside its steps" in capsysbinary.readouterr().err.decode()


def test_trace_stops_quietly_when_the_reader_leaves(tmp_path):
    # `convscope trace ... --ndjson | head -1`: no BrokenPipeError traceback, exit 0.
    # Mac granularity makes the output far larger than a pipe's buffer.
    (tmp_path / "c.json").write_text(json.dumps({**PRESETS["cs231n"].config, "granularity": "mac"}))
    process = subprocess.Popen(
        [sys.executable, "-m", "convscope", "trace", str(tmp_path / "c.json"), "--ndjson"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = process.stdout.readline()
    process.stdout.close()
    _, err = process.communicate(timeout=60)
    assert json.loads(first)["type"] == "header"
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    assert process.returncode == 0


def test_trace_reports_a_bad_config(tmp_path, capsys):
    (tmp_path / "c.json").write_text(json.dumps({"stride": 0}))
    assert main(["trace", str(tmp_path / "c.json")]) == 2
    assert "stride must be at least 1, got 0" in capsys.readouterr().err


def test_trace_reports_a_missing_file(tmp_path, capsys):
    assert main(["trace", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_serve_rejects_bad_limits(capsys):
    assert main(["serve", "--max-events", "0"]) == 2
    assert "max_events=0 is not valid: Input should be greater than or equal to 1" in capsys.readouterr().err


def test_serve_stops_at_a_bad_variable(capsys, monkeypatch):
    monkeypatch.setenv("CONVSCOPE_MAX_BUILDS", "lots")
    assert main(["serve"]) == 2
    assert "CONVSCOPE_MAX_BUILDS='lots' is not valid" in capsys.readouterr().err


@pytest.mark.slow
def test_serve_prints_the_url_and_applies_its_options():
    command = [sys.executable, "-m", "convscope", "serve", "--host", "127.0.0.1", "--port", "0", "--max-events", "1234"]
    process, url, port, printed = launch([*command, "--log-level", "warning"])
    try:
        # (--port 0: the port the system gave, printed first)
        assert port > 0 and printed == [f"ConvScope running at http://127.0.0.1:{port}/"]
        health = httpx.get(url + "api/health", timeout=5)
        assert health.json()["limits"]["max_events"] == 1234
        page = httpx.get(url, timeout=5)
        assert page.status_code == 200 and "<html" in page.text.lower()
    finally:
        stop_server(process)


def _nested(depth):
    return "[" * depth + "1" + "]" * depth


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"x": ' + _nested(40) + "}", ["x: x must have 4 dimensions (N, C, H, W), got 40"]),
        ('{"stride": 9223372036854775808}', ["stride: stride must be at most 2^63 − 1"]),
        ('{"x": ' + _nested(100_000) + "}", ["nests too deep"]),
        ('{"groups": ' + "7" * 5000 + "}", ["5000 digits"]),
    ],
    ids=["40 levels", "stride 2^63", "100000 levels", "5000 digits"],
)
def test_trace_reports_bad_input_in_one_line(tmp_path, capsys, text, words):
    (tmp_path / "c.json").write_text(text)
    assert main(["trace", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("convscope: "), err
    for word in words:
        assert word in err, err


def test_trace_of_a_huge_stride_on_a_one_window_axis(tmp_path, capsysbinary):
    (tmp_path / "c.json").write_text(json.dumps({"stride": 2**62}))
    assert main(["trace", str(tmp_path / "c.json")]) == 0
    doc = json.loads(capsysbinary.readouterr().out)
    assert doc["spec"]["stride"] == [2**62, 2**62] and doc["spec"]["out_shape"] == [1, 1, 1, 1]


@pytest.mark.slow
def test_serve_classroom_listens_on_the_network_and_gives_join_links_its_address():
    """`convscope serve --classroom`: all interfaces, the address the class opens printed,
    and follow mode's join links on that address (not the teacher's 127.0.0.1)."""
    from convscope.http.hosts import network_address

    command = [sys.executable, "-m", "convscope", "serve", "--classroom", "--port", "0", "--log-level", "warning"]
    process, _, port, printed = launch(command)
    address = network_address()
    try:
        lines = printed + [process.stdout.readline().strip() for _ in range(4)]
        assert lines[0] == f"ConvScope running at http://127.0.0.1:{port}/"
        teacher = f"Teacher link (opens class sessions; keep it to yourself): http://127.0.0.1:{port}/?teacher="
        assert lines[1].startswith(teacher), lines
        token = lines[1].removeprefix(teacher)
        assert len(token) >= 20, token
        assert lines[2].startswith("Connections: up to "), lines
        public = f"http://{address}:{port}/" if address else None
        want = f"Class: students open {public or f'http://<this machine address>:{port}/'}; press Class on your page for the join code and its QR code"
        assert want in lines, lines
        created = httpx.post(
            f"http://127.0.0.1:{port}/api/follow/sessions",
            json={},
            timeout=10,
            headers={"Authorization": f"Bearer {token}"},
        )
        body = created.json()
        assert created.status_code == 201, body
        assert body["join_url"] == (f"{public}?follow={body['code']}" if public else None)
        if address:  # the class reaches it at that address
            assert httpx.get(f"http://{address}:{port}/api/health", timeout=5).status_code == 200
    finally:
        stop_server(process)


def test_serve_on_a_port_another_program_holds_says_so_and_exits_2(capsys):
    """The port is bound before anything is printed: a taken one is an error naming the
    host and port, not a banner followed by uvicorn's exit."""
    from live_server import held_socket

    with held_socket() as taken:
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--host", "127.0.0.1", "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert f"cannot listen on 127.0.0.1 port {port}: Address already in use" in err
    assert "--port 0" in err


@pytest.mark.parametrize("port", [-1, 65536])
def test_serve_refuses_a_port_out_of_range(port, capsys):
    assert main(["serve", "--port", str(port)]) == 2
    assert f"--port must be 0 to 65535, got {port}" in capsys.readouterr().err


def test_each_connection_to_the_served_socket_sends_without_waiting_for_acks():
    """Nagle's algorithm is off on every accepted connection (TCP_NODELAY), as asyncio
    sets it on a TCP socket it accepts on: otherwise a reply written in two parts (head,
    then body) waits for the client's delayed ACK, 40 ms on each request of a kept-alive
    connection after its first (71 of them load the page)."""
    import asyncio
    import socket

    from convscope.cli import _listen

    async def accepted_nodelay() -> int:
        sock = _listen("127.0.0.1", 0)
        sock.listen()
        seen: asyncio.Future = asyncio.get_running_loop().create_future()

        class Accepting(asyncio.Protocol):
            def connection_made(self, transport):
                option = transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                seen.set_result(option)
                transport.close()

        server = await asyncio.get_running_loop().create_server(Accepting, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            option = await asyncio.wait_for(seen, 10)
            writer.close()
        return option

    assert asyncio.run(accepted_nodelay()) != 0
