"""Whether the model can read the corpus: the warning, the auto choice, the [UNK] share, hubs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.core.types import Dataset, Document, Query, Ranking
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.embedding.models import load_tokenizer, model_files, resolve_model
from sweep.pipeline.languages import (
    UNK_SHARE,
    chars_per_token,
    choose_embedder,
    corpus_languages,
    describe_mix,
    english_only,
    hub_share,
    language_warning,
    model_unk_share,
    non_latin_share,
    unk_share,
)

JA = "出張する社員は、出発の五営業日前までに出張申請書を上長に提出しなければならない。"
RU = "Сотрудник подаёт заявление на отпуск не позднее чем за три дня до его начала."
EN = "Employees must submit the travel request to their manager five working days ahead."
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def test_describe_mix_as_a_column_and_as_percentages():
    mix = {"ja": 0.93, "en": 0.07}
    assert describe_mix(mix) == "ja 0.93, en 0.07"
    assert describe_mix(mix, percent=True) == "ja 93% en 7%"
    assert describe_mix({}) == "–"
    assert describe_mix({"en": 0.999, "ja": 0.001}) == "en 1.00"  # what rounds to nothing goes


def test_an_english_model_on_a_japanese_corpus_is_one_line_naming_the_fix():
    line = language_warning({"ja": 0.93, "en": 0.07}, 0.17, MINILM, english_model=True)
    assert line == (
        "warning: 93% of the corpus is Japanese and all-MiniLM-L6-v2 reads it as 17% [UNK] "
        "tokens: its numbers will be near zero; use embed=multilingual (offline) or a "
        "multilingual preset (docs/languages.md)"
    )
    assert "\n" not in line


def test_an_english_model_on_russian_warns_without_unknown_tokens():
    # MiniLM's vocabulary has the Cyrillic letters: no [UNK], but it reads them one by one.
    line = language_warning({"ru": 0.8, "en": 0.2}, 0.0, MINILM, english_model=True)
    assert line is not None
    assert "80% of the corpus is Russian" in line and "trained on English only" in line


@pytest.mark.parametrize(
    ("mix", "unk", "english_model"),
    [
        ({"en": 1.0}, 0.0, True),  # English on MiniLM
        ({"latin": 0.9, "en": 0.1}, 0.001, True),  # German on MiniLM: Latin letters it reads
        ({"ja": 0.95, "en": 0.05}, 0.0, False),  # Japanese on a multilingual model
        ({"ja": 0.95}, None, False),  # a model whose tokenizer is not at hand
        ({"en": 0.7, "ja": 0.3}, 0.01, True),  # English with some Japanese: mostly readable
    ],
)
def test_no_warning_when_the_model_reads_the_corpus(mix, unk, english_model):
    assert language_warning(mix, unk, "model", english_model=english_model) is None


def test_a_high_unknown_share_warns_for_any_model_and_any_mix():
    line = language_warning({"en": 0.6, "ja": 0.4}, 0.08, "my/model", english_model=False)
    assert line is not None
    assert "40% of the corpus is not in Latin letters" in line
    assert "model reads it as 8% [UNK] tokens" in line


@given(
    st.dictionaries(
        st.sampled_from(["en", "ja", "zh", "ko", "ru", "latin", "other"]),
        st.floats(0, 1),
        min_size=1,
    ),
    st.one_of(st.none(), st.floats(0, 1)),
    st.booleans(),
)
def test_the_warning_is_one_line_and_fires_exactly_by_the_rule(mix, unk, english_model):
    line = language_warning(mix, unk, MINILM, english_model=english_model)
    fires = (unk is not None and unk >= UNK_SHARE) or (english_model and non_latin_share(mix) > 0.5)
    assert (line is not None) == fires
    if line is not None:
        assert "\n" not in line and "embed=multilingual" in line


def test_english_only_models_by_their_last_path_part():
    assert english_only(MINILM) and english_only("all-MiniLM-L6-v2")
    assert english_only("BAAI/bge-small-en-v1.5") and english_only("/models/e5-small-v2/")
    assert english_only("thenlper/gte-small") and english_only("nomic-ai/nomic-embed-text-v1.5")
    assert not english_only("intfloat/multilingual-e5-small")
    assert not english_only("cl-nagoya/ruri-v3-30m") and not english_only(None)


def test_auto_picks_the_multilingual_model_for_a_mostly_japanese_corpus():
    pick = choose_embedder({"ja": 0.93, "en": 0.07})
    assert pick.node == "other"
    assert pick.line == "embed auto → multilingual: the corpus is 93% Japanese"
    assert choose_embedder({"ru": 0.6, "en": 0.4}).node == "other"


def test_auto_keeps_minilm_for_english_and_latin_script_corpora():
    pick = choose_embedder({"en": 1.0})
    assert pick.node == "english"
    assert pick.line == "embed auto → minilm: the corpus is 100% in Latin letters (mostly English)"
    assert choose_embedder({"latin": 0.7, "en": 0.3}).node == "english"
    assert choose_embedder({"en": 0.6, "ja": 0.4}).node == "english"
    assert choose_embedder({}).node == "english"


def _dataset(docs: list[str], queries: list[str]) -> Dataset:
    return Dataset(
        "d",
        tuple(Document(f"d{i}", t) for i, t in enumerate(docs)),
        tuple(Query(f"q{i}", q, ()) for i, q in enumerate(queries)),
    )


def test_corpus_languages_by_characters_and_han_only_questions_read_as_the_corpus():
    ds = _dataset([JA * 3, EN], ["交通費精算", "出張の日当はいくらですか"])
    languages = corpus_languages(ds)
    assert list(languages.documents) == ["ja", "en"]
    assert languages.documents["ja"] == pytest.approx(3 * len(JA) / (3 * len(JA) + len(EN)))
    # 交通費精算 has no kana: Chinese alone, Japanese in a Japanese corpus.
    assert languages.questions == {"ja": 1.0}
    assert languages.column().startswith("ja 0.")


def test_characters_per_token_a_japanese_character_is_about_one_cl100k_token():
    ratios = chars_per_token([JA, EN, RU])
    assert 0.7 < ratios["ja"] < 1.5
    assert ratios["en"] > 3.5
    assert 1.5 < ratios["ru"] < 4


def _minilm_tokenizer():
    files = model_files(Path(resolve_model(MINILM)))
    return load_tokenizer(files.tokenizer_file)


def test_minilm_reads_japanese_as_many_unknown_tokens_and_english_as_none():
    tokenizer = _minilm_tokenizer()
    assert unk_share(tokenizer, [EN]) == 0.0
    assert unk_share(tokenizer, [JA]) >= UNK_SHARE
    assert unk_share(tokenizer, [""]) is None


def test_the_model_unknown_share_reads_the_embedders_own_tokenizer_without_loading_it(tmp_path):
    embedder = SentenceTransformerEmbedder(MINILM, cache_dir=str(tmp_path))
    assert model_unk_share(embedder, [JA] * 300) >= UNK_SHARE
    assert model_unk_share(embedder, []) is None
    assert model_unk_share(object(), [JA]) is None  # a user's embedder: its list decides
    assert not embedder.stats.load_seconds  # the model was not loaded


def test_a_hub_is_the_chunk_in_most_top_5s():
    ids = np.array(
        [[0, 1, 2, 3, 4, 5], [0, 6, 7, 8, 9, 1], [9, 8, 7, 6, 0, -1], [5, 4, -1, -1, -1, -1]]
    )
    found = hub_share(Ranking(ids, np.zeros(ids.shape, dtype=np.float32)), k=5)
    assert found == (0.75, 0)  # chunk 0 is in the top 5 of three of four questions
    empty = np.zeros((0, 5), dtype=np.int64)
    assert hub_share(Ranking(empty, np.zeros((0, 5), dtype=np.float32))) is None
