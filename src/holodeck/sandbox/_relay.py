# holodeck sandbox relay
"""Runs inside the sandbox, before the command: `python3 -I -S -c <this file> SOCKET PORT
COMMAND...`. It listens on 127.0.0.1:PORT in the sandbox's own network namespace, then
starts the command in its place (`exec`), and in a process of its own forwards each
connection made to that port to HoloDeck's proxy on the Unix socket SOCKET, where every
destination is checked. The port is bound before the command starts, so the command's
first request never finds it closed; the relay ends with the sandbox's process namespace.

Standalone on purpose: it imports nothing of HoloDeck (the sandbox may not see it), and
the command waits only for `os`, `sys` and `_socket` to load: the relay's own modules
(`selectors`, not asyncio, which takes 100 ms and more) load after the fork.
"""

import os
import sys

TYPE_CHECKING = False  # without importing `typing`, which the command would wait for
if TYPE_CHECKING:
    import selectors
    import socket

CHUNK = 65536
BACKLOG = 256 * 1024  # bytes waiting for one side before the other is read no more


class _Side:
    """One socket of a forwarded connection: the bytes waiting to be sent to it, whether
    its end has sent EOF, and whether its writing half is shut."""

    def __init__(self, selector: "selectors.BaseSelector", sock: "socket.socket") -> None:
        self.selector = selector
        self.sock = sock
        self.pending = bytearray()
        self.peer = self
        self.eof = False
        self.shut = False
        self.events = 0
        self.closed = False
        sock.setblocking(False)

    def watch(self) -> None:
        """Read while the peer has room; write while bytes wait."""
        events = selectors.EVENT_WRITE if self.pending else 0
        if not self.eof and len(self.peer.pending) < BACKLOG:
            events |= selectors.EVENT_READ
        if events == self.events:
            return
        if not self.events:
            self.selector.register(self.sock, events, self)
        elif not events:
            self.selector.unregister(self.sock)
        else:
            self.selector.modify(self.sock, events, self)
        self.events = events

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.events:
                self.selector.unregister(self.sock)
            self.sock.close()


def _pair(selector: "selectors.BaseSelector", inside: "socket.socket", path: str) -> None:
    outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        outside.connect(path)
    except OSError:
        outside.close()
        inside.close()
        return
    a, b = _Side(selector, inside), _Side(selector, outside)
    a.peer, b.peer = b, a
    a.watch()
    b.watch()


def _step(side: _Side, mask: int) -> None:
    peer = side.peer
    try:
        if mask & selectors.EVENT_READ:
            data = side.sock.recv(CHUNK)
            if data:
                peer.pending += data
            else:
                side.eof = True
        if mask & selectors.EVENT_WRITE:
            del side.pending[: side.sock.send(side.pending)]
        for one in (side, peer):
            if one.eof and not one.peer.pending and not one.peer.shut:
                one.peer.shut = True
                one.peer.sock.shutdown(socket.SHUT_WR)  # a half-close passes through
    except BlockingIOError:
        pass
    except OSError:
        side.close()
        peer.close()
        return
    if side.eof and peer.eof and not side.pending and not peer.pending:
        side.close()
        peer.close()
        return
    side.watch()
    peer.watch()


def _relay(fd: int, path: str) -> None:
    # the modules the functions above use, loaded only here (after the fork)
    global selectors, socket
    import selectors
    import socket

    listener = socket.socket(fileno=fd)
    selector = selectors.DefaultSelector()
    listener.setblocking(False)
    selector.register(listener, selectors.EVENT_READ, None)
    while True:
        for key, mask in selector.select():
            if key.data is None:
                try:
                    inside, _ = listener.accept()
                except OSError:
                    continue
                _pair(selector, inside, path)
            else:
                _step(key.data, mask)


def main() -> None:
    import _socket

    path, port, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    if os.fork() == 0:
        # twice, so the relay is the sandbox's init's child, not a child the command
        # would find when it waits for its own
        if os.fork() != 0:
            os._exit(0)
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the command's pipes close when the command is done
            os.dup2(quiet, fd)
        _relay(listener.detach(), path)
    os.wait()
    listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"{command[0]}: {error.strerror}\n")
        sys.exit(127)


if __name__ == "__main__":
    main()
