"""Guardrail checks read text as a person sees it: look-alike letters (Cyrillic, Greek,
full-width, styled), invisible characters, accents and odd spacing do not slip a blocked
word, a card number or an e-mail address past them, and a redaction keeps the rest of
the original text as it was. Against a served agent on loopback whose model is a
scripted OpenAI-compatible server (what the model receives is what got through)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import scripted_servers
from holodeck.runtime._guard_checks import find, redact
from holodeck.spec.models.guardrails import GuardrailCheck
from scripted_servers import OpenAIServer, text
from server_harness import served
from test_controls import agent_files

openai_server = scripted_servers.openai_server

REFUSAL = "I cannot help with that."
GUARDRAILS = {
    "input": [
        {
            "name": "no-secrets",
            "block_keywords": ["password", "wire the money"],
            "message": REFUSAL,
        },
        {"name": "no-personal-data", "pii": ["email", "card"], "action": "redact"},
    ]
}

DISGUISED = [
    "reset my p\u0430ssword",  # Cyrillic a
    "reset my pass\u200bword",  # zero-width space
    "reset my pass\u00adword",  # soft hyphen
    "reset my \uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44",  # full-width letters
    "reset my pa\u0301ssword",  # a combining acute accent
    "reset my \u0420\u0410SSW\u041eRD",  # Cyrillic capitals
    "reset my \U0001d429\U0001d41a\U0001d42c\U0001d42c\U0001d430\U0001d428\U0001d42b\U0001d41d",
    "please wire\u00a0the money",  # NBSP
    "please wire the\nmoney",  # a newline
    "please wire  the money",  # two spaces
    "please w\u0456re the m\u043eney",  # Cyrillic i and o
]

# what the model is sent for each message: the matched stretch replaced, the rest (its
# look-alike letters included) exactly as the user wrote it
REDACTED = [
    ("p\u0430y with 4111.1111.1111.1111 now", "p\u0430y with [card] now"),
    ("pay with 4111/1111/1111/1111 now", "pay with [card] now"),
    ("pay with 4111\u00a01111\u00a01111\u00a01111 now", "pay with [card] now"),
    ("pay with 4111\u200b1111\u200b1111\u200b1111 now", "pay with [card] now"),
    ("pay with 4111x1111x1111x1111 now", "pay with [card] now"),
    ("pay with \uff14\uff11\uff11\uff11 1111 1111 1111 now", "pay with [card] now"),
    ("write to ann\uff20example.com today", "write to [email] today"),
    ("write to \u0430nn@example.com today", "write to [email] today"),
    ("write to ann@ex\u0430mple.com today", "write to [email] today"),
]


def _agent(tmp_path: Path, server: OpenAIServer) -> Path:
    root = tmp_path / "demo"
    root.mkdir()
    for name, content in agent_files(server, guardrails=GUARDRAILS).items():
        (root / name).write_text(content, encoding="utf-8")
    return root


def test_a_blocked_word_in_any_unicode_disguise_never_reaches_the_model(
    tmp_path: Path, openai_server: OpenAIServer, isolated_home: Path
) -> None:
    root = _agent(tmp_path, openai_server)
    openai_server.script(text("Noted."))
    with served(root, state_dir=tmp_path / "state", model=None) as server:
        # another word is still another word: this one reaches the model
        passport = server.chat("reset my passport").json()
        assert passport.get("response") == "Noted.", passport
        answers = {message: server.chat(message).json() for message in DISGUISED}

    for message, answer in answers.items():
        assert answer.get("response") == REFUSAL, (message, answer)
        assert answer["guardrails"][0]["guardrail"] == "no-secrets", message
    assert len(openai_server.requests) == 1


def test_cards_and_emails_in_any_unicode_disguise_are_redacted_and_the_rest_kept(
    tmp_path: Path, openai_server: OpenAIServer, isolated_home: Path
) -> None:
    root = _agent(tmp_path, openai_server)
    openai_server.script(*[text("Noted.") for _ in REDACTED])
    with served(root, state_dir=tmp_path / "state", model=None) as server:
        for message, _ in REDACTED:
            assert server.chat(message).status_code == 200, message

    seen = [
        next(m["content"] for m in r.body["messages"] if m["role"] == "user")
        for r in openai_server.requests
    ]
    assert seen == [expected for _, expected in REDACTED]


# --- any mix of the transformations: the check still fires --------------------------------

LOOKALIKE = {
    "a": "\u0430\u03b1", "c": "\u0441\u03f2", "e": "\u0435", "i": "\u0456\u03b9",
    "m": "\u043c", "o": "\u043e\u03bf\u0585", "p": "\u0440\u03c1", "s": "\u0455", "w": "\u051d", "y": "\u0443", "d": "\u0501",
    "h": "\u04bb", "t": "\u0442", "x": "\u0445",
}  # fmt: skip
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u034f"]
MARKS = ["\u0301", "\u0308", "\u0327", "\u0300\u0323"]
SPACES = [" ", "\u00a0", "\n", "\t", "  ", "\u2009", "\u3000", " \r\n ", "\u202f"]


@st.composite
def disguised(draw: st.DrawFn, word: str) -> str:
    """`word` with each character perhaps changed: a look-alike, full-width, a styled
    (mathematical) letter, another case, an accent or an invisible character after it;
    each space perhaps another kind of space, or several."""
    out = []
    for char in word:
        if char == " ":
            out.append(draw(st.sampled_from(SPACES)))
            continue
        forms = [char, char.upper(), chr(ord(char) + 0xFEE0), chr(0x1D41A + ord(char) - 97)]
        forms += list(LOOKALIKE.get(char, ""))
        piece = draw(st.sampled_from(forms))
        piece += draw(st.sampled_from(["", "", *MARKS]))
        piece += draw(st.sampled_from(["", "", *INVISIBLE]))
        out.append(piece)
    return "".join(out)


CHECKS = [
    GuardrailCheck(block_keywords=["password", "wire the money"]),
    GuardrailCheck(block_patterns=["(?i)password", "(?i)wire the money"]),
]


@settings(max_examples=300, deadline=None)
@given(
    word=st.sampled_from(["password", "wire the money"]),
    data=st.data(),
    around=st.tuples(st.text(max_size=20), st.text(max_size=20)),
    check=st.sampled_from(CHECKS),
)
def test_any_unicode_disguise_of_a_blocked_word_fires_the_check(
    word: str, data: st.DataObject, around: tuple[str, str], check: GuardrailCheck
) -> None:
    hidden = data.draw(disguised(word))
    before, after = around
    message = f"{before} {hidden} {after}"
    start = len(before) + 1
    end = start + len(hidden)

    found = find(check, message)

    # the disguised word is matched whole, and redacting it keeps what was around it
    (hit,) = [f for f in found if f.start <= start and end <= f.end] or [None]
    assert hit is not None, (message, found)
    assert (hit.start, hit.end) == (start, end)
    assert redact(message, [hit]) == f"{before} [redacted] {after}"
