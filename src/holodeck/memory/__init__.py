"""Long-term memory: facts an agent keeps for a user (or for itself, or for one session)
across conversations, in the search tools' stores (`memory.long_term`, docs/memory.md).

    bank = open_bank(spec, context)            # None without memory.long_term
    async with bank:
        await bank.remember(MemoryOwner("alice"), "Alice prefers tea")
"""

from holodeck.memory._bank import MemoryBank
from holodeck.memory._opening import open_bank
from holodeck.memory._owners import (
    AGENT_SHARED,
    ANONYMOUS,
    LOCAL_USER,
    MemoryOwner,
    served_user,
)
from holodeck.memory._records import Memory

__all__ = [
    "AGENT_SHARED",
    "ANONYMOUS",
    "LOCAL_USER",
    "Memory",
    "MemoryBank",
    "MemoryOwner",
    "open_bank",
    "served_user",
]
