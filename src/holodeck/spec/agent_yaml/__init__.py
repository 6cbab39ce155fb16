"""The agent.yaml format: the document a user writes, its test-case files and data files."""
