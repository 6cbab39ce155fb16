"""requirements.lock: the versions the suite is proven with. It pins every requirement
pyproject.toml declares (the base package and every extra, on each supported Python),
and the environment running this suite was installed from it (as `make` and CI do)."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from python_envs import LOCK, REPO, SUPPORTED

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
SELF = canonicalize_name(PROJECT["name"])


def pins(environment: dict[str, str] | None = None) -> dict[str, SpecifierSet]:
    """The lock's `name==version` lines that apply in `environment` (marker variables;
    None: this interpreter)."""
    found = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if not line[:1].isalnum():
            continue
        requirement = Requirement(line.split(" #")[0])
        if requirement.marker is None or requirement.marker.evaluate(environment):
            found[canonicalize_name(requirement.name)] = requirement.specifier
    return found


def linux(python: str) -> dict[str, str]:
    """Marker variables of Linux on the newest patch release of `python` (the lock may
    pin a package differently for early patch releases)."""
    return {"python_version": python, "python_full_version": f"{python}.99",
            "sys_platform": "linux", "platform_system": "Linux"}  # fmt: skip


def declared() -> list[tuple[str, Requirement]]:
    """Every requirement of the base package and of each extra, with where it is declared."""
    found = [("dependencies", Requirement(text)) for text in PROJECT["dependencies"]]
    for extra, texts in PROJECT["optional-dependencies"].items():
        found += [(f"[{extra}]", Requirement(text)) for text in texts]
    return [(where, r) for where, r in found if canonicalize_name(r.name) != SELF]


@pytest.mark.parametrize("python", SUPPORTED)
def test_the_lock_pins_every_declared_requirement_within_its_range(python: str) -> None:
    environment = linux(python)
    locked = pins(environment)
    wrong = []
    for where, requirement in declared():
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        pin = locked.get(canonicalize_name(requirement.name))
        (version,) = [spec.version for spec in pin] if pin else [None]
        if version is None or version not in requirement.specifier:
            wrong.append(f"{requirement} ({where}): the lock has {pin or 'no pin'}")
    assert not wrong, "pyproject.toml changed without the lock; run `make lock`:\n" + "\n".join(
        wrong
    )


def test_this_environment_was_installed_from_the_lock() -> None:
    """What `make` installs is what the lock says: a package at another version means
    the suite is not proving the locked set (reinstall with `make dev`)."""
    locked = pins()
    off = []
    for distribution in importlib.metadata.distributions():
        name = canonicalize_name(distribution.metadata["Name"])
        pin = locked.get(name)
        if pin is not None and not pin.contains(distribution.version, prereleases=True):
            off.append(f"{name} {distribution.version}, locked {pin}")
    assert not off, "\n".join(off)


def test_the_office_extra_refuses_the_lxml_that_loses_word_files_bodies() -> None:
    """lxml 6.2 drops XML namespaces when markitdown re-reads a .docx through
    BeautifulSoup; users installing the office extra must not get it."""
    office = [r for where, r in declared() if where == "[office]" and r.name == "lxml"]
    assert office and "6.2.0" not in office[0].specifier
    assert Path(LOCK).is_file()
