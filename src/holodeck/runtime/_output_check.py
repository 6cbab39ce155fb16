"""The check an answer must pass when the agent has a `response_format`: its JSON Schema."""

from __future__ import annotations

from typing import Any

from pydantic_ai import ModelRetry


def schema_check(schema: dict[str, Any]) -> Any:
    """An output validator: an answer that does not fit `schema` goes back to the model."""
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)

    def check(output: Any) -> Any:
        problems = sorted(validator.iter_errors(output), key=lambda e: list(e.absolute_path))
        if problems:
            listed = "; ".join(
                f"{'/'.join(map(str, p.absolute_path)) or 'answer'}: {p.message}"
                for p in problems[:5]
            )
            raise ModelRetry(f"The answer does not fit the required JSON Schema: {listed}")
        return output

    return check
