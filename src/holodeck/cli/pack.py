"""`holodeck pack`: turn an agent image directory into a deterministic .tar.gz."""

from __future__ import annotations

from pathlib import Path

import click

from holodeck.errors import ExecutionError
from holodeck.spec.archives.pack import pack_image
from holodeck.spec.archives.unpack import human_size


@click.command(
    "pack",
    epilog="Exit codes: 0 packed, 2 not a valid image directory, 3 the archive "
    "could not be written.",
)
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Archive to write. Default: <DIRECTORY name>.tar.gz in the current directory.",
)
def pack(directory: Path, output: Path | None) -> None:
    """Pack an agent image directory into a .tar.gz.

    DIRECTORY must contain config.yaml. Files matched by .gitignore, .git/,
    .env files, __pycache__/, node_modules/ and .holodeck/ are left out, and
    symbolic links are refused. Packing the same directory twice gives
    byte-identical archives.

    \b
    Examples:
      holodeck pack my-image
      holodeck pack my-image -o dist/my-image.tar.gz
    """
    # Imported here so `holodeck --help` stays fast.

    target = output if output is not None else _default_output(directory)
    try:
        result = pack_image(directory, target)
    except OSError as exc:  # a SpecError (not a valid image) is reported by `holodeck`
        raise ExecutionError(
            f"cannot write {target}: {exc.strerror or exc}",
            hint="choose another --output, or check that its directory is writable",
        ) from exc
    click.echo(
        f"Packed {result.members} members ({human_size(result.total_bytes)}) "
        f"into {result.output} ({human_size(result.archive_bytes)} compressed)."
    )


def _default_output(directory: Path) -> Path:
    # resolve() so `holodeck pack .` is named after the folder, not ".".
    name = directory.resolve().name or "image"
    return Path.cwd() / f"{name}.tar.gz"
