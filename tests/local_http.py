"""The tests' local HTTP servers: the standard library's threading server, quiet about a
client that hangs up (a test's client often closes a connection once it has what it needs;
the server would print that as a traceback among the test results)."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any


class LocalHTTPServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)
