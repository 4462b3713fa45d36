"""Follow mode: a teacher drives one session; students' pages follow its state live.

A session is created by a teacher and known by three things: a short join code
(students type it), a session id (the channel subscribers listen to) and a secret
(kept by the teacher's page). As in reveal.js's multiplex plugin, the session id is
derived from the secret by hashing, so the server checks a driver's secret by hashing
it again; the secret itself is never stored or sent to anyone.

- ``session``: codes, secrets, the hash check and the size-bounded state (pure)
- ``channel``: one worker's fan-out of a session's latest state to its subscribers
- ``broker``: the broker interface and the in-process broker (one worker)
- ``redis_broker``: the Redis broker (several workers or hosts; ``convscope[redis]``)
- ``routes``: the HTTP API, subscribers by Server-Sent Events; it chooses the broker
"""

from .broker import Broker, MemoryBroker

__all__ = ["Broker", "MemoryBroker"]
