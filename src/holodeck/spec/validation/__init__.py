"""Validation errors turned into diagnostics a person can act on."""
