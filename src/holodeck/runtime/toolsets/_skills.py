"""Skills: listed by name and description in the system prompt, their instructions
loaded on demand with `load_skill`, their files read with `read_skill_file`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic_ai import FunctionToolset, ModelRetry

from holodeck.spec.models.agent_spec import SkillSpec

MAX_FILE_BYTES = 256 * 1024


def skills_prompt(skills: Sequence[SkillSpec]) -> str:
    lines = [f"- {s.name}: {s.description}" for s in skills]
    return (
        "You have skills: instructions you load when a task needs them. Call `load_skill` "
        "with a skill's name before using it.\n" + "\n".join(lines)
    )


def skills_toolset(skills: Sequence[SkillSpec]) -> FunctionToolset[Any]:
    by_name = {s.name: s for s in skills}
    # The schema lists the valid names, so a model cannot ask for a skill that isn't there.
    SkillName = Literal[tuple(by_name)]  # type: ignore[valid-type]
    toolset: FunctionToolset[Any] = FunctionToolset()

    def load_skill(name: SkillName) -> str:  # type: ignore[valid-type]
        """Load a skill's instructions.

        Args:
            name: The skill's name, as listed in your instructions.
        """
        skill = by_name[name]
        text = skill.body
        if skill.resources:
            text += "\n\nFiles of this skill (read with read_skill_file): " + ", ".join(
                skill.resources
            )
        return text

    # annotations are strings under `from __future__`; give the real types to the schema
    load_skill.__annotations__ = {"name": SkillName, "return": str}
    toolset.add_function(load_skill)
    files = sorted({r for s in skills for r in s.resources})
    if files:
        FileName = Literal[tuple(files)]  # type: ignore[valid-type]

        def read_skill_file(skill: SkillName, path: FileName) -> str:  # type: ignore[valid-type]
            """Read a file of a skill (from its references/, scripts/ or assets/).

            Args:
                skill: The skill's name.
                path: The file's path as listed by load_skill, e.g. references/guide.md.
            """
            found = by_name[skill]
            if path not in found.resources:  # only the skill's own files
                raise ModelRetry(f"`{path}` is not a file of `{skill}`")
            data = (found.directory / path).read_bytes()[:MAX_FILE_BYTES]
            return data.decode("utf-8", errors="replace")

        read_skill_file.__annotations__ = {"skill": SkillName, "path": FileName, "return": str}
        toolset.add_function(read_skill_file)
    return toolset
