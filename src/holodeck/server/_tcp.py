"""uvicorn's listening socket, as one that says it is TCP.

With several workers uvicorn binds the socket itself, with protocol 0; asyncio turns
Nagle's algorithm off (TCP_NODELAY) only on connections accepted from a socket that
says IPPROTO_TCP, so every answer on a kept-alive connection waited ~40 ms for the
client's delayed ACK (uvicorn issue 3149). Re-wrapping the descriptor reads its real
protocol. Imported only when serving (uvicorn is not imported by the CLI otherwise).
tests/server/test_server_replicas.py checks the option; bench/server_load.py's two-process run
shows the latency it saves."""

from __future__ import annotations

import socket

import uvicorn


class TcpConfig(uvicorn.Config):
    # at module level: uvicorn pickles the config for its worker processes
    def bind_socket(self) -> socket.socket:
        sock = super().bind_socket()
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock = socket.socket(fileno=sock.detach())
        return sock
