"""Results the model can read: an MCP `CallToolResult` as model content."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import BinaryContent

from holodeck.tools.mcp import McpToolError

if TYPE_CHECKING:
    from mcp_types import CallToolResult, ContentBlock


def model_content(result: CallToolResult, where: str = "") -> Any:
    """A tool result as the model should see it: `structuredContent` when given (alone, or
    first beside images and files), else each content block: text (JSON text parsed),
    images and audio as binary content, embedded resources as their text or file, links
    as a description. An error result raises `McpToolError` with its text."""
    from mcp_types import TextContent

    blocks = [_block(b) for b in result.content]
    if result.is_error:
        text = " ".join(
            b if isinstance(b, str) else json.dumps(b, default=str)
            for b in blocks
            if not isinstance(b, BinaryContent)
        )
        if not text and result.structured_content is not None:
            text = json.dumps(result.structured_content, default=str)
        raise McpToolError(text or f"{where or 'the tool'} reported an error")
    structured = result.structured_content
    if structured is not None:
        if isinstance(structured, dict) and set(structured) == {"result"}:
            structured = structured["result"]  # the SDKs wrap non-object results so
        others = [
            b
            for b, raw in zip(blocks, result.content, strict=True)
            if not isinstance(raw, TextContent)
        ]
        return [structured, *others] if others else structured
    if not blocks:
        return ""
    return blocks[0] if len(blocks) == 1 else blocks


def _block(block: ContentBlock) -> Any:
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
    )

    if isinstance(block, TextContent):
        text = block.text
        if text.lstrip().startswith(("{", "[")):
            try:
                return json.loads(text)
            except ValueError:
                pass
        return text
    if isinstance(block, ImageContent | AudioContent):
        return BinaryContent(data=base64.b64decode(block.data), media_type=block.mime_type)
    if isinstance(block, ResourceLink):
        link = {
            "resource_link": block.uri,
            "name": block.name,
            "description": block.description,
            "mime_type": block.mime_type,
        }
        return {k: v for k, v in link.items() if v is not None}
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        mime = resource.mime_type or ""
        if not isinstance(resource, BlobResourceContents):
            return {"resource": resource.uri, "text": resource.text}
        data = base64.b64decode(resource.blob)
        if mime.startswith(("image/", "audio/")) or mime == "application/pdf":
            return BinaryContent(data=data, media_type=mime)
        if mime.startswith("text/") or mime.endswith(("json", "xml", "yaml", "javascript")):
            return {"resource": resource.uri, "text": data.decode("utf-8", "replace")}
        return {
            "resource": resource.uri,
            "mime_type": mime or "application/octet-stream",
            "bytes": len(data),
            "note": "binary content, not shown",
        }
    return str(block)
