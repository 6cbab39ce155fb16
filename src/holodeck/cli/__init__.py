"""The `holodeck` command line. Commands load lazily so start-up stays fast."""
