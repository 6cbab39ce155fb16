"""`holodeck deploy --build/--emit` as one typed `Shipment`: what the command was asked,
checked once, then handed whole to the code that writes the image's context or the
manifests."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from cli_invoke import invoke
from holodeck.cli.deploy_ship import Shipment, ship
from holodeck.errors import ConfigurationError
from server_harness import REPO, agent_dir


def test_a_compose_shipment_names_the_image_in_its_registry_and_runs_its_model(
    tmp_path: Path,
) -> None:
    agent = agent_dir(tmp_path / "agent", "Solo Desk")
    out = tmp_path / "compose"
    ship(
        Shipment(
            target=agent,
            emit="compose",
            output=out,
            tag="ghcr.io/org/solo:2",
            registry="registry.invalid:5000",
            model="test",
        )
    )
    service = yaml.safe_load((out / "compose.yaml").read_text(encoding="utf-8"))["services"]
    assert service["agent"]["image"] == "registry.invalid:5000/org/solo:2"
    assert service["agent"]["command"] == ["--model", "test"]


def test_a_dockerfile_shipment_builds_on_its_base_image_under_its_tag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = agent_dir(tmp_path / "agent", "solo")
    out = tmp_path / "context"
    shipment = Shipment(
        target=agent, emit="dockerfile", output=out, tag="solo:1.0", base_image="python:3.12-slim"
    )
    ship(shipment)
    assert "ARG BASE_IMAGE=python:3.12-slim" in (out / "Dockerfile").read_text(encoding="utf-8")
    printed = capsys.readouterr().out
    assert "--build-arg BASE_IMAGE=python:3.12-slim" in printed and "-t solo:1.0" in printed


def test_the_commands_options_become_one_shipment_of_one_agent(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path / "agent", "solo")
    given = {"output": tmp_path / "k8s", "tag": None, "base_image": None, "registry": None}
    given |= {"wheels": None, "replicas": 3, "model": None}

    shipment = Shipment.from_command((agent,), build=False, emit="kubernetes", **given)
    assert shipment == Shipment(
        target=agent, emit="kubernetes", output=tmp_path / "k8s", replicas=3
    )
    assert Shipment.from_command((), build=True, emit=None, **given).target == Path()

    with pytest.raises(ConfigurationError, match="--build or --emit, not both"):
        Shipment.from_command((agent,), build=True, emit="compose", **given)
    with pytest.raises(ConfigurationError, match="--emit compose ships one agent") as refused:
        Shipment.from_command((agent, agent), build=False, emit="compose", **given)
    assert "once per agent" in (refused.value.hint or "")


def test_the_deploy_code_passes_typed_objects_not_loose_parameters() -> None:
    """Options travel as `Shipment`, `ServeOptions` or `RunOptions`: a function that
    takes many loose ones repeats them at every call (the click command takes the rest
    of its options as `**given`)."""
    crowded = []
    for name in ("deploy.py", "deploy_ship.py"):
        path = REPO / "src" / "holodeck" / "cli" / name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                arguments = node.args
                named = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                if len(named) > 5:
                    crowded.append(f"{name}:{node.lineno} {node.name} takes {len(named)}")
    assert not crowded, crowded


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--tag", "solo:1", "--replicas", "2"), "--tag, --replicas"),
        (("--push", "registry.invalid", "-o", "out"), "--push, -o"),
        (("--base-image", "python:3.12-slim", "--wheels", "."), "--base-image, --wheels"),
    ],
)
def test_serving_refuses_flags_that_only_shape_an_image(
    tmp_path: Path, flags: tuple[str, ...], named: str
) -> None:
    agent = agent_dir(tmp_path / "agent", "solo")
    done = invoke("deploy", str(agent), "--model", "test", *flags, cwd=tmp_path)
    assert done.exit_code == 2
    assert f"{named}: only with --build or --emit" in done.output
    assert "Traceback" not in done.output


def test_shipping_refuses_harness_none_and_says_where_it_goes(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path / "agent", "solo")
    done = invoke(
        "deploy", str(agent), "--emit", "compose", "-o", "out", "--harness", "none", cwd=tmp_path
    )
    assert done.exit_code == 2
    assert "--harness" in done.output and "HOLODECK_HARNESS=none" in done.output
    assert not (tmp_path / "out").exists()
