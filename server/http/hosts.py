"""The Host names the service answers to (``convscope.http.security.HostCheck``).

Always 127.0.0.1, localhost and ::1; the address it is bound to; with ``--host
0.0.0.0`` (or ``::``) the machine's own names and addresses, as students type them;
and any given with CONVSCOPE_ALLOWED_HOSTS ("*" accepts any Host).
"""

from __future__ import annotations

import socket

from ..settings import Settings

__all__ = ["ALL_INTERFACES", "allowed_hosts", "machine_names", "network_address"]

ALL_INTERFACES = ("0.0.0.0", "::", "")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def machine_names() -> set[str]:
    """This machine's host names and the addresses of its interfaces (best effort)."""
    names: set[str] = set()
    try:
        hostname = socket.gethostname()
        names |= {hostname, f"{hostname}.local", socket.getfqdn()}
        for info in socket.getaddrinfo(hostname, None):
            names.add(str(info[4][0]))
    except OSError:
        pass
    try:
        import psutil  # a dependency; guarded so that a broken install still serves localhost

        for addresses in psutil.net_if_addrs().values():
            for address in addresses:
                if address.family in (socket.AF_INET, socket.AF_INET6):
                    names.add(address.address.split("%", 1)[0])
    except ImportError:
        pass
    try:  # the address that routes outwards (no packet is sent by a UDP connect)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            names.add(probe.getsockname()[0])
    except OSError:
        pass
    return {name.lower() for name in names if name}


def network_address() -> str | None:
    """The IPv4 address others on the network reach this machine at (the one that routes
    outwards; no packet is sent by a UDP connect), or None without a network."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def allowed_hosts(settings: Settings) -> frozenset[str]:
    hosts = set(LOOPBACK) | {h.lower() for h in settings.allowed_hosts}
    if settings.bind_host in ALL_INTERFACES:
        hosts |= machine_names()
    else:
        hosts.add(settings.bind_host.lower())
    return frozenset(hosts)
