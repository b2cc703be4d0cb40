"""Contextual chunk headers against the local stand-in LLM: written, cached, never credited."""

from __future__ import annotations

import pytest

from llm_server import ContextResponders, Fault, StandInLLM
from sweep.chunking import build_chunker
from sweep.chunking.contexts import (
    ANTHROPIC_PROMPT,
    ContextError,
    ContextsFailed,
    ContextSpec,
    ContextWriter,
    estimate,
    messages_for,
    with_contexts,
    write_contexts,
)
from sweep.core.evalconfig import EvalConfig
from sweep.core.types import Document, Judgment, Query
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.llm import LLMClient, LLMConfig, ResponseCache
from sweep.pipeline.evaluate import evaluate_setting
from sweep.retrieval.lexical import BM25Retriever

DOC = Document(
    "guide",
    "# Field guide {with braces}\n\n"
    + " ".join(f"Paragraph {i} talks about topic{i} and its upkeep." for i in range(40)),
)


@pytest.fixture
def server():
    with ContextResponders().install(StandInLLM()) as s:
        yield s


def client_for(server, tmp_path, spec=None, **config):
    spec = ContextSpec("llm") if spec is None else spec
    cfg = LLMConfig(
        base_url=server.url,
        model="stand-in",
        api_key_env=None,
        max_retries=0,
        backoff_s=0.0,
        **config,
    )
    return LLMClient(
        spec.llm_config(cfg), None, ResponseCache(tmp_path / "llm"), show_progress=False
    )


def chunks(size=32):
    return build_chunker(strategy="token", size=size, overlap=0).chunk_documents([DOC])


def test_the_default_prompt_is_anthropics_and_documents_keep_their_braces():
    spec = ContextSpec("llm")
    assert spec.prompt == ANTHROPIC_PROMPT and "succinct context" in spec.prompt
    c = chunks()[3]
    system, user = messages_for(spec, DOC, c)
    assert system["content"].startswith("Task: chunk-context")
    assert f"<document>\n{DOC.text}\n</document>" in user["content"]
    assert f"<chunk>\n{c.text}\n</chunk>" in user["content"]
    # Plain text, short: contexts are not JSON.
    cfg = spec.llm_config(LLMConfig(base_url="http://127.0.0.1:1/v1", model="m"))
    assert cfg.json_mode is False and cfg.max_tokens == 150


@pytest.mark.parametrize(
    "kwargs,key",
    [
        ({"mode": "gpt"}, "context.mode "),
        ({"prompt": "no placeholders"}, "context.prompt"),
        ({"max_tokens": 0}, "context.max_tokens"),
        ({"confirm_above": -1}, "context.confirm_above"),
        ({"confirm": "yes"}, "context.confirm"),
    ],
)
def test_bad_settings_are_one_line_errors(kwargs, key):
    with pytest.raises(ContextError) as e:
        ContextSpec(**{"mode": "llm", **kwargs})
    assert key in str(e.value) and "\n" not in str(e.value)


def test_contexts_are_written_once_and_a_rerun_sends_nothing(server, tmp_path):
    spec = ContextSpec("llm")
    found = chunks()
    first = write_contexts(client_for(server, tmp_path), spec, [DOC], found)
    assert first.sent == len(found) == len(server.requests) and first.cached == 0
    assert all(t.startswith('From the document "Field guide {with braces}"') for t in first.texts)
    assert first.prompt_tokens > 0 and first.completion_tokens > 0
    again = write_contexts(client_for(server, tmp_path), spec, [DOC], found)
    assert again.sent == 0 and again.cached == len(found) and len(server.requests) == len(found)
    assert again.texts == first.texts
    assert (again.prompt_tokens, again.completion_tokens) == (
        first.prompt_tokens,
        first.completion_tokens,
    )
    # Another chunking pays only for chunks whose text is new.
    other = found[:5] + chunks(size=64)[:2]
    assert estimate(client_for(server, tmp_path), spec, [DOC], other).requests == 2


def test_the_estimate_counts_tokens_prices_them_and_needs_confirmation(server, tmp_path):
    spec = ContextSpec("llm", confirm_above=5)
    client = client_for(server, tmp_path, spec, input_price=0.15, output_price=0.6)
    found = chunks()
    est = estimate(client, spec, [DOC], found)
    assert est.requests == len(found) > 5
    assert est.prompt_tokens > len(found) * 300  # the whole document in every prompt
    assert est.completion_tokens == 150 * len(found)
    assert est.cost == pytest.approx((est.prompt_tokens * 0.15 + est.completion_tokens * 0.6) / 1e6)
    with pytest.raises(ContextError) as e:
        ContextWriter(client, spec)([DOC], found)
    message = str(e.value)
    assert "\n" not in message and "context.confirm=true" in message
    assert f"{len(found)} requests" in message and "$" in message
    assert server.requests == []  # nothing was sent
    written = ContextWriter(client, ContextSpec("llm", confirm=True, confirm_above=5))([DOC], found)
    assert written.sent == len(found) and written.cost > 0


def test_failed_contexts_fail_the_setting_are_not_cached_and_are_asked_again(server, tmp_path):
    spec = ContextSpec("llm")
    found = chunks()
    server.add_faults(Fault(status=500), Fault(status=500))
    with pytest.raises(ContextsFailed) as e:
        write_contexts(client_for(server, tmp_path), spec, [DOC], found)
    assert str(e.value).startswith(f"2 of {len(found)} chunk contexts got no answer")
    n = len(server.requests)
    again = write_contexts(client_for(server, tmp_path), spec, [DOC], found)
    assert again.sent == 2 and len(server.requests) == n + 2


def test_a_context_far_over_its_budget_fails_the_setting_naming_the_chunk(server, tmp_path):
    # An endpoint that ignores max_tokens: 2.4 MB for one chunk, 150 tokens allowed.
    found = chunks()
    flood = "situating words " * 150_000
    ContextResponders(
        say=lambda document, piece: flood if piece == found[3].text else "A short context."
    ).install(server)
    spec = ContextSpec("llm")
    with pytest.raises(ContextsFailed) as e:
        write_contexts(client_for(server, tmp_path), spec, [DOC], found)
    message = str(e.value)
    assert message.startswith(
        f"1 of {len(found)} chunk contexts are more than 4 times context.max_tokens=150 tokens long"
    )
    assert "'guide#3'" in message and "2,399,999 characters" in message
    assert "\n" not in message
    # Read back from the cache, it is refused the same way: never searched.
    with pytest.raises(ContextsFailed):
        write_contexts(client_for(server, tmp_path), spec, [DOC], found)
    assert len(server.requests) == len(found)


def test_a_context_a_little_over_its_budget_is_kept(server, tmp_path):
    # The model's tokenizer counts differently from cl100k_base: 300 tokens for 150 pass.
    found = chunks()[:2]
    ContextResponders(say=lambda document, piece: "word " * 300).install(server)
    written = write_contexts(client_for(server, tmp_path), ContextSpec("llm"), [DOC], found)
    assert written.texts == [("word " * 300).strip()] * 2


def test_a_context_is_searched_but_never_credited(server, tmp_path):
    """The context of another chunk states the answer verbatim; that chunk ranks first
    and still earns nothing: credit comes from offsets into the document."""
    answer = "The upkeep of topic7 needs a yearly oiling."
    text = (
        "# Machines\n\n"
        + "Filler about machines and gears. " * 30
        + answer
        + " "
        + "Filler about machines and gears. " * 30
    )
    doc = Document("m", text)
    start = text.index(answer)
    query = Query("q", "yearly oiling upkeep topic7", (Judgment("m", start, start + len(answer)),))
    chunker = build_chunker(strategy="token", size=48, overlap=0)
    holder = next(c for c in chunker.chunk_documents([doc]) if c.start <= start < c.end)
    planted = ContextResponders(
        say=lambda document, piece: (answer + " ") * 3 if answer not in piece else "About machines."
    )
    planted.install(server)
    spec = ContextSpec("llm")
    config = EvalConfig(
        k=(1, 3), table_k=(1,), primary="span/recall@1", budgets=(), n_boot=20, latency_queries=0
    )
    result = evaluate_setting(
        [doc],
        [query],
        chunker,
        SentenceTransformerEmbedder(cache_dir="off", show_progress=False),
        BM25Retriever(),
        config,
        contexts=ContextWriter(client_for(server, tmp_path), spec),
    )
    top = result.chunks[result.ranking.row(0)[0]]
    assert answer in top.embedding_input and answer not in top.text and top is not holder
    assert result.summary.interval("span", "recall@1").mean == 0.0
    # Chunks with the same text in the same document are one request.
    assert result.stats.context_requests == len({c.text for c in result.chunks})


def test_with_contexts_prepends_before_a_heading_prefix_and_keeps_offsets():
    found = build_chunker(strategy="token", size=32, prefix="title+headings").chunk_documents([DOC])
    out = with_contexts(found, ["ctx"] * len(found))
    for before, after in zip(found, out):
        assert (after.start, after.end, after.text) == (before.start, before.end, before.text)
        assert after.embedding_input == f"ctx\n\n{before.embedding_input}"
    assert with_contexts(found, [""] * len(found)) == found
