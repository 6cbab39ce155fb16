"""The offline model's arguments from the user's words: one rule per kind of argument,
read from its JSON schema; what no rule fits is left to the schema's generator."""

from __future__ import annotations

from holodeck.llm.offline_args import from_prompt


def properties(**props: dict[str, object]) -> dict[str, object]:
    return {"type": "object", "properties": props}


def test_each_rule_takes_its_value_from_the_question() -> None:
    schema = properties(
        location={"type": "string"},
        unit={"type": "string", "enum": ["celsius", "fahrenheit"]},
        order_id={"type": "integer"},
        contact={"type": "string", "format": "email"},
        day={"type": "string", "format": "date"},
        question={"type": "string"},
        sku={"type": "string", "pattern": "^SKU-[0-9]+$"},
        note={"type": "string"},
    )
    prompt = (
        "Is order 42 for New York shipped? Mail ana@example.org about SKU-77 "
        "on 2024-05-01, in Fahrenheit."
    )
    assert from_prompt(schema, prompt) == {
        "location": "New York",
        "unit": "fahrenheit",
        "order_id": 42,
        "contact": "ana@example.org",
        "day": "2024-05-01",
        "question": prompt,
        "sku": "SKU-77",
    }


def test_nothing_is_made_up_when_the_question_does_not_say() -> None:
    schema = properties(
        city={"type": "string"},
        unit={"type": "string", "enum": ["celsius", "fahrenheit"]},
        ticket_id={"type": "string"},
        email={"type": "string"},
    )
    assert from_prompt(schema, "hello there") == {}
