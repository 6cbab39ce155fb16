"""One suite on three models: `holodeck test --model A --model B --model C` (one run, the
models side by side) against three runs one after another (`--model A`, then B, then C).

Each model is a scripted OpenAI-compatible server in its own process (bench/test_scale.py's:
200 ms a call, one `contains` metric a case) behind a provider entry of its own in
config.yaml; every run uses --concurrency 10, which a matrix run gives each model.

Run: .venv/bin/python bench/model_matrix.py [cases]      (default: 400)
Prints the wall time (and the command's CPU) of the one matrix run, of each single-model
run and their sum, and the ratio of the sum to the matrix run. The ideal matrix run takes
as long as one model's run (the models' cases overlap entirely); the ideal ratio is 3.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from test_scale import HOLODECK, byte_compile_holodeck, model_server

CONCURRENCY = 10
MODELS = ("alpha", "beta", "gamma")  # provider entries, one scripted server each


def project(cases: int, ports: list[int]) -> Path:
    root = Path(tempfile.mkdtemp(prefix="holodeck-matrix-"))
    lines = [
        "name: shop",
        "model: {provider: alpha, name: gpt-4o-mini}",
        "instructions: {inline: Answer about orders.}",
        "evaluations:",
        "  metrics: [{metric: contains}]",
        "test_cases:",
    ]
    for i in range(cases):
        lines += [
            f"  - name: case-{i}",
            f"    input: Where is order {i}?",
            "    ground_truth: shipped",
        ]
    (root / "agent.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    providers = {
        name: {"provider": "openai", "endpoint": f"http://127.0.0.1:{port}/v1", "api_key": "k"}
        for name, port in zip(MODELS, ports, strict=True)
    }
    (root / "config.yaml").write_text(json.dumps({"providers": providers}), encoding="utf-8")
    return root


def timed(root: Path, models: list[str]) -> tuple[float, float, dict[str, object]]:
    """Wall and CPU seconds of one `holodeck test` run, and its JSON report."""
    report = root / f"run-{len(models)}-{models[0].split('/')[0]}.json"
    flags = [arg for model in models for arg in ("--model", model)]
    command = [str(HOLODECK), "test", str(root), *flags, "--concurrency", str(CONCURRENCY)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([*command, "-o", str(report)], cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(report.read_text(encoding="utf-8"))


def measure(cases: int) -> None:
    byte_compile_holodeck()
    with ExitStack() as stack:
        ports = [stack.enter_context(model_server()) for _ in MODELS]
        root = project(cases, ports)
        models = [f"{name}/gpt-4o-mini" for name in MODELS]
        wall, cpu, run = timed(root, models)
        summary = run["summary"]
        assert isinstance(summary, dict) and summary["total"] == cases * len(MODELS)
        print(f"{cases} cases x {len(MODELS)} models, concurrency {CONCURRENCY} per model")
        print(f"  one matrix run:        wall {wall:6.2f} s   CPU {cpu:6.2f} s")
        walls = []
        for model in models:
            one_wall, one_cpu, _ = timed(root, [model])
            walls.append(one_wall)
            print(f"  --model {model:<18} wall {one_wall:6.2f} s   CPU {one_cpu:6.2f} s")
        total = sum(walls)
        print(f"  three runs in a row:   wall {total:6.2f} s")
        print(f"  ratio (in a row / matrix): {total / wall:.2f}x (ideal {len(MODELS)}x)")


def main() -> None:
    measure(int(sys.argv[1]) if sys.argv[1:] else 400)


if __name__ == "__main__":
    main()
