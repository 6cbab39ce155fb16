"""Reading YAML with line numbers, within limits, fast for large test-case files."""
