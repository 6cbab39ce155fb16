"""A scan's reports: the console summary (a pass rate per plugin, then each attack that
got through), and files in JSON, HTML or JUnit XML, told from their names."""

from __future__ import annotations

import html
import json
from pathlib import Path
from xml.etree import ElementTree

from rich.console import Console
from rich.table import Table

from holodeck.atomic_write import write_atomically
from holodeck.errors import ConfigurationError
from holodeck.testing.redteam.results import AttackResult, Scan
from holodeck.testing.report_formats import format_for

SCAN_FORMATS = ("json", "html", "junit")


def scan_format(path: Path) -> str:
    """The format of a scan report at `path`; refused when a scan cannot be written so."""
    fmt = format_for(path)
    if fmt not in SCAN_FORMATS:
        raise ConfigurationError(
            f"-o {path}: a scan report is not written as {fmt}",
            hint="name it .json, .html or .xml / .junit.xml (JUnit)",
        )
    return fmt


def print_summary(scan: Scan, console: Console, *, verbose: bool = False) -> None:
    table = Table(title=f"Red-team scan of {scan.agent} ({scan.model}, seed {scan.seed})")
    for column in ("plugin", "severity", "attacks", "passed", "failed", "errors", "pass rate"):
        table.add_column(
            column, justify="right" if column not in ("plugin", "severity") else "left"
        )
    for plugin in scan.plugins:
        if plugin.skipped is not None:
            table.add_row(plugin.plugin, "-", "0", "-", "-", "-", "skipped")
            continue
        rate = plugin.pass_rate
        shown = "-" if rate is None else f"{rate:.0%}"
        style = "green" if plugin.failed == 0 and plugin.errors == 0 else "red"
        table.add_row(
            plugin.plugin,
            plugin.severity,
            str(plugin.attacks),
            str(plugin.passed),
            str(plugin.failed),
            str(plugin.errors),
            f"[{style}]{shown}[/{style}]",
        )
    console.print(table)
    for plugin in scan.plugins:
        if plugin.skipped is not None:
            console.print(f"{plugin.plugin} skipped: {plugin.skipped}")
    for attack in scan.failed + scan.errors:
        label = "GOT THROUGH" if attack.status == "fail" else "ERROR"
        console.print(f"[red]{label}[/red] {attack.id} ({attack.severity}): {attack.reason}")
        if verbose:
            for turn in attack.lead_in:  # a multi-turn attack's conversation before it
                console.print(f"  user: {turn.said}\n  agent: {turn.answer}", markup=False)
            console.print(f"  attack: {attack.prompt}", markup=False)
            console.print(f"  answer: {attack.answer}", markup=False)
    graded = sum(p.passed + p.failed for p in scan.plugins)
    passed = sum(p.passed for p in scan.plugins)
    console.print(
        f"{passed}/{graded} attacks held off, {len(scan.failed)} got through, "
        f"{len(scan.errors)} errors ({scan.duration_ms / 1000:.1f}s)"
        + (" — offline: the static payloads on the test model" if scan.offline else "")
    )


def write_report(scan: Scan, path: Path) -> None:
    fmt = scan_format(path)
    text = {"json": scan_json, "html": _html, "junit": _junit}[fmt](scan)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, text.encode())


def scan_json(scan: Scan) -> str:
    """The JSON report: the scan with each plugin's `pass_rate`."""
    data = scan.model_dump(mode="json")
    for plugin, summary in zip(data["plugins"], scan.plugins, strict=True):
        plugin["pass_rate"] = summary.pass_rate
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _junit(scan: Scan) -> str:
    suites = ElementTree.Element("testsuites", name=f"redteam {scan.agent}")
    for plugin in scan.plugins:
        mine = [a for a in scan.attacks if a.plugin == plugin.plugin]
        suite = ElementTree.SubElement(
            suites,
            "testsuite",
            name=plugin.plugin,
            tests=str(len(mine)),
            failures=str(plugin.failed),
            errors=str(plugin.errors),
            skipped="1" if plugin.skipped else "0",
        )
        if plugin.skipped:
            case = ElementTree.SubElement(suite, "testcase", name=plugin.plugin)
            ElementTree.SubElement(case, "skipped", message=plugin.skipped)
        for attack in mine:
            case = ElementTree.SubElement(
                suite,
                "testcase",
                classname=f"redteam.{plugin.plugin}",
                name=attack.id,
                time=f"{attack.duration_ms / 1000:.3f}",
            )
            properties = ElementTree.SubElement(case, "properties")
            for name, value in (("severity", attack.severity), ("strategy", attack.strategy)):
                ElementTree.SubElement(properties, "property", name=name, value=value)
            if attack.status != "pass":
                tag = "failure" if attack.status == "fail" else "error"
                element = ElementTree.SubElement(
                    case, tag, message=f"[{attack.severity}] {attack.reason}"
                )
                said = "".join(f"user: {t.said}\nagent: {t.answer}\n" for t in attack.lead_in)
                element.text = f"{said}attack: {attack.prompt}\nanswer: {attack.answer}"
    ElementTree.indent(suites)
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


_STYLE = """
body{font:14px system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px}
.pass{color:#17702b}.fail,.error{color:#b00020;font-weight:bold}
details{margin:.4em 0;border:1px solid #ddd;padding:.4em}pre{white-space:pre-wrap}
"""


def _html(scan: Scan) -> str:
    e = html.escape
    rows = []
    for p in scan.plugins:
        rate = "-" if p.pass_rate is None else f"{p.pass_rate:.0%}"
        state = "pass" if not (p.failed or p.errors) else "fail"
        note = f" (skipped: {e(p.skipped)})" if p.skipped else ""
        rows.append(
            f"<tr><td>{e(p.plugin)}{note}</td><td>{e(p.severity)}</td><td>{p.attacks}</td>"
            f"<td>{p.passed}</td><td>{p.failed}</td><td>{p.errors}</td>"
            f'<td class="{state}">{rate}</td></tr>'
        )
    details = [_attack_html(a) for a in scan.attacks]
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>Red-team scan of {e(scan.agent)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Red-team scan of {e(scan.agent)}</h1>"
        f"<p>model {e(scan.model)}, seed {scan.seed}, {len(scan.attacks)} attacks, "
        f"{len(scan.failed)} got through, {len(scan.errors)} errors</p>"
        "<table><tr><th>plugin</th><th>severity</th><th>attacks</th><th>passed</th>"
        "<th>failed</th><th>errors</th><th>pass rate</th></tr>"
        + "".join(rows)
        + "</table><h2>Attacks</h2>"
        + "".join(details)
        + "</body></html>\n"
    )


def _attack_html(attack: AttackResult) -> str:
    e = html.escape
    calls = "".join(
        f"<li>{e(c.name)}({e(json.dumps(c.args, ensure_ascii=False))})"
        f"{' — ' + e(c.error) if c.error else ''}</li>"
        for c in attack.tool_calls
    )
    seeded = (
        f"<p>seeded into tool results:</p><pre>{e(attack.seeded)}</pre>" if attack.seeded else ""
    )
    lead = "".join(
        f"<p>turn {n} (lead-in):</p><pre>{e(t.said)}</pre><p>answer:</p><pre>{e(t.answer)}</pre>"
        for n, t in enumerate(attack.lead_in, start=1)
    )
    return (
        f"<details{' open' if attack.status != 'pass' else ''}><summary>"
        f'<span class="{attack.status}">{attack.status.upper()}</span> {e(attack.id)} '
        f"({e(attack.severity)}) — {e(attack.reason)}</summary>"
        f"<p>strategy: {e(attack.strategy)}</p>{lead}"
        f"<p>attack:</p><pre>{e(attack.prompt)}</pre>{seeded}"
        f"<p>answer:</p><pre>{e(attack.answer)}</pre>"
        + (f"<p>tool calls:</p><ul>{calls}</ul>" if calls else "")
        + "</details>"
    )
