"""What an image tells its model: `instructions` (or `prompt`, its older name), else the
first context file there is (AGENTS.md, CLAUDE.md, .cursorrules), and its skills/."""

from __future__ import annotations

from pathlib import Path

from holodeck.spec.diagnostics import Diagnostic, FieldPath
from holodeck.spec.image.reading import ImageReading
from holodeck.spec.models.agent_spec import SkillSpec
from holodeck.spec.skills import load_skill

CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md", ".cursorrules")


def image_instructions(image: ImageReading) -> tuple[str | None, Path | None]:
    """`instructions`, or `prompt` (its older name), or AGENTS.md."""
    if image.config.instructions is None and image.config.prompt is not None:
        return instructions_from(image, image.config.prompt, ("prompt",))
    return instructions_from(image, image.config.instructions, ("instructions",))


def instructions_from(
    image: ImageReading, value: str | None, key: FieldPath
) -> tuple[str | None, Path | None]:
    if value is None:
        # Omnigent reads the first of these context files that exists.
        found = next((n for n in CONTEXT_FILES if (image.root / n).is_file()), "AGENTS.md")
    candidate = image.root / (value if value is not None else found)
    if value is not None and ("\n" in value or len(value) > 255):
        return value, None  # clearly inline text, never a path
    try:
        resolved = candidate.resolve()
        is_file = resolved.is_file()
    except (OSError, ValueError):
        is_file = False
    if is_file:
        if not resolved.is_relative_to(image.root):
            image.error(
                key,
                f"instructions file {resolved} is outside the image",
                "keep instruction files inside the image directory",
            )
            return None, None
        try:
            return resolved.read_text(encoding="utf-8"), resolved
        except (OSError, UnicodeDecodeError) as exc:
            image.error(key, f"cannot read {resolved}: {exc}")
            return None, None
    return value, None  # inline text, or no instructions at all


def image_skills(image: ImageReading) -> tuple[SkillSpec, ...]:
    base = image.root / "skills"
    if not base.is_dir():
        return ()
    loaded: list[SkillSpec] = []
    for directory in _skill_directories(base):
        skill = load_skill(directory, image.ctx.collector, strict=image.ctx.strict)
        if skill is None:
            continue
        first = next((s for s in loaded if s.name == skill.name), None)
        if first is not None:
            image.ctx.collector.add(
                Diagnostic(
                    f"two skills are named `{skill.name}`: "
                    f"skills/{first.directory.relative_to(base).as_posix()}/ "
                    f"and skills/{directory.relative_to(base).as_posix()}/",
                    file=directory / "SKILL.md",
                    hint="give each skill its own `name:` in SKILL.md",
                )
            )
            continue
        loaded.append(skill)
    return tuple(loaded)


def _skill_directories(base: Path) -> list[Path]:
    """skills/<skill>/, and skills/<group>/<skill>/ for a directory without SKILL.md
    that holds skills (Omnigent groups skills one level deep)."""
    found: list[Path] = []
    for directory in sorted(p for p in base.iterdir() if p.is_dir()):
        grouped = sorted(p for p in directory.iterdir() if (p / "SKILL.md").is_file())
        if (directory / "SKILL.md").is_file() or not grouped:
            found.append(directory)  # a skill, or reported as one without SKILL.md
        else:
            found.extend(grouped)
    return found
