"""Hostile uploads: generated archives (odd members, links, corrupt bytes, mutated YAML,
Python that fails at import) sent to POST /v1/agents and to `holodeck validate` never
give a 500 or a traceback, and leave nothing half-done on disk."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from holodeck.cli.main import cli
from server_harness import WEATHER, served
from test_fuzz import FUZZ, VALID_IMAGE, dump, mutated, values

GZIP = {"Content-Type": "application/gzip"}
REFUSALS = {409, 413, 415, 422}
# each example is a real request to a real server, or a real `holodeck validate`
HOSTILE = settings(FUZZ, max_examples=60)

PYTHON = [
    "def hello(who: str) -> str:\n    return 'hi ' + who\n",
    "import does_not_exist\n\ndef f() -> str:\n    return ''\n",
    "raise SystemExit(3)\n\ndef f() -> str:\n    return ''\n",
    "raise KeyboardInterrupt\n\ndef f() -> str:\n    return ''\n",
    "import helper\n\ndef f() -> str:\n    return helper.X\n",
    "def f(x: 'NoSuchType') -> str:\n    return ''\n",
    "def f(:\n",
    "1 / 0\n\ndef f() -> str:\n    return ''\n",
]
MEMBER_NAMES = [
    "config.yaml",
    "AGENTS.md",
    "tools/python/t.py",
    "tools/python/helper.py",
    "tools/mcp/m.yaml",
    "skills/s/SKILL.md",
    "agents/sub/config.yaml",
    "wrap/config.yaml",
    "../escape.txt",
    "/abs.txt",
    "tools",
    "a" * 300,
    "tools/python/" + "b" * 260 + ".py",
]
NAMES = ["fuzz", "fuzz-two", "weather", "Fuzz", "x" * 65, "", "a b", "a_b", "${SECRET}"]


@st.composite
def members(draw: st.DrawFn) -> list[tuple[str, bytes, bytes]]:
    """(name, tar type, data) triples; config.yaml is usually there, mutated."""
    config = draw(mutated(VALID_IMAGE)) if draw(st.booleans()) else dict(VALID_IMAGE)
    if draw(st.booleans()):
        config["name"] = draw(st.sampled_from(NAMES))
    config.setdefault("instructions", "AGENTS.md")
    chosen = [("config.yaml", tarfile.REGTYPE, dump(config).encode())]
    for _ in range(draw(st.integers(0, 5))):
        name = draw(st.one_of(st.sampled_from(MEMBER_NAMES), st.text(min_size=1, max_size=30)))
        kind = draw(
            st.sampled_from(
                [tarfile.REGTYPE] * 6 + [tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE]
            )
        )
        data = draw(
            st.one_of(
                st.sampled_from(PYTHON).map(str.encode),
                values.map(lambda v: dump(v).encode()),
                st.binary(max_size=200),
            )
        )
        chosen.append((name, kind, data))
    if draw(st.booleans()):  # shuffled, duplicates and all
        chosen = draw(st.permutations(chosen))
    return chosen


@st.composite
def archives(draw: st.DrawFn) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, kind, data in draw(members()):
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.REGTYPE:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
            else:
                info.linkname = "../../etc/passwd" if kind != tarfile.DIRTYPE else ""
                archive.addfile(info)
    raw = buffer.getvalue()
    damage = draw(st.sampled_from(["none"] * 4 + ["truncate", "flip", "garbage"]))
    if damage == "truncate":
        raw = raw[: draw(st.integers(0, max(0, len(raw) - 1)))]
    elif damage == "flip":
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1 :]
    elif damage == "garbage":
        raw = draw(st.binary(max_size=300))
    return raw


def half_done(root: Path) -> list[str]:
    """Staging files, partial unpacks, and unpacked images no kept archive accounts for."""
    if not root.exists():
        return []
    found = [
        str(p) for p in root.rglob("*") if p.name.startswith((".staging-", ".holodeck-extract-"))
    ]
    images = root / "images"
    if images.is_dir():
        kept = len([p for p in root.glob("*.tar.gz") if not p.name.startswith(".")])
        if len(list(images.iterdir())) != kept:
            found.append(f"{len(list(images.iterdir()))} images for {kept} archives")
    return found


def test_hostile_uploads_are_refused_cleanly(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with served(WEATHER, state_dir=state, allow_uploads=True, model="test") as server:

        @HOSTILE
        @given(archives())
        def post(data: bytes) -> None:
            answer = server.client.post("/v1/agents", content=data, headers=GZIP)
            assert answer.status_code == 201 or answer.status_code in REFUSALS, answer.text
            assert "Traceback" not in answer.text
            assert str(tmp_path) not in answer.text, answer.text
            assert half_done(state / "agents") == []
            assert server.client.get("/health").status_code == 200

        post()
        listed = server.client.get("/v1/agents")
        assert listed.status_code == 200
    # whatever was kept, the next start is a start
    with served(WEATHER, state_dir=state, allow_uploads=True, model="test") as server:
        assert server.client.get("/ready").status_code == 200


def test_hostile_archives_only_ever_get_a_diagnostic_from_validate(
    tmp_path: Path, isolated_home: Path
) -> None:
    runner = CliRunner()

    @HOSTILE
    @given(archives())
    def validate(data: bytes) -> None:
        target = tmp_path / "upload.tar.gz"
        target.write_bytes(data)
        result = runner.invoke(cli, ["validate", str(target)])
        assert result.exit_code in (0, 2), (result.exit_code, result.output, result.exception)
        assert "Traceback" not in result.output
        assert list((isolated_home / "cache").rglob(".holodeck-extract-*")) == []

    validate()
