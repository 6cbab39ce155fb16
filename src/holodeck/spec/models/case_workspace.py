"""What a test case puts in its workspace before it runs (`workspace:`) and what it
expects to find there afterwards (`expected_files:`), for agents with acting tools.

    workspace:
      from: fixtures/buggy          # the case starts from a copy of this folder
      files: {notes.txt: "hello"}   # then these are written
    expected_files:
      calc.py: {contains: "a + b"}
      scratch.txt: {exists: false}
"""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic import Field, field_validator, model_validator

from holodeck.spec.models.base import NonEmpty, Strict


def workspace_relative(path: str) -> str:
    """`path` if it names a place inside a workspace; a ValueError saying why not."""
    if path.startswith("/") or path.startswith("\\"):
        raise ValueError(f"`{path}`: give a path relative to the workspace, not an absolute one")
    if ".." in PurePosixPath(path.replace("\\", "/")).parts:
        raise ValueError(f"`{path}`: '..' is refused; paths stay inside the workspace")
    return path


class CaseWorkspace(Strict):
    """The case's workspace before it runs: a fresh copy of `from` (default: the agent's
    workspace), with `files` written over it."""

    from_: NonEmpty | None = Field(
        default=None,
        alias="from",
        description="A folder (relative to the agent's folder) the case's workspace is a copy "
        "of; default: the agent's workspace.",
    )
    files: dict[NonEmpty, str] = Field(
        default_factory=dict,
        description="Files to write into the workspace before the case runs: path -> text.",
    )

    @field_validator("files")
    @classmethod
    def _inside(cls, files: dict[str, str]) -> dict[str, str]:
        for path in files:
            workspace_relative(path)
        return files


class FileExpectation(Strict):
    """What one file must be after the case: its whole text (`equals`), text it holds
    (`contains`), or its absence (`exists: false`)."""

    equals: str | None = Field(default=None, description="The file's whole text.")
    contains: str | None = Field(default=None, description="Text the file holds.")
    exists: bool = Field(default=True, description="false: the file must not be there.")

    @model_validator(mode="after")
    def _consistent(self) -> FileExpectation:
        if not self.exists and (self.equals is not None or self.contains is not None):
            raise ValueError("a file expected not to exist has no text: drop equals/contains")
        return self


ExpectedFiles = dict[NonEmpty, FileExpectation]


def check_expected_paths(expected: ExpectedFiles | None) -> ExpectedFiles | None:
    for path in expected or {}:
        workspace_relative(path)
    return expected
