"""server/http/protocol.py subclasses uvicorn's h11 protocol and reaches into it (the request
cycle, its scope and flags, the flow control, the connection set). uvicorn documents
none of these members, so pyproject.toml pins the uvicorn range this suite runs, and
this test drives the subclass through uvicorn's own objects: when a new uvicorn moves
a member the subclass uses, it fails here, by name, instead of in a classroom."""

from __future__ import annotations

import asyncio

import h11
import uvicorn
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle
from uvicorn.server import ServerState

from convscope.http.protocol import DeadlineH11Protocol
from convscope.http.replies import ABORT_EXTENSION

# what server/http/protocol.py reads or writes on uvicorn's objects
PROTOCOL_MEMBERS = (
    "connection_made",
    "connection_lost",
    "handle_events",
    "on_response_complete",
    "pause_writing",
    "resume_writing",
    "shutdown",
    "data_received",
)
INSTANCE_MEMBERS = ("cycle", "conn", "transport", "loop", "flow")
CYCLE_MEMBERS = ("scope", "response_started", "response_complete", "disconnected", "message_event")


class FakeTransport(asyncio.Transport):
    def __init__(self, peer: str = "127.0.0.9"):
        super().__init__()
        self.peer = peer
        self.written = b""
        self.closing = False
        self.aborted = False

    def get_extra_info(self, name, default=None):
        return {"peername": (self.peer, 40000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def write(self, data):
        self.written += data

    def is_closing(self):
        return self.closing

    def close(self):
        self.closing = True

    def abort(self):
        self.aborted = self.closing = True

    def pause_reading(self):
        pass

    def resume_reading(self):
        pass

    def set_write_buffer_limits(self, high=None, low=None):
        pass

    def get_write_buffer_size(self):
        return 0


def test_the_members_the_subclass_uses_are_uvicorns():
    missing = [m for m in PROTOCOL_MEMBERS if not callable(getattr(H11Protocol, m, None))]
    assert not missing, f"uvicorn {uvicorn.__version__}'s H11Protocol lacks {missing}"


def test_a_request_through_the_subclass_gets_the_abort_extension_and_the_caps_count():
    seen: dict = {}

    async def app(scope, receive, send):
        seen["scope"] = scope
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    async def scenario():
        config = Config(app=app, lifespan="off", log_level="warning")
        config.load()
        DeadlineH11Protocol.request_timeout, DeadlineH11Protocol.idle_timeout = 5.0, 5.0
        DeadlineH11Protocol.max_connections, DeadlineH11Protocol.client_max_connections = 10, 1
        state = ServerState()
        first = DeadlineH11Protocol(config=config, server_state=state, app_state={})
        transport = FakeTransport()
        first.connection_made(transport)
        missing = [m for m in INSTANCE_MEMBERS if not hasattr(first, m)]
        assert not missing, f"uvicorn {uvicorn.__version__}'s H11Protocol instances lack {missing}"
        assert first.conn.their_state is h11.IDLE
        # a second connection from the same address is over its cap of 1: a raw 503
        second = DeadlineH11Protocol(config=config, server_state=state, app_state={})
        refused = FakeTransport()
        second.connection_made(refused)
        assert refused.written.startswith(b"HTTP/1.1 503") and refused.closing
        first.data_received(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert isinstance(first.cycle, RequestResponseCycle)
        missing = [m for m in CYCLE_MEMBERS if not hasattr(first.cycle, m)]
        assert not missing, f"uvicorn {uvicorn.__version__}'s RequestResponseCycle lacks {missing}"
        for _ in range(5):
            await asyncio.sleep(0)
        assert b"200" in transport.written.split(b"\r\n", 1)[0]
        abort = seen["scope"]["extensions"][ABORT_EXTENSION]["abort"]
        abort()
        assert transport.aborted
        first.connection_lost(None)
        second.connection_lost(None)
        assert DeadlineH11Protocol.open_connections == 0 and DeadlineH11Protocol.open_by_client == {}

    try:
        asyncio.run(scenario())
    finally:
        DeadlineH11Protocol.request_timeout = DeadlineH11Protocol.idle_timeout = None
        DeadlineH11Protocol.max_connections = DeadlineH11Protocol.client_max_connections = 0
