"""A kept Python session: one sandboxed interpreter per agent session, so a name defined
in one `run_python` call is there in the next (`code: {session: kept}`).

    async with PythonSession(sandbox) as python:
        await python.run("rows = [1, 2, 3]")
        print(await python.run("sum(rows)"))   # "completed\\nstdout:\\n6"

The interpreter runs `DRIVER` (`python3 -I -u -c DRIVER`), which reads each snippet framed
on its stdin (`<marker> <bytes>\\n` then the code), runs it in one namespace, and ends its
stdout and stderr with the marker, so the output of each call is told from the next. Each
call has its own timeout and output cap; at the timeout (or when the call is cancelled)
the interpreter is killed with everything it started, and the next call starts a fresh one
saying so. Leaving the context (the session ending) stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from types import TracebackType

from holodeck.sandbox import CappedText, Sandbox, stop

# Runs inside the sandbox. The control channel is a copy of stdin; the snippet's own stdin
# is /dev/null (an `input()` must not read the next frame). Output goes straight to fds 1
# and 2, so a subprocess's output is the call's output too. A trailing expression is shown
# as the interactive interpreter shows it.
DRIVER = r"""
import ast, linecache, os, sys, traceback
control = os.fdopen(os.dup(0), "rb")
blank = os.open(os.devnull, os.O_RDONLY)
os.dup2(blank, 0)
os.close(blank)
names = {"__name__": "__main__", "__builtins__": __builtins__}
count = 0
own = ("<string>", ast.__file__)  # this driver's frames and ast's are not the snippet's
while True:
    header = control.readline()
    if not header:
        break
    marker, size = header.split()
    source = control.read(int(size)).decode("utf-8", "replace")
    count += 1
    where = "<call %d>" % count
    linecache.cache[where] = (len(source), None, source.splitlines(True), where)
    status = b"0"
    try:
        tree = ast.parse(source, where)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, where, "exec"), names)
        if last is not None:
            sys.displayhook(eval(compile(last, where, "eval"), names))
    except SystemExit:
        raise
    except BaseException as error:
        frames = error.__traceback__
        while frames is not None and frames.tb_frame.f_code.co_filename in own:
            frames = frames.tb_next
        traceback.print_exception(type(error), error, frames)
        status = b"1"
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os.write(2, b"\0" + marker + b"\0")
    os.write(1, b"\0" + marker + b"\0" + status)
"""

RESTARTED = (
    "note: the previous interpreter {why}; this call ran in a fresh one, so names defined "
    "in earlier calls are gone"
)


class _Stream:
    """One output pipe of the interpreter, read call by call up to that call's marker."""

    def __init__(self, reader: asyncio.StreamReader | None) -> None:
        self.reader = reader
        self.rest = b""  # read past a marker: the start of what comes next

    async def until(self, marker: bytes, into: CappedText, extra: int = 0) -> bytes | None:
        """Add what comes before `marker` to `into`; the `extra` bytes after it, or None
        when the pipe ends first (the interpreter is gone)."""
        keep = len(marker) - 1  # a marker may straddle two reads
        while True:
            found = self.rest.find(marker)
            if found >= 0 and len(self.rest) >= found + len(marker) + extra:
                into.add(self.rest[:found])
                end = found + len(marker)
                tail, self.rest = self.rest[end : end + extra], self.rest[end + extra :]
                return tail
            if found < 0 and len(self.rest) > keep:
                into.add(self.rest[: len(self.rest) - keep])
                self.rest = self.rest[len(self.rest) - keep :]
            chunk = await self.reader.read(65536) if self.reader is not None else b""
            if not chunk:
                into.add(self.rest)
                self.rest = b""
                return None
            self.rest += chunk


class PythonSession:
    """One kept interpreter in `sandbox`, started at the first call; `python` is the
    interpreter's name as the sandbox sees it."""

    def __init__(self, sandbox: Sandbox, *, python: str = "python3") -> None:
        self.sandbox = sandbox
        self.python = python
        self._process: asyncio.subprocess.Process | None = None
        self._out = _Stream(None)
        self._err = _Stream(None)
        self._ended: str | None = None  # why the last interpreter is gone, told once
        self._lock = asyncio.Lock()  # calls the model makes at once run one after another

    async def _ensure(self) -> str | None:
        """A running interpreter; the note to give when it replaces one that ended."""
        process = self._process
        if process is not None and process.returncode is not None:
            await self._drop(f"exited with code {process.returncode}")
        if self._process is None:
            command = [self.python, "-I", "-u", "-c", DRIVER]
            self._process = await self.sandbox.start(command, merge_stderr=False)
            self._out = _Stream(self._process.stdout)
            self._err = _Stream(self._process.stderr)
        why, self._ended = self._ended, None
        return RESTARTED.format(why=why) if why else None

    async def _drop(self, why: str | None) -> None:
        """Stop the interpreter (and all it started); `why` is told at the next call."""
        process, self._process = self._process, None
        if process is not None:
            await stop(process)
        if why and self._ended is None:
            self._ended = why

    async def run(self, code: str, timeout: float | None = None) -> str:
        """Run Python `code` in the interpreter kept for this conversation: names defined
        by earlier calls are still there, and a final expression's value is printed."""
        async with self._lock:
            note = await self._ensure()
            process = self._process
            assert process is not None and process.stdin is not None
            limit = self.sandbox.limits.max_output_chars
            out, err = CappedText(limit), CappedText(limit)
            seconds = timeout or self.sandbox.limits.timeout
            nonce = secrets.token_hex(16).encode()
            marker = b"\x00" + nonce + b"\x00"
            data = code.encode("utf-8")
            status: bytes | None = None
            try:
                async with asyncio.timeout(seconds):
                    with contextlib.suppress(ConnectionError):
                        process.stdin.write(nonce + b" %d\n" % len(data))
                        process.stdin.write(data)
                        await process.stdin.drain()
                    status, _ = await asyncio.gather(
                        self._out.until(marker, out, extra=1),
                        self._err.until(marker, err),
                    )
            except TimeoutError:
                await self._drop("was stopped at the timeout")
                await self._rest(out, err)
                verdict = (
                    f"timed out after {seconds:g} s: the interpreter and everything it "
                    "started were stopped; the next call starts a fresh one"
                )
            except BaseException:
                await self._drop("was stopped when a call was cancelled")
                raise
            else:
                if status is None:
                    exit_code = await process.wait()
                    await self._drop(f"exited with code {exit_code}")
                    verdict = (
                        f"the interpreter exited with code {exit_code} during this call; the "
                        "next call starts a fresh one"
                    )
                elif status == b"1":
                    verdict = "raised an exception (the traceback is in stderr); names "
                    verdict += "defined before it are kept"
                else:
                    verdict = "completed"
            parts = [note] if note else []
            parts.append(verdict)
            if text := out.text():
                parts.append(f"stdout:\n{text}")
            if text := err.text():
                parts.append(f"stderr:\n{text}")
            return "\n".join(parts)

    async def _rest(self, out: CappedText, err: CappedText) -> None:
        """What the stopped interpreter wrote before it was stopped and is not read yet."""
        never = b"\x00" + secrets.token_hex(16).encode()
        with contextlib.suppress(TimeoutError):
            # the pipes close when the last process holding them is gone
            async with asyncio.timeout(2):
                await asyncio.gather(self._out.until(never, out), self._err.until(never, err))

    async def aclose(self) -> None:
        """Stop the interpreter (the session ends)."""
        async with self._lock:
            await self._drop(None)
            self._ended = None

    async def __aenter__(self) -> PythonSession:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
