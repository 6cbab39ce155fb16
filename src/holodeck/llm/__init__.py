"""Model providers: how a `ModelSettings` becomes a pydantic-ai model, and what its
failures mean to a user. The runtime is the only caller."""
