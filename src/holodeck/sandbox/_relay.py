# holodeck sandbox relay
"""Runs inside the sandbox, before the command: `python3 -I -c <this file> SOCKET PORT
COMMAND...`. It listens on 127.0.0.1:PORT in the sandbox's own network namespace, then
starts the command in its place (`exec`), and in a process of its own forwards each
connection made to that port to HoloDeck's proxy on the Unix socket SOCKET, where every
destination is checked. The port is bound before the command starts, so the command's
first request never finds it closed; the relay ends with the sandbox's process namespace.

Standalone on purpose: it imports nothing of HoloDeck (the sandbox may not see it) and
runs on any Python 3.8 or later.
"""

import asyncio
import os
import socket
import sys


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()  # a half-close passes through
    except OSError:
        writer.close()


async def _forward(path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        upstream_reader, upstream_writer = await asyncio.open_unix_connection(path)
    except OSError:
        writer.close()
        return
    await asyncio.gather(_pump(reader, upstream_writer), _pump(upstream_reader, writer))
    upstream_writer.close()
    writer.close()


async def _relay(listener: socket.socket, path: str) -> None:
    server = await asyncio.start_server(
        lambda r, w: _forward(path, r, w), sock=listener, backlog=128
    )
    async with server:
        await server.serve_forever()


def main() -> None:
    path, port, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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
        asyncio.run(_relay(listener, path))
        os._exit(0)
    os.wait()
    listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"{command[0]}: {error.strerror}\n")
        sys.exit(127)


if __name__ == "__main__":
    main()
