"""HoloDeck: define an AI agent in YAML, test it, chat with it, serve it.

>>> from holodeck.spec import load_agent
>>> spec = load_agent("examples/weather/agent.yaml")  # doctest: +SKIP
"""

from holodeck._version import __version__
from holodeck.errors import ConfigurationError, ExecutionError, HoloDeckError

__all__ = ["ConfigurationError", "ExecutionError", "HoloDeckError", "__version__"]
