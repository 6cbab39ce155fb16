"""HoloDeck: define an AI agent in YAML, test it, chat with it, serve it.

>>> from holodeck.spec import load_agent
>>> spec = load_agent("examples/weather/agent.yaml")  # doctest: +SKIP
"""

from holodeck._version import __version__

__all__ = ["__version__"]
