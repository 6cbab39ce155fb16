"""Image archives (`.tar.gz`): unpacking them safely, naming places inside them, packing them."""
