"""`holodeck test optimize`: search the settings an agent's `optimizer:` block names,
scoring each candidate by running the agent's own test cases, and write the best result
beside the original.

    search = Search(spec, spec.optimizer, TestOptions(), Path(".holodeck/runs"), print)
    result = asyncio.run(search.run())
    written = write_result(spec, result)
"""

from holodeck.testing.optimizer.result_files import Written, write_result
from holodeck.testing.optimizer.run import Candidate, Search, SearchOutcome

__all__ = ["Candidate", "Search", "SearchOutcome", "Written", "write_result"]
