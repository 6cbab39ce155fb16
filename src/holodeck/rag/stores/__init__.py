"""Where chunks and their vectors live: embedded on disk, or a vector database."""
