"""Skills: listed by name and description in the system prompt, their instructions
loaded on demand with `load_skill`, their files read with `read_skill_file`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import FunctionToolset, ModelRetry

from holodeck.spec.agent_spec import SkillSpec

MAX_FILE_BYTES = 256 * 1024


def skills_prompt(skills: Sequence[SkillSpec]) -> str:
    lines = [f"- {s.name}: {s.description}" for s in skills]
    return (
        "You have skills: instructions you load when a task needs them. Call `load_skill` "
        "with a skill's name before using it.\n" + "\n".join(lines)
    )


def skills_toolset(skills: Sequence[SkillSpec]) -> FunctionToolset[Any]:
    by_name = {s.name: s for s in skills}
    toolset: FunctionToolset[Any] = FunctionToolset()

    @toolset.tool_plain
    def load_skill(name: str) -> str:
        """Load a skill's instructions.

        Args:
            name: The skill's name, as listed in your instructions.
        """
        skill = by_name.get(name)
        if skill is None:
            raise ModelRetry(f"no skill `{name}`; skills: {', '.join(by_name)}")
        text = skill.body
        if skill.resources:
            text += "\n\nFiles of this skill (read with read_skill_file): " + ", ".join(
                skill.resources
            )
        return text

    if any(s.resources for s in skills):

        @toolset.tool_plain
        def read_skill_file(skill: str, path: str) -> str:
            """Read a file of a skill (from its references/, scripts/ or assets/).

            Args:
                skill: The skill's name.
                path: The file's path as listed by load_skill, e.g. references/guide.md.
            """
            found = by_name.get(skill)
            if found is None:
                raise ModelRetry(f"no skill `{skill}`; skills: {', '.join(by_name)}")
            if path not in found.resources:  # only listed files: no way out of the skill
                raise ModelRetry(
                    f"`{path}` is not a file of `{skill}`: {', '.join(found.resources)}"
                )
            data = (found.directory / path).read_bytes()[:MAX_FILE_BYTES]
            return data.decode("utf-8", errors="replace")

    return toolset
