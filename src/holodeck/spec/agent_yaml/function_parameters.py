"""A function tool's explicit `parameters` (the shipped HoloDeck's form: a JSON Schema
per argument, by name): checked against the function's signature when the agent is
loaded, and turned into the object schema the model is offered."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from holodeck.spec.diagnostics import FieldPath, did_you_mean

if TYPE_CHECKING:
    from holodeck.spec.python_tools import FoundFunction
    from holodeck.spec.references import References

# Filled in by the runtime (an image's params), never offered to the model.
INJECTED_ARGUMENT = "params"


def parameters_schema(
    parameters: Mapping[str, Mapping[str, Any]], optional: Collection[str]
) -> dict[str, Any]:
    """The object schema for `parameters`; `optional` are the arguments with a default.

    `required: true|false` inside an argument's schema (how the shipped HoloDeck's
    documents mark it) decides for that argument; it is not JSON Schema, so it is moved
    to the object's `required` list."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, schema in parameters.items():
        properties[name] = {k: v for k, v in schema.items() if k != "required"}
        if schema.get("required", name not in optional) is True:
            required.append(name)
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def check_parameters(
    refs: References,
    parameters: Mapping[str, Mapping[str, Any]],
    function: FoundFunction,
    where: FieldPath,
) -> None:
    """Every described argument exists, every argument without a default is described,
    and each description is a JSON Schema."""
    arguments = {name: has_default for name, has_default in function.arguments}
    arguments.pop(INJECTED_ARGUMENT, None)
    for name, schema in parameters.items():
        if name not in arguments and not function.any_keyword:
            refs.error(
                (*where, name),
                f"`{function.name}` has no argument `{name}`",
                did_you_mean(name, arguments)
                or "its arguments: " + (", ".join(arguments) or "none"),
            )
        elif "required" in schema and not isinstance(schema["required"], bool):
            refs.error((*where, name, "required"), "`required` must be true or false")
        elif schema.get("required") is False and arguments.get(name) is False:
            refs.error(
                (*where, name, "required"),
                f"`{name}` has no default in `{function.name}`, so it cannot be optional",
                "remove `required: false`, or give the argument a default",
            )
    missing = [n for n, has_default in arguments.items() if not has_default and n not in parameters]
    if missing:
        refs.error(
            where,
            f"`{function.name}` needs " + ", ".join(f"`{n}`" for n in missing) + ", which "
            "`parameters` does not describe: the model could never pass "
            + ("it" if len(missing) == 1 else "them"),
            "add " + ", ".join(f"`{n}: {{type: ...}}`" for n in missing) + " to `parameters`",
        )
    _check_schema(refs, parameters, where)


def _check_schema(
    refs: References, parameters: Mapping[str, Mapping[str, Any]], where: FieldPath
) -> None:
    import jsonschema

    schema = parameters_schema(parameters, ())
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        path = list(exc.absolute_path)
        # ["properties", name, ...] -> the argument's own place in agent.yaml
        at = (*where, *path[1:]) if path[:1] == ["properties"] else where
        refs.error(at, f"not a valid JSON Schema: {exc.message}")
