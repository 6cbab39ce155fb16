"""What the model sees of an agent's tools: each kind of tool as a pydantic-ai toolset,
observed the same way (events, timing, errors, middleware), assembled per agent.

The tools' own workings (Python modules, MCP connections, the Node.js process, the A2A
client, web fetches) are `holodeck.tools`'; only the runtime speaks pydantic-ai."""

from holodeck.runtime.toolsets._a2a import a2a_tool
from holodeck.runtime.toolsets._assembly import AgentTools, agent_toolsets, offered
from holodeck.runtime.toolsets._builtins import builtin_capabilities, builtin_toolset
from holodeck.runtime.toolsets._function import function_tool
from holodeck.runtime.toolsets._mcp import McpToolset, mcp_toolset
from holodeck.runtime.toolsets._mcp_content import model_content
from holodeck.runtime.toolsets._observed import ObservedToolset
from holodeck.runtime.toolsets._prompt import prompt_tool
from holodeck.runtime.toolsets._retrieval import SearchToolset
from holodeck.runtime.toolsets._skills import skills_prompt, skills_toolset
from holodeck.runtime.toolsets._typescript import TypeScriptToolset, typescript_toolset

__all__ = [
    "AgentTools",
    "McpToolset",
    "ObservedToolset",
    "SearchToolset",
    "TypeScriptToolset",
    "a2a_tool",
    "agent_toolsets",
    "builtin_capabilities",
    "builtin_toolset",
    "function_tool",
    "mcp_toolset",
    "model_content",
    "offered",
    "prompt_tool",
    "skills_prompt",
    "skills_toolset",
    "typescript_toolset",
]
