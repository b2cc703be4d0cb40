"""``sweep.jobs.job``: one job built from the real composed config, with a small fake embedder
(no model): its stages, its eval config, its dataset, and the row it saves for every outcome."""

from __future__ import annotations

import json
import logging
import zlib

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from sweep.core.evalconfig import EvalConfig
from sweep.core.types import Chunk, Dataset, Document, Judgment, Query
from sweep.hydrakit.config import CONF_DIR, embedder_node, register
from sweep.hydrakit.devices import Launch
from sweep.jobs import job as jobmod
from sweep.jobs.job import (
    ConfigError,
    build_eval,
    build_stages,
    embedder_node,
    load_job_dataset,
    retime_wanted,
    run_job,
    save_failed_row,
    scoring_config,
)
from sweep.pipeline.latency import encode_times_for
from sweep.store.row import Row
from sweep.store.traces import read_traces

register()

# --------------------------------------------------------------------------- fakes (no model)


class _Stats:
    embedded = cache_hits = cache_misses = 0
    seconds = load_seconds = 0.0


#: Every embedder built by a test, to look at what the job did with it.
BUILT: list[HashEmbedder] = []


class HashEmbedder:
    """Bag of hashed words: texts sharing words get similar vectors. ``fail`` makes the
    chunk embedding raise (``interrupt``: as Ctrl-C would)."""

    max_seq_length = 512

    def __init__(
        self,
        *,
        device: str = "cpu",
        fail: str | None = None,
        identity: str | None = None,
        **_: object,
    ) -> None:
        self.device = device
        self.fail = fail
        if identity:
            self.identity = identity
        self.stats = _Stats()
        self.whats: list[str] = []
        self.encoded: list[str] = []
        BUILT.append(self)

    def reset_stats(self) -> None:
        self.stats = _Stats()

    def count_model_tokens(self, texts):
        return np.array([len(t.split()) for t in texts])

    def _vectors(self, texts):
        v = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                v[i, zlib.crc32(w.strip(".,?!").encode()) % 64] += 1.0
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)

    def embed_documents(self, texts, what="texts"):
        self.whats.append(what)
        if self.fail == "interrupt":
            raise KeyboardInterrupt
        if self.fail:
            raise RuntimeError(self.fail)
        return self._vectors(texts)

    def embed_queries(self, texts):
        return self._vectors(texts)

    def encode_query(self, text):
        self.encoded.append(text)
        return self._vectors([text])


class WholeDocument:
    """A user's chunker with only ``chunk(doc)``: one chunk per document."""

    def __init__(self, *, embed_fn, **options: object) -> None:
        self.embed_fn = embed_fn
        self.notes = ("whole documents only",)

    def chunk(self, doc: Document) -> list[Chunk]:
        return [Chunk(doc.doc_id, 0, 0, len(doc.text), doc.text, len(doc.text.split()))]


FAKE = [f"embed._target_={__name__}.HashEmbedder", "runtime.cache_dir=off"]


def _compose(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def _tiny(*overrides: str):
    return _compose("dataset=tiny", *FAKE, "eval.n_boot=50", "eval.latency_queries=0", *overrides)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    BUILT.clear()
    monkeypatch.setattr(jobmod, "_datasets", {})  # each test loads its datasets itself


# --------------------------------------------------------------------------- stages


def test_the_embedder_is_handed_the_runtime_keys_and_only_a_given_device(tmp_path):
    cfg = _compose(f"runtime.cache_dir={tmp_path}", "runtime.show_progress=false")
    assert "cache_dir" not in cfg.embed and "prewarm" not in cfg.embed  # not the embedder's keys
    node = embedder_node(cfg)
    assert node["cache_dir"] == str(tmp_path) and node["show_progress"] is False
    assert "prewarm" not in node
    assert node["device"] == "cpu" and node["model"] == cfg.embed.model
    assert embedder_node(cfg, "cuda:1")["device"] == "cuda:1"
    assert cfg.embed.device == "cpu"  # a copy: the config keeps its own
    # An embedder without a device option is not handed one.
    bare = OmegaConf.create({"embed": {"_target_": "x.Y"}, "runtime": {"cache_dir": "off"}})
    assert "device" not in embedder_node(bare, "cuda:0")


def test_build_stages_hands_the_chunker_the_embedders_sentence_embedding():
    stages = build_stages(_tiny("chunk=semantic", "chunk.size=32"))
    (emb,) = BUILT
    assert stages.embedder is emb and stages.reranker is None  # rerank=none
    doc = Document(
        "a.md",
        "Rail travel is preferred. Meals cost money. "
        "Sensors need calibration every year. Batteries last long.",
    )
    chunks = stages.chunker.chunk_documents([doc])
    assert chunks and all(doc.text[c.start : c.end] == c.text for c in chunks)
    assert emb.whats and set(emb.whats) == {"sentences"}  # embed_fn is embed_documents(what=...)


def test_a_chunker_with_only_chunk_is_wrapped_and_keeps_its_notes():
    stages = build_stages(_tiny(f"chunk._target_={__name__}.WholeDocument"))
    docs = [Document("a", "one two"), Document("b", "three"), Document("c", "four five six")]
    chunks = stages.chunker.chunk_documents(docs)
    assert [(c.doc_id, c.text) for c in chunks] == [
        ("a", "one two"),
        ("b", "three"),
        ("c", "four five six"),
    ]
    assert stages.chunker.notes == ("whole documents only",)


def test_build_stages_hands_the_retriever_the_index_group():
    from sweep.retrieval.index import HNSWIndex
    from sweep.retrieval.lexical import BM25Retriever

    stages = build_stages(_tiny("index=hnsw", "retrieve.depth=7"))
    assert isinstance(stages.retriever.search_index, HNSWIndex) and stages.retriever.depth == 7
    assert isinstance(build_stages(_tiny("retrieve=bm25")).retriever, BM25Retriever)


# --------------------------------------------------------------------------- eval config


def test_build_eval_turns_bad_values_into_one_line_config_errors():
    assert build_eval(_compose("eval.k=[1,5]", "eval.table_k=[5]")).k == (1, 5)
    with pytest.raises(ConfigError) as e:
        build_eval(_compose("eval.n_boot=0"))
    assert str(e.value).startswith("eval: ") and "n_boot" in str(e.value)
    assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match=r"^eval: .*unknown_key"):
        build_eval(_compose("+eval.unknown_key=1"))


def test_build_eval_refuses_a_target_that_is_not_an_eval_config():
    cfg = _compose()
    cfg.eval = OmegaConf.create({"_target_": "builtins.dict", "k": 5})
    with pytest.raises(ConfigError, match=r"eval: _target_ must build a .*EvalConfig, got dict"):
        build_eval(cfg)


# --------------------------------------------------------------------------- dataset


def _dataset(*relevant: tuple[Judgment, ...]) -> Dataset:
    docs = (Document("a.md", "alpha beta gamma delta " * 5),)
    return Dataset(
        "mini", docs, tuple(Query(f"q{i}", f"question {i}", r) for i, r in enumerate(relevant))
    )


def test_a_span_primary_falls_back_to_the_document_level_without_spans(caplog):
    ev = EvalConfig(primary="span/recall@5")
    docs_only = _dataset((Judgment("a.md"),), (Judgment("a.md", grade=2),))
    with caplog.at_level(logging.WARNING, logger="sweep"):
        got = scoring_config(docs_only, ev)
    assert got.primary == "doc/recall@5" and got == ev.with_primary("doc/recall@5")
    assert "no evidence spans" in caplog.text and "doc/recall@5" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sweep"):
        assert scoring_config(docs_only, ev, warn=False).primary == "doc/recall@5"
    assert caplog.text == ""
    # One span judgment with a positive grade is enough to keep the span primary.
    spans = _dataset((Judgment("a.md"),), (Judgment("a.md", 0, 5),))
    assert scoring_config(spans, ev) is ev
    # A grade-0 span does not count: it is not relevant.
    zero = _dataset((Judgment("a.md"),), (Judgment("a.md", 0, 5, grade=0),))
    assert scoring_config(zero, ev).primary == "doc/recall@5"
    # A doc-level primary is left alone.
    assert scoring_config(docs_only, EvalConfig(primary="doc/ndcg@10")).primary == "doc/ndcg@10"


def test_a_page_primary_falls_back_to_the_document_level_without_pages(caplog):
    ev = EvalConfig(primary="page/recall@5")
    no_pages = _dataset((Judgment("a.md", 0, 5),), (Judgment("a.md"),))
    with caplog.at_level(logging.WARNING, logger="sweep"):
        got = scoring_config(no_pages, ev)
    assert got.primary == "doc/recall@5"
    assert "no evidence on a page of a paged document" in caplog.text
    assert "doc/recall@5 instead of page/recall@5" in caplog.text
    # One judgment on a page keeps the page primary; one of grade 0 does not count.
    paged = _dataset((Judgment("a.md", 0, 5, pages=((1, 0, 50),)),), (Judgment("a.md"),))
    assert scoring_config(paged, ev) is ev
    zero = _dataset(
        (Judgment("a.md", 0, 5, grade=0, pages=((1, 0, 50),)), Judgment("a.md")),
    )
    assert scoring_config(zero, ev).primary == "doc/recall@5"


def test_a_dataset_with_nothing_to_score_is_a_config_error():
    with pytest.raises(ConfigError, match="dataset mini: no query has a relevant judgment"):
        scoring_config(_dataset((), (Judgment("a.md", grade=0),)), EvalConfig())


def test_load_dataset_loads_once_per_node_and_unwraps_hydras_error(tmp_path):
    cfg = _tiny()
    first = load_job_dataset(cfg.dataset)
    assert first.name and len(first.queries) == 7
    assert load_job_dataset(cfg.dataset) is first  # every job of a sweep shares it
    assert load_job_dataset(_tiny("dataset.split=test").dataset) is first  # the same node
    from sweep.datasets.loading import DatasetError

    bad = _tiny(f"dataset.path={tmp_path / 'nowhere'}")
    with pytest.raises(DatasetError) as e:  # the loader's own error, not InstantiationException
        load_job_dataset(bad.dataset)
    assert "nowhere" in str(e.value)


# --------------------------------------------------------------------------- encode times


def test_a_jobs_encode_times_are_measured_once_per_sweep_folder_with_the_cache_off(tmp_path):
    assert encode_times_for(HashEmbedder(), tmp_path) is None  # no identity: nothing shared
    emb = HashEmbedder(identity="fake-1")
    times = encode_times_for(emb, tmp_path)
    got = times(["a question", "another one"]).ms
    assert got.shape == (2,) and np.all(got >= 0)
    n = len(emb.encoded)
    assert n >= 2 and {"a question", "another one"} <= set(emb.encoded)
    again = encode_times_for(HashEmbedder(identity="fake-1"), tmp_path)(
        ["a question", "another one"]
    ).ms
    np.testing.assert_allclose(again, got, atol=1e-3)  # read back, not measured again
    assert BUILT[-1].encoded == []
    other = HashEmbedder(identity="fake-2")
    encode_times_for(other, tmp_path)(["a question"])
    assert other.encoded  # another embedder is timed on its own


def test_runtime_retime_is_auto_by_default_and_must_be_true_false_or_auto():
    assert retime_wanted(_tiny()) is None and retime_wanted(_tiny("runtime.retime=true")) is True
    assert retime_wanted(_tiny("runtime.retime=false")) is False
    with pytest.raises(ConfigError, match="runtime.retime must be true, false or auto, got 'yes'"):
        retime_wanted(_tiny("runtime.retime=yes"))


# --------------------------------------------------------------------------- run_job


def test_an_ok_job_saves_its_config_scores_traces_and_row(tmp_path):
    cfg = _tiny("chunk.size=64", "chunk.overlap=8")
    d = tmp_path / "sweep" / "3"
    row = run_job(cfg, d, 3, ["chunk.size=64", "chunk.overlap=8"], {"index": "flat"})
    assert row.ok and row.job == 3 and row.error is None
    saved = Row.from_json((d / "row.json").read_text(), path=d)
    assert saved.status == "ok" and saved.settings["chunk.size"] == 64
    assert saved.settings["chunk.overlap"] == 8 and saved.overrides == (
        "chunk.size=64",
        "chunk.overlap=8",
    )
    assert saved.dataset.fingerprint == load_job_dataset(cfg.dataset).fingerprint()
    assert saved.stats.total_s > 0 and saved.stats.n_chunks == row.stats.n_chunks > 0
    resolved = OmegaConf.load(d / "resolved_config.yaml")
    assert resolved.chunk.size == 64 and "${" not in (d / "resolved_config.yaml").read_text()
    header = (d / "per_query.csv").read_text().splitlines()[0]
    assert header == "query_id,level,metric,value"
    traces = read_traces(d / "hits.jsonl")
    assert len(traces) == 7 and all(len(t.hits) <= max(row.eval.k) for t in traces.values())
    # The primary metric in the row is the mean of what the per-query file holds.
    p = row.eval.primary_metric
    m = row.interval(p.level, p.metric)
    values = [
        float(v)
        for _, level, metric, v in (
            line.split(",") for line in (d / "per_query.csv").read_text().splitlines()[1:]
        )
        if (level, metric) == (p.level, p.metric)
    ]
    scored = [t for t in traces.values() if t.credits.get(p.level)]  # unanswerable ones are not
    assert 0 < len(values) == len(scored) < 7 and m.mean == pytest.approx(np.mean(values))
    assert 0.0 <= m.ci_low <= m.mean <= m.ci_high <= 1.0
    assert not (d / "error.txt").exists()


def test_what_the_page_chunker_counted_is_in_the_saved_row_and_its_notes(tmp_path):
    # The tiny dataset has no paged document: every one falls back, and the row says so.
    d = tmp_path / "sweep" / "0"
    row = run_job(_tiny("chunk.strategy=page"), d, 0, ["chunk.strategy=page"], {})
    assert row.ok, row.error
    n_docs = len(load_job_dataset(_tiny().dataset).documents)
    saved = Row.from_json((d / "row.json").read_text(), path=d)
    assert (saved.stats.n_pages, saved.stats.pages_split) == (0, 0)
    assert saved.stats.docs_without_pages == n_docs
    assert saved.notes == (f"page: {n_docs} documents have no pages and were chunked by paragraph",)
    token = run_job(_tiny(), tmp_path / "sweep" / "1", 1, [], {})
    assert token.stats.n_pages is None and token.notes == ()


def test_a_value_the_user_escaped_is_saved_as_the_literal_it_is(tmp_path, monkeypatch):
    # \${oc.env:KEY} is the literal string ${oc.env:KEY}: the saved config must not turn it
    # back into an interpolation that a reader (OmegaConf, Hydra, sweep.export) resolves.
    from sweep.core.configfiles import read_yaml

    monkeypatch.setenv("SWEEP_TEST_KEY", "sk-secret-1234")
    literal = "${oc.env:SWEEP_TEST_KEY} {document} {chunk}"
    cfg = _tiny("chunk.size=64", f"context.prompt='\\{literal}'")
    d = tmp_path / "0"
    assert run_job(cfg, d, 0, [], {}).ok
    saved = d / "resolved_config.yaml"
    assert OmegaConf.load(saved).context.prompt == literal
    assert read_yaml(saved)["context"]["prompt"] == literal
    assert read_yaml(saved)["chunk"]["size"] == 64
    assert "sk-secret" not in saved.read_text()


def test_an_invalid_setting_saves_an_invalid_row_and_the_sweep_goes_on(tmp_path, caplog):
    cfg = _tiny("chunk.size=32", "chunk.overlap=32")
    d = tmp_path / "0"
    with caplog.at_level(logging.ERROR, logger="sweep"):
        row = run_job(cfg, d, 0, ["chunk.size=32", "chunk.overlap=32"], {})
    assert row.status == "invalid" and row.summary is None
    assert "overlap" in row.error and "\n" not in row.error
    assert row.error.split(":")[0].endswith("Error")  # with its type
    assert json.loads((d / "row.json").read_text())["status"] == "invalid"
    assert not (d / "per_query.csv").exists() and not (d / "error.txt").exists()
    assert "invalid setting (chunk.size=32 chunk.overlap=32)" in caplog.text


def test_a_crash_saves_a_failed_row_with_the_traceback_beside_it(tmp_path):
    cfg = _tiny("+embed.fail=disk on fire")
    d = tmp_path / "1"
    row = run_job(cfg, d, 1, [], {})
    assert row.status == "failed" and row.error == "RuntimeError: disk on fire"
    assert row.summary is None and row.diagnostics is None
    tb = (d / "error.txt").read_text()
    assert tb.startswith("Traceback") and "disk on fire" in tb and "embed_documents" in tb
    assert Row.from_json((d / "row.json").read_text()).status == "failed"


def test_ctrl_c_in_a_job_is_not_a_failed_row(tmp_path):
    d = tmp_path / "2"
    with pytest.raises(KeyboardInterrupt):
        run_job(_tiny("+embed.fail=interrupt"), d, 2, [], {})
    assert not (d / "row.json").exists() and not (d / "error.txt").exists()


def test_a_bad_eval_config_stops_before_the_job_folder_is_made(tmp_path):
    with pytest.raises(ConfigError):
        run_job(_tiny("eval.n_boot=0"), tmp_path / "0", 0, [], {})
    assert not (tmp_path / "0").exists()


def test_device_auto_is_resolved_and_the_cpu_split_between_parallel_jobs(tmp_path, monkeypatch):
    threads = []
    monkeypatch.setattr(jobmod.devices, "apply_threads", threads.append)
    monkeypatch.setattr(jobmod.devices, "machine", lambda probe_gpus: jobmod.devices.Machine(4))
    row = run_job(
        _tiny("embed.device=auto"),
        tmp_path / "0",
        0,
        [],
        {},
        Launch("joblib", {"n_jobs": 2}, n_jobs=4),
    )
    assert row.ok and BUILT[0].device == "cpu" and threads == [2]  # 4 cores, 2 at a time
    run_job(_tiny("embed.device=cuda:3"), tmp_path / "1", 1, [], {})
    assert BUILT[-1].device == "cuda:3" and threads[-1] is None  # kept; basic: all cores


def test_save_failed_row_records_a_dead_worker(tmp_path):
    cfg = _tiny("chunk.size=48")
    d = tmp_path / "5"
    row = save_failed_row(
        cfg, d, 5, ["chunk.size=48"], {}, "its worker process died (exit code 137)"
    )
    assert row.status == "failed" and row.summary is None
    saved = Row.from_json((d / "row.json").read_text())
    assert saved.error == "its worker process died (exit code 137)"
    assert saved.settings["chunk.size"] == 48 and saved.overrides == ("chunk.size=48",)
    assert (d / "resolved_config.yaml").exists() and BUILT == []  # nothing was built
