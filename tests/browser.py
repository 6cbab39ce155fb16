"""Debian's headless Chromium for the tests of pages (the HTML report, the chat page),
through the playwright package: no browser download, no network beyond what a page is
allowed to reach."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
# without the background-networking flags Chromium keeps trying hosts this machine
# cannot reach
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def playwright_api() -> Any:
    """`playwright.sync_api`, or the test is skipped saying what to install."""
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)")
    return pytest.importorskip("playwright.sync_api")


@contextmanager
def chromium_page(
    sync_api: Any, allowed: Callable[[str], bool], width: int, height: int
) -> Iterator[tuple[Any, list[str]]]:
    """A page that may load only URLs `allowed` says yes to; the list collects the
    others it tried and the page's script errors."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            problems: list[str] = []
            page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))

            def guard(route: Any) -> None:
                if allowed(route.request.url):
                    route.continue_()
                else:
                    problems.append(f"outside request: {route.request.url}")
                    route.abort()

            page.route("**/*", guard)
            yield page, problems
        finally:
            browser.close()
