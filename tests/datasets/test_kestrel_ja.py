"""The bundled Japanese example (``dataset=kestrel-ja``): company rules and manuals of
株式会社ケストレル・ラボ・ジャパン with questions whose evidence is quoted from them.

The dataset is read through sweep's own loader, so a quote that stops matching its
document (an edited rule, a changed reader) fails here, not in a user's first sweep.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from paths import ROOT
from sweep.core.text.languages import detect_language, language_mix, nfkc
from sweep.datasets.bundled import bundled_corpus
from sweep.datasets.loading import check_dataset, load_dataset

KESTREL_JA = bundled_corpus("kestrel-ja")
IME_FORMS = re.compile("[\uff21-\uff3a\uff41-\uff5a\uff66-\uff9f]")
TYPES = {"fact", "graded", "adversarial", "multi", "unanswerable"}


@pytest.fixture(scope="module")
def dataset():
    return load_dataset(KESTREL_JA)


def test_the_dataset_has_no_problems():
    assert check_dataset(KESTREL_JA) == []


def test_every_quote_is_located_exactly_where_it_is_written(dataset):
    texts = {d.doc_id: d.text for d in dataset.documents}
    judgments = [j for q in dataset.queries for j in q.relevant]
    assert judgments
    for j in judgments:
        # The file gives quotes only; offsets come from locating them, verbatim.
        assert j.located == "exact", (j.doc_id, j.quote)
        assert texts[j.doc_id][j.start : j.end] == j.quote


def test_counts_of_documents_questions_and_their_kinds(dataset):
    assert len(dataset.documents) == 21
    assert len(dataset.queries) == 99
    types = Counter(q.type for q in dataset.queries)
    assert set(types) == TYPES
    unanswerable = [q for q in dataset.queries if not q.relevant]
    assert len(unanswerable) == types["unanswerable"] == 9
    multi = [q for q in dataset.queries if q.type == "multi"]
    assert len(multi) == 11
    # A multi-passage question needs evidence from two different documents.
    assert all(len({j.doc_id for j in q.relevant}) == 2 for q in multi)
    assert all(j.grade in (1, 2) for q in dataset.queries for j in q.relevant)


def test_every_document_is_of_a_length_worth_chunking(dataset):
    lengths = [len(d.text) for d in dataset.documents]
    assert min(lengths) >= 1_500 and max(lengths) <= 5_000


def test_every_document_and_question_is_japanese(dataset):
    for d in dataset.documents:
        assert detect_language(d.text) == "ja", d.doc_id
    prior = next(iter(language_mix(d.text for d in dataset.documents)))
    assert prior == "ja"
    # Some questions are kanji only (慶弔見舞金 申請期限): the corpus's language decides them.
    for q in dataset.queries:
        assert detect_language(q.query, prior) == "ja", q.query_id


def test_some_questions_are_typed_as_an_input_method_writes_them(dataset):
    # Full-width Latin letters (ＶＰＮ) and half-width katakana (ﾊﾔﾌﾞｻ), which NFKC folds;
    # full-width ？ and digits are ordinary Japanese typing and do not count.
    typed = [q.query_id for q in dataset.queries if IME_FORMS.search(q.query)]
    assert all(nfkc(q.query) != q.query for q in dataset.queries if q.query_id in typed)
    assert 5 <= len(typed) <= 10, typed


def test_a_bm25_sweep_on_the_japanese_example_writes_its_row(tmp_path):
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=kestrel-ja",
        "retrieve=bm25",
        "chunk.size=256",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        "runtime.show_progress=false",
        "eval.n_boot=50",
        f"hydra.sweep.dir={out}",
    ]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1
    assert rows[0]["dataset"] == "kestrel-ja" and rows[0]["status"] == "ok"
    assert 0.0 <= float(rows[0]["span.recall@5"]) <= 1.0


def test_the_checkout_links_the_bundled_folder():
    assert (ROOT / "corpora" / "kestrel-ja").resolve() == Path(KESTREL_JA).resolve()
