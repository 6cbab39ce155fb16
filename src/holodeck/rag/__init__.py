"""Retrieval: load sources, chunk them, embed the chunks, store them, search them.

The pipeline is `ingest -> chunks -> embeddings -> store -> search`; each stage is a
module of its own and talks to the next through the types in `_types`."""
