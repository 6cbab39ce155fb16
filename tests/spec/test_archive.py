"""Packing and safe unpacking of agent image archives, on real files."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import random
import stat
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from holodeck.cli.main import cli
from holodeck.spec.archives import unpack as archive_module
from holodeck.spec.archives.pack import pack_image
from holodeck.spec.archives.unpack import cached_extract, extract_image
from holodeck.spec.diagnostics import SpecError

CONFIG = b"name: demo\nmodel: test\n"


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def make_image(root: Path) -> Path:
    """A small but complete image directory."""
    (root / "skills" / "greet").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "agents").mkdir()  # empty folders survive the round trip
    (root / "config.yaml").write_bytes(CONFIG)
    (root / "AGENTS.md").write_text("# Demo agent\n")
    (root / "skills" / "greet" / "SKILL.md").write_text("Say hello.\n")
    script = root / "tools" / "run.sh"
    script.write_text("#!/bin/sh\necho ok\n")
    script.chmod(0o700)
    return root


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under root: file contents, or None for a directory."""
    out: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = None if path.is_dir() else path.read_bytes()
    return out


def file_member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def special_member(
    name: str, kind: bytes, linkname: str = ""
) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def build_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    """A .tar.gz written with tarfile directly, so it can hold anything."""
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def raw_member(name: str, declared: int, data: bytes) -> bytes:
    """A header declaring `declared` bytes followed by `data`, padded to whole blocks."""
    info = tarfile.TarInfo(name)
    info.size = declared
    header = info.tobuf(format=tarfile.USTAR_FORMAT)
    padding = -len(data) % tarfile.BLOCKSIZE
    return header + data + b"\0" * padding


def refuse(archive: Path, tmp_path: Path, **limits: int) -> str:
    """Extract, expect a SpecError naming the archive, and check nothing was left behind."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    dest = work / "image"
    with pytest.raises(SpecError) as caught:
        extract_image(archive, dest, **limits)
    assert not dest.exists()
    assert list(work.iterdir()) == []  # no staging directory left either
    message = caught.value.render()
    assert str(archive) in message
    assert "\n" not in message  # exactly one diagnostic
    return message


# --------------------------------------------------------------------------
# Packing
# --------------------------------------------------------------------------


def test_pack_then_extract_round_trip(tmp_path: Path) -> None:
    source = make_image(tmp_path / "src")
    result = pack_image(source, tmp_path / "image.tar.gz")

    assert result.output == tmp_path / "image.tar.gz"
    assert result.members == len(tree(source))
    assert result.total_bytes == sum(len(v) for v in tree(source).values() if v is not None)
    assert result.archive_bytes == result.output.stat().st_size

    root = extract_image(result.output, tmp_path / "out")
    assert root == tmp_path / "out"
    assert tree(root) == tree(source)
    assert (root / "agents").is_dir()
    assert os.access(root / "tools" / "run.sh", os.X_OK)
    assert not os.access(root / "AGENTS.md", os.X_OK)


def test_pack_stores_members_relative_with_normalised_metadata(tmp_path: Path) -> None:
    source = make_image(tmp_path / "src")
    (source / "AGENTS.md").chmod(0o600)
    archive = pack_image(source, tmp_path / "image.tar.gz").output

    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert list(members) == sorted(members)
    assert "config.yaml" in members
    assert "skills/greet/SKILL.md" in members
    assert not any(name.startswith(("src", "/", "./")) for name in members)
    for member in members.values():
        assert (member.mtime, member.uid, member.gid) == (0, 0, 0)
        assert (member.uname, member.gname) == ("", "")
    assert members["AGENTS.md"].mode == 0o644
    assert members["tools/run.sh"].mode == 0o755
    assert members["skills"].mode == 0o755


def test_pack_skips_secrets_caches_and_gitignored_files(tmp_path: Path) -> None:
    source = make_image(tmp_path / "src")
    junk = {
        ".git/config": "[core]",
        ".env": "SECRET=1",
        ".env.local": "SECRET=2",
        "tools/.env": "SECRET=3",
        "__pycache__/mod.cpython-311.pyc": "x",
        "tools/helper.pyc": "x",
        "node_modules/pkg/index.js": "x",
        ".holodeck/state.json": "{}",
        "debug.log": "x",
        "build/out.txt": "x",
        "only-at-root.txt": "x",
        "skills/greet/draft.md": "x",
    }
    kept = {
        "tools/keep.log": "re-included by a nested negation",
        "tools/only-at-root.txt": "anchored pattern applies to the root only",
        "tools/draft.md": "nested rule applies to its own folder only",
        "tools/helper.py": "print()",
    }
    for rel, text in {**junk, **kept}.items():
        path = source / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (source / ".gitignore").write_text("*.log\nbuild/\n/only-at-root.txt\n")
    (source / "skills" / "greet" / ".gitignore").write_text("draft.md\n")
    (source / "tools" / ".gitignore").write_text("!keep.log\n")

    archive = pack_image(source, tmp_path / "image.tar.gz").output
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())

    for rel in junk:
        assert rel not in names, rel
    for rel in kept:
        assert rel in names, rel
    assert not any(n.startswith((".git/", "node_modules", "__pycache__", "build")) for n in names)
    assert {".gitignore", "skills/greet/.gitignore", "config.yaml"} <= names


def test_pack_is_deterministic(tmp_path: Path) -> None:
    source = make_image(tmp_path / "src")
    first = pack_image(source, tmp_path / "one.tar.gz").output.read_bytes()
    for path in source.rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))  # times must not leak into the archive
    second = pack_image(source, tmp_path / "two.tar.gz").output.read_bytes()
    assert first == second


def test_pack_leaves_out_its_own_output_inside_the_source(tmp_path: Path) -> None:
    source = make_image(tmp_path / "src")
    output = source / "image.tar.gz"
    first = pack_image(source, output).output.read_bytes()
    second = pack_image(source, output).output.read_bytes()
    assert first == second
    with tarfile.open(output) as tar:
        assert "image.tar.gz" not in tar.getnames()
    assert not list(source.glob("*.partial"))


def test_pack_refuses_symlinks(tmp_path: Path) -> None:
    source = make_image(tmp_path / "src")
    (source / "skills" / "link.md").symlink_to(source / "AGENTS.md")
    output = tmp_path / "image.tar.gz"
    with pytest.raises(SpecError) as caught:
        pack_image(source, output)
    message = caught.value.render()
    assert "skills/link.md" in message
    assert "symbolic link" in message
    assert not output.exists()


def test_pack_requires_config_yaml(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "AGENTS.md").write_text("# no config\n")
    with pytest.raises(SpecError) as caught:
        pack_image(source, tmp_path / "image.tar.gz")
    assert "config.yaml" in caught.value.render()
    assert caught.value.diagnostics[0].hint


# --------------------------------------------------------------------------
# Unpacking: accepted layouts
# --------------------------------------------------------------------------


def test_single_wrapping_folder_is_accepted(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "wrapped.tar.gz",
        [
            file_member("my-agent/config.yaml", CONFIG),
            file_member("my-agent/skills/greet/SKILL.md", b"hi\n"),
        ],
    )
    root = extract_image(archive, tmp_path / "out")
    assert root == tmp_path / "out" / "my-agent"
    assert (root / "config.yaml").read_bytes() == CONFIG
    assert (root / "skills" / "greet" / "SKILL.md").read_bytes() == b"hi\n"


def test_dot_slash_member_names_are_accepted(tmp_path: Path) -> None:
    root_entry = tarfile.TarInfo("./")
    root_entry.type = tarfile.DIRTYPE
    archive = build_tar(
        tmp_path / "dot.tar.gz",
        [(root_entry, None), file_member("./config.yaml", CONFIG)],
    )
    root = extract_image(archive, tmp_path / "out")
    assert (root / "config.yaml").read_bytes() == CONFIG


def test_destination_must_be_new_or_empty(tmp_path: Path) -> None:
    archive = build_tar(tmp_path / "ok.tar.gz", [file_member("config.yaml", CONFIG)])
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "existing.txt").write_text("mine")
    with pytest.raises(SpecError, match="not an empty directory"):
        extract_image(archive, dest)
    assert (dest / "existing.txt").read_text() == "mine"


# --------------------------------------------------------------------------
# Unpacking: attacks and broken archives
# --------------------------------------------------------------------------


def test_refuses_absolute_path(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [file_member("config.yaml", CONFIG), file_member("/tmp/evil.txt", b"x")],
    )
    message = refuse(archive, tmp_path)
    assert "absolute path" in message
    assert "/tmp/evil.txt" in message


@pytest.mark.parametrize("name", ["../evil.txt", "a/../../evil.txt", "skills/../../../x"])
def test_refuses_parent_traversal(tmp_path: Path, name: str) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz", [file_member("config.yaml", CONFIG), file_member(name, b"x")]
    )
    message = refuse(archive, tmp_path)
    assert "`..`" in message
    assert name in message
    assert not (tmp_path / "evil.txt").exists()


def test_refuses_symlink_member(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [
            file_member("config.yaml", CONFIG),
            special_member("skills", tarfile.SYMTYPE, linkname="/etc"),
        ],
    )
    message = refuse(archive, tmp_path)
    assert "member `skills` is a symbolic link to `/etc`" in message


def test_refuses_hardlink_member(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [
            file_member("config.yaml", CONFIG),
            special_member("passwd", tarfile.LNKTYPE, linkname="/etc/passwd"),
        ],
    )
    message = refuse(archive, tmp_path)
    assert "member `passwd` is a hard link" in message


@pytest.mark.parametrize(
    ("kind", "label"),
    [
        (tarfile.CHRTYPE, "character device"),
        (tarfile.BLKTYPE, "block device"),
        (tarfile.FIFOTYPE, "FIFO"),
    ],
)
def test_refuses_device_and_fifo_members(tmp_path: Path, kind: bytes, label: str) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [file_member("config.yaml", CONFIG), special_member("dev/thing", kind)],
    )
    message = refuse(archive, tmp_path)
    assert label in message
    assert "`dev/thing`" in message


def test_refuses_too_many_members(tmp_path: Path) -> None:
    members = [file_member("config.yaml", CONFIG)]
    members += [file_member(f"f{i}.txt", b"x") for i in range(5)]
    archive = build_tar(tmp_path / "a.tar.gz", members)
    message = refuse(archive, tmp_path, max_members=3)
    assert "limit of 3 members" in message
    assert "`f2.txt`" in message  # the fourth member


def test_refuses_total_size_over_limit(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [
            file_member("config.yaml", CONFIG),
            file_member("a.txt", b"a" * 60),
            file_member("b.txt", b"b" * 60),
        ],
    )
    message = refuse(archive, tmp_path, max_total_bytes=100)
    assert "total unpacked size" in message
    assert "`b.txt`" in message


def test_refuses_single_member_over_limit(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [file_member("config.yaml", CONFIG), file_member("big.bin", b"z" * 500)],
    )
    message = refuse(archive, tmp_path, max_member_bytes=100)
    assert "limit for one file" in message
    assert "`big.bin`" in message


def test_refuses_header_declaring_more_than_the_data(tmp_path: Path) -> None:
    # Declares 5000 bytes but holds 10 and then ends: the data runs out.
    raw = raw_member("config.yaml", len(CONFIG), CONFIG) + raw_member("liar.txt", 5000, b"0" * 10)
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(gzip.compress(raw + b"\0" * 1024))
    message = refuse(archive, tmp_path)
    assert "truncated" in message
    assert "`liar.txt`" in message


def test_refuses_header_declaring_less_than_the_data(tmp_path: Path) -> None:
    # Declares 0 bytes but 600 follow: the next "header" is file data.
    raw = raw_member("config.yaml", len(CONFIG), CONFIG) + raw_member("liar.txt", 0, b"A" * 600)
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(gzip.compress(raw + b"\0" * 1024))
    message = refuse(archive, tmp_path)
    assert "unreadable header" in message
    assert "`liar.txt`" in message


def test_refuses_truncated_archive(tmp_path: Path) -> None:
    source = make_image(tmp_path / "src")
    (source / "data.bin").write_bytes(random.Random(1).randbytes(20_000))
    whole = pack_image(source, tmp_path / "whole.tar.gz").output.read_bytes()
    archive = tmp_path / "cut.tar.gz"
    archive.write_bytes(whole[: len(whole) // 2])
    message = refuse(archive, tmp_path)
    assert "truncated" in message


def test_refuses_duplicate_member_names(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [
            file_member("config.yaml", CONFIG),
            file_member("AGENTS.md", b"one"),
            file_member("./AGENTS.md", b"two"),
        ],
    )
    message = refuse(archive, tmp_path)
    assert "`AGENTS.md` appears more than once" in message


def test_refuses_member_inside_a_file(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [
            file_member("config.yaml", CONFIG),
            file_member("tools", b"a file"),
            file_member("tools/run.sh", b"x"),
        ],
    )
    message = refuse(archive, tmp_path)
    assert "`tools/run.sh` lies inside `tools`, which is a file" in message


def test_refuses_random_bytes(tmp_path: Path) -> None:
    archive = tmp_path / "noise.tar.gz"
    archive.write_bytes(b"PK" + random.Random(0).randbytes(4096))
    message = refuse(archive, tmp_path)
    assert "not a valid gzip-compressed tar archive" in message


def test_refuses_gzip_of_non_tar_data(tmp_path: Path) -> None:
    archive = tmp_path / "text.tar.gz"
    archive.write_bytes(gzip.compress(b"just some text, not a tar archive\n" * 100))
    message = refuse(archive, tmp_path)
    assert "not a valid tar archive" in message


def test_refuses_archive_without_config_yaml(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [file_member("AGENTS.md", b"# agent"), file_member("skills/x/SKILL.md", b"x")],
    )
    message = refuse(archive, tmp_path)
    assert "no config.yaml at its root" in message


def test_refuses_two_top_level_folders(tmp_path: Path) -> None:
    archive = build_tar(
        tmp_path / "a.tar.gz",
        [file_member("one/config.yaml", CONFIG), file_member("two/config.yaml", CONFIG)],
    )
    assert "no config.yaml at its root" in refuse(archive, tmp_path)


def test_refuses_oversized_extended_header(tmp_path: Path) -> None:
    info, data = file_member("config.yaml", CONFIG)
    info.pax_headers = {"comment": "x" * (2 * 1024 * 1024)}
    archive = build_tar(tmp_path / "a.tar.gz", [(info, data)])
    assert "header block" in refuse(archive, tmp_path)


def test_refuses_archive_that_expands_far_past_its_members(tmp_path: Path) -> None:
    raw = raw_member("config.yaml", len(CONFIG), CONFIG) + b"\0" * (8 * 1024 * 1024)
    archive = tmp_path / "bomb.tar.gz"
    archive.write_bytes(gzip.compress(raw))
    message = refuse(archive, tmp_path, max_members=2, max_total_bytes=1024)
    assert "expands to more than" in message


def test_refuses_data_after_end_of_archive(tmp_path: Path) -> None:
    raw = raw_member("config.yaml", len(CONFIG), CONFIG) + b"\0" * 1024 + b"hidden" * 100
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(gzip.compress(raw))
    assert "after its end-of-archive marker" in refuse(archive, tmp_path)


# --------------------------------------------------------------------------
# Cached extraction
# --------------------------------------------------------------------------


def test_cached_extract_reuses_the_first_extraction(tmp_path: Path) -> None:
    archive = pack_image(make_image(tmp_path / "src"), tmp_path / "image.tar.gz").output
    cache = tmp_path / "cache"

    first = cached_extract(archive, cache)
    assert first == cache / hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (first / "config.yaml").read_bytes() == CONFIG
    (first / "marker").write_text("still here")

    second = cached_extract(archive, cache)
    assert second == first
    assert (second / "marker").read_text() == "still here"
    assert [p.name for p in cache.iterdir()] == [first.name]


def test_cached_extract_uses_a_copy_published_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = pack_image(make_image(tmp_path / "src"), tmp_path / "image.tar.gz").output
    cache = tmp_path / "cache"
    target = cache / hashlib.sha256(archive.read_bytes()).hexdigest()
    real = archive_module._extract_to_staging

    def racing(
        source: Path, parent: Path, limits: archive_module._Limits
    ) -> tuple[Path, str | None]:
        # Another process finishes first and publishes its own copy.
        theirs, _ = real(source, parent, limits)
        (theirs / "winner").write_text("theirs")
        theirs.rename(target)
        return real(source, parent, limits)

    monkeypatch.setattr(archive_module, "_extract_to_staging", racing)
    root = cached_extract(archive, cache)
    assert root == target
    assert (root / "winner").read_text() == "theirs"
    assert [p.name for p in cache.iterdir()] == [target.name]  # our copy was discarded


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def test_cli_pack_writes_archive(tmp_path: Path) -> None:
    source = make_image(tmp_path / "src")
    output = tmp_path / "dist" / "image.tar.gz"
    result = CliRunner().invoke(cli, ["pack", str(source), "-o", str(output)])
    assert result.exit_code == 0, result.output
    assert output.is_file()
    assert "Packed" in result.stdout
    assert str(output) in result.stdout
    with tarfile.open(output) as tar:
        assert "config.yaml" in tar.getnames()


def test_cli_pack_default_output_is_named_after_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_image(tmp_path / "my-agent")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["pack", "my-agent"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "my-agent.tar.gz").is_file()


def test_cli_pack_without_config_yaml_exits_2_with_one_line(tmp_path: Path) -> None:
    source = tmp_path / "empty"
    source.mkdir()
    output = tmp_path / "out.tar.gz"
    result = CliRunner().invoke(cli, ["pack", str(source), "-o", str(output)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "config.yaml" in lines[0]
    assert "error" in lines[0]
    assert "Traceback" not in result.output
    assert not output.exists()


def test_cli_pack_help_has_an_example() -> None:
    result = CliRunner().invoke(cli, ["pack", "--help"])
    assert result.exit_code == 0
    assert "holodeck pack my-image" in result.output


def test_extracted_modes_are_normalised(tmp_path: Path) -> None:
    info, data = file_member("config.yaml", CONFIG)
    info.mode = 0o4777  # setuid and world-writable must not survive
    archive = build_tar(tmp_path / "a.tar.gz", [(info, data)])
    root = extract_image(archive, tmp_path / "out")
    mode = stat.S_IMODE((root / "config.yaml").stat().st_mode)
    assert not mode & (stat.S_ISUID | stat.S_IWOTH)
