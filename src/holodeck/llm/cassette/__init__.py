"""Cassettes: every model exchange of a run recorded to a YAML file, or replayed from one.

A cassette sits between the runtime and each model it uses (the agent's, prompt tools',
sub-agents'), so one file holds the whole run. Recording passes requests through and
keeps the answers; replaying answers from the file and never calls a model, so a
replayed run is offline and deterministic.

Each interaction stores:

- `key`: a hash of what decides the answer — the messages (without timestamps, run
  ids, tool-call ids or provider details), the tool definitions, the output schema and
  the sampling settings. API keys, headers and timeouts never take part;
- `model`: `provider/name` of the model asked; a request is matched on the model and the
  key. When the run uses a model the cassette never saw (a run replayed with another
  `--model`), the key alone decides;
- `request`: a readable summary (last user message, what the request follows, tools);
- `response`: the full `ModelResponse`, as pydantic-ai serialises it.

Identical requests (a test run with `--repeat`) get their answers in recording order;
once those run out, the last one is reused. Strings equal to (or, when long enough,
containing) the value of an environment variable named `*_KEY`, `*_TOKEN` or `*_SECRET`
are redacted before the file is written.

The file grows as the run goes (see `_file`): `save()` appends what was answered since
the last save, so calling it after every turn costs only that turn's exchanges.

    cassette = Cassette.record("run.yaml")
    ...                       # model calls through cassette.wrap(...) / cassette.build(...)
    await cassette.asave()    # after each turn, on the event loop: the disk waits in a thread
    cassette.save(durable=True)  # at the end of a run, off the loop
"""

from __future__ import annotations

from holodeck.llm.cassette._cassette import RECORD_VARIABLE, REPLAY_VARIABLE, Cassette
from holodeck.llm.cassette._errors import CassetteError, CassetteMiss
from holodeck.llm.cassette._file import HEADER, MIN_EMBEDDED_SECRET, SECRET_SUFFIXES, VERSION
from holodeck.llm.cassette._keys import request_key, request_summary
from holodeck.llm.cassette._model import CassetteModel, ReplayedStream, text_chunks

__all__ = [
    "HEADER",
    "MIN_EMBEDDED_SECRET",
    "RECORD_VARIABLE",
    "REPLAY_VARIABLE",
    "SECRET_SUFFIXES",
    "VERSION",
    "Cassette",
    "CassetteError",
    "CassetteMiss",
    "CassetteModel",
    "ReplayedStream",
    "request_key",
    "request_summary",
    "text_chunks",
]
