"""`Sandbox`: runs commands for an agent's tools in its workspace, walled in.

    sandbox = Sandbox(Path("work"), SandboxSettings())
    result = await sandbox.shell("pytest -q", timeout=120)
    print(result.exit_code, result.stdout)

Each command is its own process group (a session of its own), is killed with every process
it started at its timeout or when the call is cancelled, and leaves nothing running: the
sandbox's process namespace ends with the command. With `allow_network: true` each command
gets an `OutboundProxy` of its own, closed when the command ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from holodeck.config.child_env import child_environment
from holodeck.net import OutboundPolicy
from holodeck.sandbox._bwrap import bwrap_argv, bwrap_program
from holodeck.sandbox._errors import SandboxError
from holodeck.sandbox._limits import SANDBOX_LIMITS, SandboxLimits
from holodeck.sandbox._network import proxy_environment, relay_command, relay_python
from holodeck.sandbox._output import CappedText, CommandResult, read_capped
from holodeck.sandbox._proxy import SOCKET_NAME, OutboundProxy
from holodeck.spec.models.sandbox_settings import SandboxSettings

logger = logging.getLogger("holodeck.sandbox")

_ROOT_WARNED = False


def _warn_root(user: int | None) -> None:
    global _ROOT_WARNED
    if not _ROOT_WARNED and user in (None, 0) and os.geteuid() == 0:
        _ROOT_WARNED = True
        logger.warning(
            "HoloDeck runs as root: the kernel does not count root's processes, so the "
            "sandbox's process limit is not enforced (its other walls are); run HoloDeck as "
            "an ordinary user"
        )


class Sandbox:
    """Where an agent's commands run: `workspace` is writable and the current directory;
    `settings.write_paths` (relative to `base`, default the workspace) are writable too;
    the user's home and `hidden` folders are empty; the rest of the system is read-only.
    The environment is the child allow-list of `environ` (default `os.environ`) and the
    names of `settings.env_passthrough`. `user` (a uid, for a HoloDeck running as root)
    runs the commands as that user, with its own group and no others. With
    `settings.allow_network`, commands reach what `outbound` (default: the policy with no
    rules, as `web_fetch` has) lets through, over HTTP(S) proxies only."""

    def __init__(
        self,
        workspace: Path,
        settings: SandboxSettings | None = None,
        *,
        base: Path | None = None,
        limits: SandboxLimits = SANDBOX_LIMITS,
        hidden: Sequence[Path] = (),
        environ: Mapping[str, str] | None = None,
        user: int | None = None,
        outbound: OutboundPolicy | None = None,
    ) -> None:
        settings = settings or SandboxSettings()
        self.workspace = workspace.resolve()
        self.settings = settings
        self.limits = limits
        self.user = user
        self._closing: set[asyncio.Task[None]] = set()  # proxies of started commands
        base = (base or workspace).resolve()
        self.write_paths = [(base / path).resolve() for path in settings.write_paths]
        parent = os.environ if environ is None else environ
        home = Path(parent["HOME"]) if parent.get("HOME") else Path.home()
        self.hidden = list(dict.fromkeys(path.resolve() for path in (home, *hidden)))
        own = {name: parent[name] for name in settings.env_passthrough if name in parent}
        self.environment = child_environment(parent, own)
        if settings.type != "none":
            # the parent's TMPDIR may be a hidden or absent folder in there
            self.environment.update(TMPDIR="/tmp", TMP="/tmp", TEMP="/tmp")
        # `type: none` has no walls: its commands use the host's network as it is
        self.outbound: OutboundPolicy | None = None
        if settings.allow_network and settings.type != "none":
            self.outbound = outbound or OutboundPolicy()
            self.environment = proxy_environment(self.environment)

    def argv(self, command: Sequence[str], *, proxy_folder: Path | None = None) -> list[str]:
        """The command line that runs `command` (argv) here, through the relay to the
        proxy listening in `proxy_folder` when given; `SandboxUnavailable` when bubblewrap
        cannot start."""
        if self.settings.type == "none":
            return list(command)
        writable = [self.workspace, *self.write_paths]
        for path in writable:
            if not path.is_dir():
                raise SandboxError(
                    f"{path} is not a folder: the sandbox can only make folders writable"
                )
        program = bwrap_program()
        if proxy_folder is not None:
            python = relay_python(self.environment, self.hidden, writable)
            command = relay_command(python, SOCKET_NAME, command)
        argv = bwrap_argv(
            program,
            command,
            workspace=self.workspace,
            write_paths=self.write_paths,
            hidden=self.hidden,
            limits=self.limits,
            proxy_folder=proxy_folder,
        )
        _warn_root(self.user)
        return argv

    async def shell(self, command: str, *, timeout: float | None = None) -> CommandResult:
        """Run `command` with `sh -c` (see `run`)."""
        return await self.run(["sh", "-c", command], timeout=timeout)

    async def run(
        self,
        command: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """Run `command` (argv) to its end or its timeout (default `limits.timeout`), its
        output capped, and nothing it started left running."""
        process, proxy = await self._launch(command, stdin=stdin is not None, merge_stderr=False)
        out = CappedText(self.limits.max_output_chars)
        err = CappedText(self.limits.max_output_chars)
        readers = asyncio.gather(read_capped(process.stdout, out), read_capped(process.stderr, err))
        timed_out = False
        try:
            if stdin is not None and process.stdin is not None:
                with contextlib.suppress(ConnectionError):
                    process.stdin.write(stdin)
                    await process.stdin.drain()
                process.stdin.close()
            try:
                async with asyncio.timeout(timeout or self.limits.timeout):
                    await process.wait()
            except TimeoutError:
                timed_out = True
        finally:
            await stop(process)
            if proxy is not None:
                await proxy.aclose()
            try:
                # the pipes close when the last process holding them is gone
                async with asyncio.timeout(2):
                    await readers
            except TimeoutError:
                readers.cancel()
        return CommandResult(
            exit_code=None if timed_out else process.returncode,
            stdout=out.text(),
            stderr=err.text(),
            timed_out=timed_out,
        )

    async def start(
        self, command: Sequence[str], *, stdin: bool = True, merge_stderr: bool = True
    ) -> asyncio.subprocess.Process:
        """Start `command` (argv) with pipes and no time limit, for a caller that stops
        it with `stop` (a terminal); its proxy, if any, closes when it ends."""
        process, proxy = await self._launch(command, stdin=stdin, merge_stderr=merge_stderr)
        if proxy is not None:
            closing = asyncio.create_task(_close_after(process, proxy))
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)
        return process

    async def _launch(
        self, command: Sequence[str], *, stdin: bool, merge_stderr: bool
    ) -> tuple[asyncio.subprocess.Process, OutboundProxy | None]:
        if self.outbound is None:
            return await self._spawn(self.argv(command), stdin, merge_stderr), None
        proxy = OutboundProxy(self.outbound, user=self.user)
        try:
            await proxy.start()
            argv = self.argv(command, proxy_folder=proxy.folder)
            return await self._spawn(argv, stdin, merge_stderr), proxy
        except BaseException:
            await proxy.aclose()
            raise

    async def _spawn(
        self, argv: list[str], stdin: bool, merge_stderr: bool
    ) -> asyncio.subprocess.Process:
        # uvloop (a server's loop) takes no user or group arguments: given only when used
        who: dict[str, Any] = {}
        if self.user is not None:
            who = {"user": self.user, "group": self.user, "extra_groups": []}
        try:
            return await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
                cwd=self.workspace,
                env=self.environment,
                start_new_session=True,
                **who,
            )
        except OSError as error:
            raise SandboxError(f"cannot start {argv[0]}: {error.strerror or error}") from None


async def stop(process: asyncio.subprocess.Process) -> None:
    """Kill `process`'s group (bubblewrap, and with it every process in the sandbox) and
    wait for it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


async def _close_after(process: asyncio.subprocess.Process, proxy: OutboundProxy) -> None:
    try:
        await process.wait()
    finally:
        await proxy.aclose()
