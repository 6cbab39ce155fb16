"""Long-term memory: facts an agent keeps for a user (or for itself, or for one session)
across conversations, in the search tools' stores (`memory.long_term`, docs/memory.md).

    bank = open_bank(spec, context)            # None without memory.long_term
    async with bank:
        await bank.remember(MemoryOwner("alice"), "Alice prefers tea")

Who owns memories (`MemoryOwner`, `served_user`) loads nothing more; the bank and its
records load the search stores (numpy) when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck._lazy_exports import lazy_exports
from holodeck.memory._owners import (
    AGENT_SHARED,
    ANONYMOUS,
    LOCAL_USER,
    MemoryOwner,
    served_user,
)

if TYPE_CHECKING:  # imported when first used: they load the search stores and numpy
    from holodeck.memory._bank import MemoryBank as MemoryBank
    from holodeck.memory._opening import open_bank as open_bank
    from holodeck.memory._records import Memory as Memory

_EXPORTS = {
    "Memory": "holodeck.memory._records",
    "MemoryBank": "holodeck.memory._bank",
    "open_bank": "holodeck.memory._opening",
}

__all__ = ["AGENT_SHARED", "ANONYMOUS", "LOCAL_USER", "MemoryOwner", "served_user"]
__all__ += sorted(_EXPORTS)  # the names imported when first used

__getattr__ = lazy_exports(__name__, _EXPORTS)
