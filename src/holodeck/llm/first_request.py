"""A signal to whoever started a turn that its first model request is starting.

`holodeck test` lets one case at a time go from its start to its first model request,
then the next (see `testing/runner.py`): its requests leave one after another instead of
all at once after every case's preparation, so answers come back spread out and no case
waits for the CPU work of nine others before its request leaves. The case says so with
`OfflineScript.on_first_request` on the run's script, which this model is built with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck.llm.before_request import BeforeRequestModel

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from holodeck.llm.offline_script import OfflineScript


class SignallingModel(BeforeRequestModel):
    """Tells `script` as each request starts (its `on_first_request` block hears the
    first)."""

    def __init__(self, wrapped: Model, script: OfflineScript) -> None:
        super().__init__(wrapped)
        self._script = script

    async def before_request(self) -> None:
        self._script.first_request()
