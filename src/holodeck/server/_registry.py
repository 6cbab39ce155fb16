"""The agents a server runs: those named on the command line, and images uploaded over
HTTP. Each has its `Agent` (started in the background, so /health answers at once and
/ready tells when tools and servers are up), its session store and its request log."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from holodeck.config.loader import load_agent
from holodeck.config.settings import holodeck_home
from holodeck.errors import HoloDeckError
from holodeck.runtime import Agent, Hosting, Run, RunOptions
from holodeck.server._errors import ApiError
from holodeck.server._file_names import file_stem
from holodeck.server._live_sessions import LiveSessions
from holodeck.server._options import ServeOptions
from holodeck.server._request_log import RequestLog
from holodeck.server._stores import StoreIdentity, open_store, store_identity
from holodeck.server._uploads import NAME_RULE, Staged, UploadStore, without_paths
from holodeck.sessions import SessionStore
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.tools.python_modules import ModuleSpace

log = logging.getLogger("holodeck.server")

READY_WAIT_S = 30.0  # a request for an agent still starting waits this long, then 503


@dataclass(eq=False)
class ServedAgent:
    spec: AgentSpec
    agent: Agent
    store: SessionStore
    log: RequestLog
    live: LiveSessions  # this process's conversations between their turns
    uploaded: bool = False
    modules: ModuleSpace | None = None  # an upload's Python modules, dropped when it closes
    image: Path | None = None  # an upload's unpacked image
    status: Literal["loading", "ready", "failed"] = "loading"
    error: str | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def name(self) -> str:
        return self.spec.name

    def key(self, session_id: str) -> str:
        """The session's key in a store that several agents may share."""
        return f"{self.name}:{session_id}"

    async def start(self) -> None:
        try:
            await self.agent.start()
            self.status = "ready"
        except Exception as exc:  # reported by /ready and to each request
            said = str(exc) or type(exc).__name__
            log.error("agent %s failed to start: %s", self.name, said)
            # an upload's error goes to whoever asks: no path of this server's disk in it
            self.status = "failed"
            self.error = said if self.image is None else without_paths(said, self.image)
        finally:
            self.ready.set()


class Registry:
    """The served agents, owned by the server's `Run`: it closes them (and their logs,
    modules and stores, and what runs in the background) when the server stops."""

    def __init__(
        self,
        options: ServeOptions,
        run: Run,
        specs: Sequence[AgentSpec] = (),
        *,
        hosting: Hosting,
    ) -> None:
        """`hosting`: how the server hosts its agents (uploads add their own trust)."""
        self.options = options
        self.run = run
        self.hosting = hosting
        self._loaded = list(specs)  # the paths' definitions, when the caller has them
        self.agents: dict[str, ServedAgent] = {}
        self.broken: dict[str, str] = {}  # stored uploads that do not load: name -> why
        # what the deploy command's flags say of every agent's run (--model, --harness)
        self.run_options = RunOptions(model=options.model, harness=options.harness)
        self.uploads = UploadStore(options.uploads_dir, options.uploads, self.run_options, hosting)
        self._uploading = asyncio.Lock()  # one upload or stored agent taken in at a time
        self._stores: dict[StoreIdentity, SessionStore] = {}
        self.live = LiveSessions()
        self._starting: set[asyncio.Task[None]] = set()
        run.on_close(self._stop_background)

    # -- loading

    async def open(self) -> None:
        """Load every agent (a definition that does not load stops the server: `holodeck
        deploy` checked them already) and start them in the background."""
        specs = self._loaded or [
            await asyncio.to_thread(load_agent, path) for path in self.options.paths
        ]
        for spec in specs:
            self._add(spec, Agent(spec, self.run_options, hosting=self.hosting))
        if self.options.allow_uploads:
            await asyncio.to_thread(self.uploads.sweep)
            for archive in await asyncio.to_thread(self.uploads.stored):
                async with self._uploading:
                    await self._load_stored(archive)

    def _add(self, spec: AgentSpec, agent: Agent, staged: Staged | None = None) -> ServedAgent:
        if spec.name in self.agents:
            raise HoloDeckError(
                f"two agents are named {spec.name!r}",
                hint="give each served agent its own `name`",
            )
        identity = store_identity(spec.memory, spec, Path(self.options.state_dir))
        store = self._stores.get(identity)
        if store is None:
            store = self._stores[identity] = open_store(identity)
            self.run.keep(store)  # closed after the agents
        served = ServedAgent(
            spec=spec,
            agent=agent,
            store=store,
            log=RequestLog(self._log_path(spec.name), spec.logging),
            live=self.live,
            uploaded=staged is not None,
            modules=staged.modules if staged else None,
            image=staged.image if staged else None,
        )
        self.run.add(agent, then=lambda: _drop(served))
        self.agents[spec.name] = served
        self.broken.pop(spec.name, None)
        task = asyncio.create_task(served.start(), name=f"start {spec.name}")
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)
        return served

    def _log_path(self, name: str) -> Path:
        base = Path(self.options.log_dir) if self.options.log_dir else holodeck_home() / "logs"
        return base / f"agent-{file_stem(name)}.log"

    # -- uploads

    async def upload(self, data: bytes) -> ServedAgent:
        """Take an agent image (.tar.gz bytes): loaded completely in staging (see
        `_uploads`) off the event loop, then kept and served, replacing an earlier upload
        of the same name. Refused uploads raise `ApiError` and leave nothing behind."""
        async with self._uploading:
            staged = await asyncio.to_thread(self.uploads.stage, data, self._command_line())
            current = self.agents.pop(staged.spec.name, None)
            try:
                served = self._add(staged.spec, staged.agent, staged)
            except Exception as exc:  # its session store or log cannot open: keep the old one
                if current is not None:
                    self.agents[current.name] = current
                await asyncio.to_thread(self.uploads.discard, staged)
                raise ApiError(422, "invalid_agent", f"{exc}") from None
            self.uploads.commit(staged)  # a rename in one directory
        if current is not None:  # the old version: its servers, modules and files go
            await self._close(current)
            if current.image is not None and current.image != staged.image:
                await asyncio.to_thread(self.uploads.remove_image, current.image)
        return served

    async def _load_stored(self, archive: Path) -> ServedAgent | None:
        """Serve an upload kept on disk; one that does not load is reported, not fatal."""
        name = archive.name.removesuffix(".tar.gz")
        try:
            staged = await asyncio.to_thread(
                self.uploads.load_stored, archive, self._command_line()
            )
        except ApiError as exc:
            if exc.status == 409:  # the command line's agent of that name serves
                log.warning("uploaded agent %s is not served: %s", name, exc.message)
                return None
            self.broken[name] = exc.message
            log.error("uploaded agent %s does not load (the others serve): %s", name, exc.message)
            return None
        return self._add(staged.spec, staged.agent, staged)

    def _command_line(self) -> frozenset[str]:
        return frozenset(s.name for s in self.agents.values() if not s.uploaded)

    # -- lookup

    async def get(self, name: str | None) -> ServedAgent:
        """The agent `name` (the only one when None), ready to answer."""
        if name is None:
            if len(self.agents) != 1:
                raise ApiError(
                    422,
                    "agent_required",
                    f"{len(self.agents)} agents are served: say which one answers",
                    hint="set `agent` to one of: " + ", ".join(sorted(self.agents)),
                )
            served = next(iter(self.agents.values()))
        else:
            found = self.agents.get(name)
            known = found is not None or name in self.broken
            if not known and self.options.allow_uploads and NAME_RULE.fullmatch(name):
                archive = self.uploads.archive_of(name)
                if archive.is_file():  # another process of this server took the upload
                    async with self._uploading:
                        found = self.agents.get(name) or await self._load_stored(archive)
            if found is None and name in self.broken:
                raise ApiError(
                    503,
                    "agent_failed",
                    f"uploaded agent {name} does not load: {self.broken[name]}",
                    hint="upload a corrected image over POST /v1/agents",
                )
            if found is None:
                raise ApiError(
                    404,
                    "unknown_agent",
                    f"no agent named {name!r} is served here",
                    hint="GET /v1/agents lists them",
                )
            served = found
        if not served.ready.is_set():
            try:
                await asyncio.wait_for(served.ready.wait(), READY_WAIT_S)
            except TimeoutError:
                raise ApiError(
                    503,
                    "agent_starting",
                    f"agent {served.name} is still starting its tools",
                    hint="retry shortly; GET /ready tells when it is up",
                    headers={"Retry-After": "2"},
                ) from None
        if served.status == "failed":
            raise ApiError(
                503,
                "agent_failed",
                f"agent {served.name} failed to start: {served.error}",
                hint="upload a corrected image over POST /v1/agents" if served.uploaded else None,
            )
        return served

    # -- closing

    async def _close(self, served: ServedAgent) -> None:
        await self.run.release(served.agent)

    async def _stop_background(self) -> None:
        """Before the agents close: their starts, then the sessions' own servers."""
        for task in list(self._starting):
            task.cancel()
        await asyncio.gather(*self._starting, return_exceptions=True)
        await self.live.aclose()


def _drop(served: ServedAgent) -> None:
    """What goes with a served agent once it has closed: its log, an upload's modules."""
    try:
        served.log.close()
    finally:
        if served.modules is not None:
            served.modules.close()
