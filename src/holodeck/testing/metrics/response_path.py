"""`response_path`: score one field of a structured answer instead of the whole text.

An agent with a `response_format` answers JSON such as `{"answer": 0.332, "why": "..."}`;
a metric with `response_path: answer` compares `0.332` with the ground truth, so the
prose beside the field cannot change the score. The structured output is used when the
run has one, else the answer text is read as JSON (a ```json fenced block is unwrapped).

Paths are keys joined by `.`, with list indices in brackets: `answer`,
`result.value`, `items[0].score` (the grammar is checked when the agent loads).
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from holodeck.testing.metrics.sample import MetricError, Sample

_TOKEN = re.compile(r"([A-Za-z_][\w-]*)|\[(\d+)\]")
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```\s*$", re.DOTALL)


def project(sample: Sample, path: str) -> Sample:
    """`sample` whose output is the value at `path`; raises `MetricError` if there is none."""
    value = leaf(_document(sample, path), path)
    text = value if isinstance(value, str) else json.dumps(value)
    return dataclasses.replace(sample, output=text)


def leaf(document: Any, path: str) -> Any:
    """The scalar at `path` in `document`; raises `MetricError` naming the missing step."""
    cursor = document
    walked = ""
    for key, index in _TOKEN.findall(path):
        if key:
            if not isinstance(cursor, dict):
                raise MetricError(_where(path, walked, f"a mapping with `{key}`", cursor))
            if key not in cursor:
                keys = ", ".join(sorted(map(str, cursor))) or "none"
                raise MetricError(
                    f"response_path `{path}`: no key `{key}`"
                    + (f" in `{walked}`" if walked else "")
                    + f" (keys: {keys})"
                )
            cursor = cursor[key]
            walked = f"{walked}.{key}" if walked else key
        else:
            at = int(index)
            if not isinstance(cursor, list):
                raise MetricError(_where(path, walked, f"a list for [{at}]", cursor))
            if at >= len(cursor):
                raise MetricError(
                    f"response_path `{path}`: index [{at}] is past the end of "
                    f"`{walked or 'the answer'}` ({len(cursor)} items)"
                )
            cursor = cursor[at]
            walked = f"{walked}[{at}]"
    if isinstance(cursor, dict | list):
        raise MetricError(
            f"response_path `{path}` leads to a {'mapping' if isinstance(cursor, dict) else 'list'}"
            ", not a value: extend the path to one field"
        )
    return cursor


def _document(sample: Sample, path: str) -> Any:
    if sample.structured_output is not None:
        return sample.structured_output
    text = sample.output.strip()
    fenced = _FENCE.match(text)
    try:
        return json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        shown = text[:80].replace("\n", " ")
        raise MetricError(
            f"response_path `{path}` needs a JSON answer, but the answer is not JSON: {shown!r}"
            " (give the agent a `response_format`)"
        ) from None


def _where(path: str, walked: str, wanted: str, found: Any) -> str:
    kind = type(found).__name__ if found is not None else "null"
    return f"response_path `{path}`: `{walked or 'the answer'}` is {kind}, not {wanted}"
