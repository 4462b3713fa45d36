"""The ``convscope`` command line.

    convscope serve [--host 127.0.0.1] [--port 8000] [--open] [--workers N] [limits...]
    convscope trace CONFIG.json [--ndjson] [-o FILE]
    convscope trace CONFIG.json --code [--step N]
    convscope export LESSON.html (--preset NAME | --setup CONFIG.json)
    convscope export ANIM.gif|ANIM.webm (--preset NAME | --setup CONFIG.json) [--phase NAME | --steps FROM-TO]
        [--size 1920x1080] [--fps 4] [--view V] [--projector]
    convscope check student.py[:FUNCTION] [--convention cs231n|layer|torch|torch-transposed|torch-conv1d]
        [--json] [--gradescope PATH]
    convscope --version

``serve`` exports its options as CONVSCOPE_* variables and starts uvicorn with the app
factory ``convscope.app:create_app_from_env``, so that every worker reads the same
settings. Binding to all interfaces (``--host 0.0.0.0``) is an explicit choice, to
share the page with a class.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import sys
import threading
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from convcore import __version__

from .export.command import add_export_command, export_command
from .http.hosts import ALL_INTERFACES, network_address
from .settings import Settings, SettingsError

__all__ = ["build_parser", "main", "run_uvicorn"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="convscope",
        description="See how a 2-D convolution computes its output and its gradients, step by step.",
    )
    parser.add_argument("--version", action="version", version=f"convscope {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser(
        "serve", help="run the page and the API", description="Run the page and the API with uvicorn."
    )
    serve.add_argument(
        "--host",
        default=None,
        help="address to bind (default 127.0.0.1, this machine only; 0.0.0.0 shares with your network; --classroom: 0.0.0.0)",
    )
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port, printed)")
    serve.add_argument("--open", action="store_true", help="open the page in a browser")
    serve.add_argument(
        "--classroom",
        action="store_true",
        help="serve a class: listen on all interfaces (unless --host says otherwise) and give follow mode's join links this machine's network address",
    )
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1; the service is stateless)")
    serve.add_argument(
        "--max-tensor-elements", type=int, help="elements allowed per tensor (CONVSCOPE_MAX_TENSOR_ELEMENTS)"
    )
    serve.add_argument("--max-events", type=int, help="events allowed per trace (CONVSCOPE_MAX_EVENTS)")
    serve.add_argument(
        "--max-trace-bytes", type=int, help="predicted bytes allowed per trace (CONVSCOPE_MAX_TRACE_BYTES)"
    )
    serve.add_argument("--max-body-bytes", type=int, help="bytes allowed per request body (CONVSCOPE_MAX_BODY_BYTES)")
    serve.add_argument("--max-builds", type=int, help="traces built or sent at once per worker (CONVSCOPE_MAX_BUILDS)")
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="NAME",
        help="accept this Host name too (repeatable; CONVSCOPE_ALLOWED_HOSTS)",
    )
    serve.add_argument(
        "--cors-origin",
        action="append",
        default=None,
        metavar="ORIGIN",
        help="allow API calls from this origin (repeatable; CORS is off by default)",
    )
    serve.add_argument(
        "--redis-url",
        help="Redis for follow sessions shared by all workers (CONVSCOPE_FOLLOW_REDIS_URL; pip install 'convscope[redis]')",
    )
    serve.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])

    trace = commands.add_parser(
        "trace",
        help="write a trace without a server",
        description="Write a trace document (or NDJSON lines) for a config file.",
    )
    trace.add_argument("config", help="a JSON trace config file, '-' for standard input, or preset:NAME")
    form = trace.add_mutually_exclusive_group()
    form.add_argument(
        "--ndjson", action="store_true", help="write NDJSON lines (header, events, end) instead of one document"
    )
    form.add_argument(
        "--code",
        action="store_true",
        help="print the code beside the steps (the listing, numbered) instead of the trace; with --step, "
        "that step's line marked >> (its other lines > ) under the step's loop values and text",
    )
    trace.add_argument(
        "--step", type=int, metavar="N", help="with --code: the step to mark, numbered from 1 as the page shows it"
    )
    trace.add_argument("-o", "--output", help="output file (default standard output)")
    add_export_command(commands)

    from convcore.grader.command import add_parser as add_check

    check = add_check(commands)
    from convcore.grader.command import add_trace_parser

    add_trace_parser(commands)
    check.add_argument(
        "--lesson",
        metavar="PATH",
        help="also write the first failing case, your output compared, as a lesson file (one HTML "
        "file that plays offline, no server needed)",
    )
    return parser


def _serve_settings(args: argparse.Namespace) -> Settings:
    changes: dict[str, Any] = {"bind_host": args.host}
    if args.classroom:
        address = network_address() if args.host in ALL_INTERFACES else args.host
        if address:
            changes["public_url"] = f"http://{address}:{args.port}/"
    for name in ("max_tensor_elements", "max_events", "max_trace_bytes", "max_body_bytes", "max_builds"):
        value = getattr(args, name)
        if value is not None:
            changes[name] = value
    if args.cors_origin:
        changes["cors_origins"] = tuple(args.cors_origin)
    if args.allowed_host:
        changes["allowed_hosts"] = tuple(args.allowed_host)
    if args.redis_url:
        changes["follow_redis_url"] = args.redis_url
    return Settings.from_env().replace(**changes)


def _url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ALL_INTERFACES else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything is printed: the URL printed is one
    that answers (port 0 becomes the free port the system gave), and a port another
    program holds is a clear error here, not uvicorn's exit after the banner."""
    # (IPPROTO_TCP named, not 0: asyncio turns Nagle's algorithm off only on a socket
    # whose proto says TCP, and without that a reply's second write waits for the
    # client's delayed ACK, 40 ms on every request of a kept-alive connection after its
    # first)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)  # (the workers of --workers N accept on it)
    return sock


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .http.protocol import connection_cap, raise_descriptor_limit

    if args.host is None:  # (a class reaches this machine over the network)
        args.host = "0.0.0.0" if args.classroom else "127.0.0.1"
    if args.workers < 1:
        print(f"convscope: --workers must be at least 1, got {args.workers}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"convscope: --port must be 0 to 65535, got {args.port}", file=sys.stderr)
        return 2
    try:
        Settings.from_env()  # (a bad CONVSCOPE_* variable is reported before the port is taken)
        sock = _listen(args.host, args.port)
    except SettingsError as exc:
        print(f"convscope: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"convscope: cannot listen on {args.host} port {args.port}: {exc.strerror or exc}"
            " (another program holds it? choose another with --port, or --port 0 for any free one)",
            file=sys.stderr,
        )
        return 2
    args.port = sock.getsockname()[1]
    try:
        settings = _serve_settings(args)
    except SettingsError as exc:
        sock.close()
        print(f"convscope: {exc}", file=sys.stderr)
        return 2
    if args.workers > 1 and not settings.follow_redis_url and settings.follow_max_sessions:
        # each worker's in-process broker would see only its own students
        print("Follow mode is off: with several workers it needs --redis-url", flush=True)
        settings = settings.replace(follow_max_sessions=0)
    if not settings.teacher_token:  # (every worker must know the same one: it goes in the environment)
        settings = settings.replace(teacher_token=secrets.token_urlsafe(18))
    before, after = raise_descriptor_limit()
    os.environ.update(settings.to_env())
    url = _url(args.host, args.port)
    print(f"ConvScope running at {url}", flush=True)
    if settings.follow_max_sessions:
        print(
            f"Teacher link (opens class sessions; keep it to yourself): {url}?teacher={settings.teacher_token}",
            flush=True,
        )
    cap = connection_cap(settings)
    print(
        f"Connections: up to {cap} open per worker, {settings.client_max_connections} per client address "
        f"(descriptor limit {after}{'' if after == before else f', raised from {before}'})",
        flush=True,
    )
    if args.classroom:
        print(
            f"Class: students open {settings.public_url or f'http://<this machine address>:{args.port}/'}; "
            "press Class on your page for the join code and its QR code",
            flush=True,
        )
    if args.host in ALL_INTERFACES:
        print(
            f"Listening on all interfaces: others on your network can open http://<this machine's address>:{args.port}/",
            flush=True,
        )
    if args.open:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    config = uvicorn.Config(
        f"{__package__}.app:create_app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        http=f"{__package__}.http.protocol:DeadlineH11Protocol",  # whole-request and idle-reader deadlines
        server_header=False,
        timeout_graceful_shutdown=settings.shutdown_timeout,
    )
    try:
        return run_uvicorn(config, sock)
    finally:
        sock.close()


def run_uvicorn(config: Any, sock: socket.socket) -> int:
    """What uvicorn.run does, on the socket ``serve`` bound; the exit code."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    try:
        if config.workers > 1:
            Multiprocess(config, sockets=[sock]).run()
            return 0
        server = uvicorn.Server(config)
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        return 0
    return 0 if server.started else 3  # (uvicorn's code for a start that failed)


def _case_lesson(config: dict[str, Any], path: Path, title: str) -> None:
    """`convscope check --lesson`: a grader's counterexample as a lesson file."""
    from .export.lesson import lesson_html

    path.write_text(
        lesson_html(
            config,
            name="case",
            title=title,
            sentence="The smallest case the grader found failing, your numbers compared with the right ones.",
        ),
        encoding="utf-8",
    )


def _code_lesson(document: dict[str, Any], case: Any, path: Path, title: str) -> None:
    """`convscope check --trace`, `convscope trace-code`: a student's code's trace as a
    lesson file (its code panel open at the first step)."""
    from convcore.mistakes import get_convention

    from .export.lesson import document_lesson, lesson_file

    config = case.trace_config(get_convention(document["mistake"]["convention"]).layout)
    sentence = "Every write your code makes, beside the truth; D jumps to its first wrong write."
    path.write_text(
        lesson_file(document_lesson(document, config, name="your-code", title=title, sentence=sentence)),
        encoding="utf-8",
    )


def _read_config(source: str) -> dict[str, Any]:
    if source.startswith("preset:"):
        from .traces.presets import get_preset

        preset = get_preset(source.split(":", 1)[1])
        if preset is None:
            from .traces.presets import PRESETS

            raise ValueError(f"no preset named {source.split(':', 1)[1]!r}; the presets are {', '.join(PRESETS)}")
        return preset.to_dict()["config"]
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    config = json.loads(text)
    if not isinstance(config, dict):
        raise ValueError(f"the config must be a JSON object, got {type(config).__name__}")
    return config


def _code(config: dict[str, Any], step: int | None) -> str:
    """``trace --code``: the listing with step ``step``'s lines marked (generated up to
    that step only)."""
    from itertools import islice

    from convcore.trace import iter_trace
    from convcore.trace.code_text import code_text

    lines = iter_trace(config)
    header = next(lines)
    if step is None:
        return code_text(header)
    # (numbered from 1, as the page and `convscope export --step` number steps)
    if not 1 <= step <= header["total_events"]:
        raise ValueError(f"--step {step}: this trace has steps 1 to {header['total_events']}")
    event = next(islice(lines, step - 1, None))
    return code_text(header, event, step)


def write_trace(args: argparse.Namespace) -> int:
    from convcore.spec import ConvSpecError
    from convcore.trace import build_trace, iter_trace

    from .http.encoding import encode_json

    try:
        config = _read_config(args.config)
        out = open(args.output, "wb") if args.output else sys.stdout.buffer
    except (OSError, ValueError) as exc:  # includes a number of more than 4300 digits
        print(f"convscope: {exc}", file=sys.stderr)
        return 2
    except (RecursionError, OverflowError) as exc:  # JSON the parser cannot hold
        what = "nests too deep" if isinstance(exc, RecursionError) else "holds a number too large"
        print(f"convscope: {args.config}: the JSON {what} to read ({type(exc).__name__})", file=sys.stderr)
        return 2
    try:
        if args.code:
            out.write(_code(config, args.step).encode("utf-8"))
        elif args.ndjson:
            for line in iter_trace(config, arrays=True):  # encode_json writes the arrays
                out.write(encode_json(line) + b"\n")
        else:
            out.write(encode_json(build_trace(config, arrays=True)) + b"\n")
    except ConvSpecError as exc:  # bad input; anything else is a bug and shows its traceback
        field = exc.field
        print(f"convscope: {field + ': ' if field else ''}{exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # --code: no listing, a step out of range
        print(f"convscope: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader left (e.g. `| head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if args.output:
            out.close()
        else:
            try:
                out.flush()
            except BrokenPipeError:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args)
    if args.command == "trace":
        return write_trace(args)
    if args.command == "check":
        from convcore.grader.command import run as check

        return check(args, write_lesson=_case_lesson, write_trace=_code_lesson)
    if args.command == "trace-code":
        from convcore.grader.command import run_trace

        return run_trace(args, _code_lesson)
    if args.command == "export":
        return export_command(args)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
