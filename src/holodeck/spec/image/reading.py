"""One agent image being read: its config.yaml, where its problems go, and the tool names
seen so far (a name given twice is reported where it is repeated). The parts of the image
are read by `model_choice`, `prompt_files`, `tool_files` and `subagents`, each taking
this reading; `loader.load_image` walks them in the spec's order."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from holodeck.spec.diagnostics import Diagnostic, FieldPath, Severity
from holodeck.spec.image.executor import ExecutorModel
from holodeck.spec.image.files import ImageConfig
from holodeck.spec.load_context import LoadContext
from holodeck.spec.models.settings import ExecutionSettings
from holodeck.spec.python_tools import is_valid_tool_name
from holodeck.spec.yaml.source import YamlDocument


class ImageReading:
    def __init__(
        self,
        root: Path,
        doc: YamlDocument,
        ctx: LoadContext,
        config: ImageConfig,
        executor: ExecutorModel | None,
        single_file: bool = False,
    ):
        self.root, self.doc, self.ctx, self.config = root, doc, ctx, config
        self.executor = executor
        self.single_file = single_file
        # every tool name the model will see -> where it was first defined
        self.origins: dict[str, Diagnostic] = {}
        self.repeats: list[tuple[str, Diagnostic]] = []

    def register_tool(self, name: str, where: Diagnostic) -> None:
        """Record a tool name; a repeat is reported where it is repeated."""
        if name in self.origins:
            self.repeats.append((name, where))
        else:
            self.origins[name] = where

    def error(self, path: FieldPath, message: str, hint: str | None = None) -> None:
        self.ctx.collector.add(self.doc.diagnostic(path, message, hint=hint))

    def warn(self, path: Path, message: str) -> None:
        self.ctx.collector.add(Diagnostic(message, file=path, severity=Severity.WARNING))

    def valid_name(self, name: str, path: Path, line: int) -> bool:
        if is_valid_tool_name(name):
            return True
        self.ctx.collector.add(
            Diagnostic(
                f"tool name `{name}` is not valid for model providers",
                file=path,
                line=line,
                hint="rename the file or function to letters, digits, `_` or `-` (≤ 64 chars)",
            )
        )
        return False

    def check_unique_tools(self) -> None:
        for name, where in self.repeats:
            first = self.origins[name]
            self.ctx.collector.add(
                dataclasses.replace(
                    where,
                    message=f"duplicate tool name `{name}`: {first.location} defines it too",
                    hint="rename one of the files, functions or servers",
                )
            )

    def execution(self) -> ExecutionSettings | None:
        """`executor.max_iterations` is the rounds a turn may take, as here."""
        if self.executor is None or self.executor.max_iterations is None:
            return None
        return ExecutionSettings(max_tool_iterations=self.executor.max_iterations)
