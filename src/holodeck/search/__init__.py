"""Search: the `vectorstore` and `hierarchical_document` tools, from their definition to
the ranked results the agent reads.

The pipeline is `load -> chunk -> embed -> store -> search`; each stage is a module of its
own and talks to the next through the types in `_types`:

- `tool_index`: a tool's definition -> its `SearchIndex` (what to read, which embedding
  model, which store); `holodeck ingest`, `holodeck validate` and the agent share it.
- `agent_tools`: the agent's search tools (`SearchTools`): indexes open and catch up with
  their sources on start or first use; one that cannot open is reported and retried.
- `checks`: what `holodeck validate` says about search tools (field mapping, embedders).
- `ingest/`: read a source and cut it into chunks (files, formats, PDF, headings, records,
  the field mapping checked first); its `__init__.py` lists its parts.
- `contextual` with `context_cache`: a model-written line situating each chunk, cached.
- `embeddings/`: provider APIs (their models built in `holodeck.llm.embedding_models`)
  or the local model, with an on-disk cache.
- `stores/`: the embedded store (SQLite + numpy) and vector databases.
- `index`: `SearchIndex`, keeps a store in step with the sources and answers queries;
  `fusion`, `_bm25` and `results` rank and shape what it returns; `rerank` gives the
  first-stage results a second look, with the models `retrieval_models` builds.

Importing this package imports none of them: each is loaded by what uses it.
"""
