"""Turn text into vectors: provider APIs or a local model, with an on-disk cache."""
