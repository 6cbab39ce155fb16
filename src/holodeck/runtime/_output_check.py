"""The shape of an answer that must fit a JSON Schema (an agent's `response_format`, or
a turn's own): a dict type carrying the schema, whose validation checks the answer
against it, so an answer that does not fit goes back to the model as a retry."""

from __future__ import annotations

from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_ai import StructuredDict
from pydantic_core import core_schema


def schema_output(schema: dict[str, Any], name: str = "answer") -> Any:
    """An output type the model is shown as `schema`, named `name`; answers are checked
    against the schema itself. (It is a type rather than an output validator because
    pydantic-ai takes a run's own output type only from an agent with no validators.)"""
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)

    def check(output: Any) -> Any:
        problems = sorted(validator.iter_errors(output), key=lambda e: list(e.absolute_path))
        if problems:
            listed = "; ".join(
                f"{'/'.join(map(str, p.absolute_path)) or 'answer'}: {p.message}"
                for p in problems[:5]
            )
            raise ValueError(f"The answer does not fit the required JSON Schema: {listed}")
        return output

    shown = StructuredDict(schema, name=name)

    class Checked(shown):  # type: ignore[valid-type,misc]
        @classmethod
        def __get_pydantic_core_schema__(
            cls, source: Any, handler: GetCoreSchemaHandler
        ) -> core_schema.CoreSchema:
            inner = shown.__get_pydantic_core_schema__(source, handler)  # type: ignore[attr-defined]
            return core_schema.no_info_after_validator_function(check, inner)

    return Checked
