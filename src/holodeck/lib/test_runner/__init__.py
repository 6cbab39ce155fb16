"""See `holodeck.lib`."""
