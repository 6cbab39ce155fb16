"""Write tests/slow_tests.txt, the tests `make test-fast` leaves out for their time, from
the output of a full run with durations:

    .venv/bin/pytest -n 2 -q --durations=0 > run.log; .venv/bin/python tests/slow_list.py run.log

A file whose shared fixture takes 1.5 s or more to set up is listed whole (leaving out only
its first test would move the cost to the next); otherwise a test taking 1.5 s or more
(setup, call and teardown) is listed by itself."""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

LIMIT_S = 1.5
LINE = re.compile(r"^([\d.]+)s (call|setup|teardown)\s+(\S.*)$")
LIST = Path(__file__).with_name("slow_tests.txt")
HEADER = (
    "# Tests `make test-fast` leaves out: 1.5 s or more each, measured on 2 cores.\n"
    "# Made by tests/slow_list.py from a run's --durations=0; a path alone is a whole file.\n"
)


def main(log: Path) -> None:
    total: dict[str, float] = defaultdict(float)
    setup: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        found = LINE.match(line.rstrip())
        if found:
            seconds, phase, test = float(found[1]), found[2], found[3]
            total[test] += seconds
            if phase == "setup":
                setup[test] += seconds
    files = sorted({test.split("::")[0] for test, s in setup.items() if s >= LIMIT_S})
    tests = sorted(
        test
        for test, seconds in total.items()
        if seconds >= LIMIT_S and test.split("::")[0] not in files
    )
    LIST.write_text(HEADER + "".join(f"{entry}\n" for entry in files + tests), encoding="utf-8")
    print(f"{LIST}: {len(files)} files, {len(tests)} tests")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
