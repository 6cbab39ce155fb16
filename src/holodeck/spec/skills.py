"""Skills: `<dir>/SKILL.md` with YAML frontmatter (name, description) and a markdown body."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from holodeck.spec.diagnostics import Collector, Diagnostic, Severity, SpecError
from holodeck.spec.image.files import SkillFrontmatter
from holodeck.spec.models.agent_spec import SkillSpec
from holodeck.spec.validation.errors import validate
from holodeck.spec.yaml.source import parse_yaml

RESOURCE_DIRS = ("references", "scripts", "assets")


def load_skill(directory: Path, collector: Collector, *, strict: bool = False) -> SkillSpec | None:
    """Parse `directory/SKILL.md`; problems go to `collector`."""
    path = directory / "SKILL.md"
    if not path.is_file():
        collector.add(
            Diagnostic(
                f"skill directory `{directory.name}` has no SKILL.md",
                file=path,
                hint="add SKILL.md starting with `---` frontmatter (name, description)",
            )
        )
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        collector.add(Diagnostic(f"cannot read SKILL.md: {exc}", file=path))
        return None
    front, body, body_ok = _split_frontmatter(text)
    if not body_ok:
        collector.add(
            Diagnostic(
                "SKILL.md must start with YAML frontmatter between `---` lines",
                file=path,
                line=1,
                hint="begin with a `---` line, then `name:` and `description:`, then `---`",
            )
        )
        return None
    try:
        doc = parse_yaml(front, path)
    except SpecError as exc:
        collector.extend(_shift(d, 1) for d in exc.diagnostics)
        return None
    if not isinstance(doc.data, dict):
        collector.add(Diagnostic("frontmatter must be a mapping", file=path, line=2))
        return None
    local = Collector()
    front_model = validate(SkillFrontmatter, doc.data, doc, local, lenient=True, strict=strict)
    collector.extend(_shift(d, 1) for d in local.diagnostics)
    if front_model is None:
        return None
    # The frontmatter `name` is the skill's name. The Agent Image Spec wants the directory
    # named alike; Omnigent's images often differ, so that loads, with a warning.
    if front_model.name != directory.name:
        position = doc.position(("name",))
        collector.add(
            Diagnostic(
                f"skill `{front_model.name}` is in the directory `{directory.name}`; the "
                "Agent Image Spec wants a skill's directory named after it",
                file=path,
                line=position.line + 1 if position else 2,
                path=("name",),
                hint=f"rename the directory to `{front_model.name}` or the skill to "
                f"`{directory.name}`; it is known here as `{front_model.name}`",
                severity=Severity.ERROR if strict else Severity.WARNING,
            )
        )
    return SkillSpec(
        name=front_model.name,
        description=front_model.description,
        directory=directory,
        body=body.strip(),
        resources=_resources(directory),
    )


def _split_frontmatter(text: str) -> tuple[str, str, bool]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return "", text, False
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), True
    return "", text, False


def _shift(diagnostic: Diagnostic, lines: int) -> Diagnostic:
    """Frontmatter lines are numbered from the `---` line, which is line 1 of the file."""
    if diagnostic.line is None:
        return diagnostic
    return dataclasses.replace(diagnostic, line=diagnostic.line + lines)


def _resources(directory: Path) -> tuple[str, ...]:
    found: list[str] = []
    for sub in RESOURCE_DIRS:
        base = directory / sub
        if base.is_dir():
            found.extend(
                p.relative_to(directory).as_posix()
                for p in sorted(base.rglob("*"))
                if p.is_file() and not p.is_symlink()
            )
    return tuple(found)
