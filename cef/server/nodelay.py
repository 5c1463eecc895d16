"""uvicorn's HTTP/1.1 protocol with ``TCP_NODELAY`` on every connection (``cef serve http --workers``).

A worker process gets the listening socket from uvicorn's supervisor, and asyncio does not set
``TCP_NODELAY`` on the connections of such a socket: each small answer then waits for the client's
delayed acknowledgement (about 40 ms on Linux) instead of leaving at once.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["NoDelayH11"]


class NoDelayH11(H11Protocol):
    def connection_made(self, transport: Any) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
