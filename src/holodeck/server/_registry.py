"""The agents a server runs: those named on the command line, and images uploaded over
HTTP. Each has its `Agent` (started in the background, so /health answers at once and
/ready tells when tools and servers are up), its session store and its request log."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from holodeck.config.loader import load_agent
from holodeck.config.settings import holodeck_home
from holodeck.errors import HoloDeckError
from holodeck.llm.run_options import RunOptions
from holodeck.runtime import Agent
from holodeck.server._errors import ApiError
from holodeck.server._live_sessions import LiveSessions
from holodeck.server._options import ServeOptions
from holodeck.server._request_log import RequestLog
from holodeck.server._stores import StoreIdentity, open_store, store_identity
from holodeck.sessions import SessionStore
from holodeck.spec.agent_spec import AgentSpec

log = logging.getLogger("holodeck.server")

READY_WAIT_S = 30.0  # a request for an agent still starting waits this long, then 503
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(eq=False)
class ServedAgent:
    spec: AgentSpec
    agent: Agent
    store: SessionStore
    log: RequestLog
    live: LiveSessions  # this process's conversations between their turns
    uploaded: bool = False
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
            self.status, self.error = "failed", str(exc) or type(exc).__name__
            log.error("agent %s failed to start: %s", self.name, self.error)
        finally:
            self.ready.set()


class Registry:
    def __init__(self, options: ServeOptions, specs: Sequence[AgentSpec] = ()) -> None:
        self.options = options
        self._loaded = list(specs)  # the paths' definitions, when the caller has them
        self.agents: dict[str, ServedAgent] = {}
        self._stores: dict[StoreIdentity, SessionStore] = {}
        self.live = LiveSessions()
        self._starting: set[asyncio.Task[None]] = set()

    # -- loading

    async def open(self) -> None:
        """Load every agent (a definition that does not load stops the server: `holodeck
        deploy` checked them already) and start them in the background."""
        specs = self._loaded or [
            await asyncio.to_thread(load_agent, path) for path in self.options.paths
        ]
        for spec in specs:
            self._add(spec, uploaded=False)
        uploads = self.options.uploads_dir
        if self.options.allow_uploads and uploads.is_dir():
            for archive in sorted(uploads.glob("*.tar.gz")):
                await self._load_upload(archive)

    def _add(self, spec: AgentSpec, *, uploaded: bool, agent: Agent | None = None) -> ServedAgent:
        if spec.name in self.agents:
            raise HoloDeckError(
                f"two agents are named {spec.name!r}",
                hint="give each served agent its own `name`",
            )
        identity = store_identity(spec.memory, spec, Path(self.options.state_dir))
        store = self._stores.get(identity)
        if store is None:
            store = self._stores[identity] = open_store(identity)
        served = ServedAgent(
            spec=spec,
            agent=agent or Agent(spec, self._run_options(uploaded)),
            store=store,
            log=RequestLog(self._log_path(spec.name), spec.logging),
            live=self.live,
            uploaded=uploaded,
        )
        self.agents[spec.name] = served
        task = asyncio.create_task(served.start(), name=f"start {spec.name}")
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)
        return served

    def _run_options(self, uploaded: bool) -> RunOptions:
        if not uploaded:
            return RunOptions(model=self.options.model)
        lent = self.options.upload_providers
        return RunOptions(model=self.options.model, uploaded=True, upload_providers=lent)

    def _log_path(self, name: str) -> Path:
        base = Path(self.options.log_dir) if self.options.log_dir else holodeck_home() / "logs"
        return base / f"agent-{_SAFE_NAME.sub('_', name)}.log"

    # -- uploads

    async def upload(self, data: bytes) -> ServedAgent:
        """Take an agent image (.tar.gz bytes): unpacked with the archive checks, loaded
        without resolving `${VAR}` from this server's environment, then served."""
        uploads = self.options.uploads_dir
        uploads.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(data).hexdigest()[:16]
        staged = uploads / f".upload-{digest}.tar.gz"
        staged.write_bytes(data)
        try:
            spec = await asyncio.to_thread(load_agent, staged, expand_env=False)
        except HoloDeckError as exc:
            staged.unlink(missing_ok=True)
            # the message names the staged file: say "the upload" instead of this path
            message = exc.message.replace(str(staged), "the uploaded image")
            raise ApiError(422, "invalid_agent", message, hint=exc.hint) from None
        current = self.agents.get(spec.name)
        if current is not None and not current.uploaded:
            staged.unlink(missing_ok=True)
            raise ApiError(
                409,
                "agent_exists",
                f"an agent named {spec.name!r} is served from this server's command line",
                hint="give the uploaded agent another `name`",
            )
        try:  # its model and credentials, settled before anything is kept
            agent = Agent(spec, self._run_options(True))
        except HoloDeckError as exc:
            staged.unlink(missing_ok=True)
            raise ApiError(422, "invalid_agent", exc.message, hint=exc.hint) from None
        final = uploads / f"{_SAFE_NAME.sub('_', spec.name)}.tar.gz"
        staged.replace(final)
        if current is not None:  # a new version of an uploaded agent replaces the old one
            del self.agents[spec.name]
            await self._close(current)
        return self._add(spec, uploaded=True, agent=agent)

    async def _load_upload(self, archive: Path) -> ServedAgent | None:
        try:
            spec = await asyncio.to_thread(load_agent, archive, expand_env=False)
        except HoloDeckError as exc:
            log.error("uploaded agent %s does not load: %s", archive.name, exc)
            return None
        if spec.name in self.agents:
            return None
        try:
            return self._add(spec, uploaded=True)
        except HoloDeckError as exc:  # e.g. the server no longer lends it a credential
            log.error("uploaded agent %s cannot be served: %s", archive.name, exc)
            return None

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
            if found is None and self.options.allow_uploads:
                # another process of this server may have taken the upload
                archive = self.options.uploads_dir / f"{_SAFE_NAME.sub('_', name)}.tar.gz"
                if archive.is_file():
                    found = await self._load_upload(archive)
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
                503, "agent_failed", f"agent {served.name} failed to start: {served.error}"
            )
        return served

    # -- closing

    async def _close(self, served: ServedAgent) -> None:
        try:
            await served.agent.aclose()
        finally:
            served.log.close()

    async def aclose(self) -> None:
        for task in list(self._starting):
            task.cancel()
        await asyncio.gather(*self._starting, return_exceptions=True)
        await self.live.aclose()  # the sessions' own servers, before their agents'
        await asyncio.gather(
            *(self._close(s) for s in self.agents.values()), return_exceptions=True
        )
        await asyncio.gather(*(s.aclose() for s in self._stores.values()), return_exceptions=True)
        self.agents.clear()
        self._stores.clear()
