"""`type: a2a` tools: a remote agent spoken to over A2A (Agent2Agent) with the a2a-sdk client
(`RemoteAgent`), offered to the model by the runtime as a tool taking one `message`
(`holodeck.runtime.toolsets.a2a_tool`). Each call sends the message in the caller's
`Conversation` with the remote (one remote `contextId` per conversation here) and returns
the remote agent's answer (its artifacts' text, or its final message); a remote task that
asks for input returns its question, and the next call answers that task. The card is read
on the first call (and for the tool's description when the definition gives none); every
request goes through the agent's outbound policy.

    tools:
      - {type: a2a, name: weather_desk, url: "https://agents.example.com/a2a/weather",
         headers: {Authorization: "Bearer ${WEATHER_DESK_KEY}"}}
"""

from holodeck.tools.a2a._remote import (
    CARD_RETRY_S,
    CARD_TIMEOUT_S,
    A2ACallError,
    Conversation,
    RemoteAgent,
)

__all__ = ["CARD_RETRY_S", "CARD_TIMEOUT_S", "A2ACallError", "Conversation", "RemoteAgent"]
