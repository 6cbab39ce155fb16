"""Code graders written for the shipped HoloDeck import their types from here:
`from holodeck.lib.test_runner.code_grader import GraderContext, GraderResult` works
unchanged. New graders may import them from `holodeck.testing.metrics.code_graders`."""

from holodeck.testing.metrics.code_graders import GraderContext, GraderResult

__all__ = ["GraderContext", "GraderResult"]
