"""One sentence rule per language: Japanese and Chinese stops without spaces, quotations
kept whole, Russian abbreviations and initials; English cut as it always was."""

from __future__ import annotations

import importlib.util
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paths import ROOT
from sweep.chunking.health import chunk_health
from sweep.chunking.markdown import MarkdownChunker
from sweep.chunking.strategies import RecursiveChunker, SentenceChunker
from sweep.core.text import passages_of, sentences_of
from sweep.core.text.sentences import (
    SENTENCE_ENDS,
    SENTENCE_RULES,
    sentence_cuts,
    sentence_rule,
)
from sweep.core.textspans import pieces
from sweep.core.types import Chunk, Document


def _sentences(text: str, language: str | None = None) -> list[str]:
    """The sentences of ``text`` by its language's rule, stripped; a cut before a line
    break and one after it leave a blank piece, which no stage keeps."""
    rule = sentence_rule(text, language)
    spans = pieces(0, len(text), sentence_cuts(text, 0, len(text), rule))
    return [text[a:b].strip() for a, b in spans if text[a:b].strip()]


def _bench():
    spec = importlib.util.spec_from_file_location(
        "sentence_accuracy", ROOT / "bench" / "sentence_accuracy.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# --- each language's rule ----------------------------------------------------------------------


def test_each_document_gets_the_rule_of_its_language():
    assert sentence_rule("経費は月末までに申請してください。") is SENTENCE_RULES["ja"]
    assert sentence_rule("报销申请须在月底前提交。") is SENTENCE_RULES["zh"]
    assert sentence_rule("Гарантия действует два года.") is SENTENCE_RULES["ru"]
    assert sentence_rule("The warranty lasts for two years and covers the fan.") is SENTENCE_ENDS
    # Languages without a rule of their own are cut as English always was.
    assert sentence_rule("보증 기간은 2년입니다. 팬도 포함됩니다.") is SENTENCE_ENDS
    assert sentence_rule("Die Garantie gilt zwei Jahre lang für alle Geräte.") is SENTENCE_ENDS
    assert sentence_rule("anything", language="ru") is SENTENCE_RULES["ru"]


def test_japanese_stops_quotations_and_lists():
    text = (
        "部長は「領収書のない申請は受け付けない。」と話していました。"
        "「今月中に出してください。」これは経理部からのお願いです。"
        "本当に全部必要なの?はい、すべて必要です。土日祝日は休みです‼緊急時は電話してください。"
        "上限は１．５万円です．以上です。\n必要な書類：\n・出張申請書\n・領収書の原本\n提出しましょう。"
    )
    assert _sentences(text) == [
        "部長は「領収書のない申請は受け付けない。」と話していました。",
        "「今月中に出してください。」",
        "これは経理部からのお願いです。",
        "本当に全部必要なの?",
        "はい、すべて必要です。",
        "土日祝日は休みです‼",
        "緊急時は電話してください。",
        "上限は１．５万円です．",
        "以上です。",
        "必要な書類：",
        "・出張申請書",
        "・領収書の原本",
        "提出しましょう。",
    ]
    # The old rule cut inside the quotation and ran the list items together.
    old = [text[a:b] for a, b in pieces(0, len(text), sentence_cuts(text, 0, len(text)))]
    assert "部長は「領収書のない申請は受け付けない。」" in old


def test_chinese_quotations_stay_whole():
    text = "他回答说：“我明白了。我下周提交。”经理说：“好的。”有问题请随时联系我们！谢谢。"
    assert _sentences(text) == [
        "他回答说：“我明白了。我下周提交。”",
        "经理说：“好的。”",
        "有问题请随时联系我们！",
        "谢谢。",
    ]


def test_russian_abbreviations_initials_and_years():
    text = (
        "Сервисный центр находится в г. Москва, ул. Ленина, д. 15. Директором стал "
        "И. П. Петров. Подробнее см. Приложение 2. Компания основана в 2005 г. Толщина "
        "корпуса 1.5 см. Книги, журналы и т. д. Доставка бесплатная. «Сколько ждать?» — "
        "спросил клиент. — Неделю. Спасибо!"
    )
    assert _sentences(text) == [
        "Сервисный центр находится в г. Москва, ул. Ленина, д. 15.",
        "Директором стал И. П. Петров.",
        "Подробнее см. Приложение 2.",
        "Компания основана в 2005 г.",
        "Толщина корпуса 1.5 см.",
        "Книги, журналы и т. д.",
        "Доставка бесплатная.",
        "«Сколько ждать?» — спросил клиент.",
        "— Неделю.",
        "Спасибо!",
    ]


def test_english_keeps_todays_cuts():
    text = "Dr. Smith runs the team. The case is 1.5 cm thick, i.e. thin. See Sec. 18."
    rule = sentence_rule(text)
    assert rule is SENTENCE_ENDS
    assert sentence_cuts(text, 0, len(text), rule) == sentence_cuts(text, 0, len(text))
    assert _sentences(text) == [
        "Dr.",
        "Smith runs the team.",
        "The case is 1.5 cm thick, i.e. thin.",
        "See Sec.",
        "18.",
    ]


# --- measured on the labelled samples -----------------------------------------------------------


@pytest.mark.parametrize("language", ["ja", "zh", "ru", "en"])
def test_the_labelled_samples_are_cut_at_least_as_well_as_by_the_old_rule(language):
    bench = _bench()
    sample = bench.sample(language)
    assert len(sample.boundaries) >= 40
    new = bench.measure(sample, sentence_rule(sample.text))
    old = bench.measure(sample, SENTENCE_ENDS)
    if language == "en":
        assert new == old
    else:
        assert new.f1 >= 0.95 and new.f1 > old.f1 + 0.05


# --- properties --------------------------------------------------------------------------------

_PIECES = [
    "保証は二年です",
    "「はい。」",
    "と言った",
    "『本』",
    "。",
    "！",
    "？",
    "．",
    "‼️",
    "?",
    "1.5",
    "１．５",
    "“好的。”",
    "他说",
    "Гарантия",
    "т. е. ",
    "г. ",
    "А. ",
    "И. И. ",
    "и т. д. ",
    "«Да.» ",
    "— ",
    "Word",
    "e.g. ",
    ". ",
    "! ",
    "? ",
    " ",
    "\n",
    "\n\n",
    "\n・",
    "\n- ",
    "\n  ",
    "①",
    "𠮷",
    "e\u0301",
    "👍🏽",
    "\u3000",
]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join)


def _continues(char: str) -> bool:
    return (
        unicodedata.category(char).startswith("M")
        or char in "\u200d\ufe0f\ufe0e"
        or ("\U0001f3fb" <= char <= "\U0001f3ff")
    )


@settings(max_examples=400, deadline=None)
@given(_TEXT, st.sampled_from(["en", "ja", "zh", "ru"]), st.data())
def test_cuts_are_sorted_inside_the_span_and_never_split_a_character(text, language, data):
    rule = SENTENCE_RULES[language]
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    cuts = sentence_cuts(text, a, b, rule)
    assert cuts == sorted(set(cuts))
    assert all(a < c < b for c in cuts)
    for c in cuts:
        assert not _continues(text[c])  # no combining mark, selector or skin tone cut off


_ENGLISH = st.lists(
    st.sampled_from(
        [
            "The fan ",
            "is covered",
            ". ",
            "! ",
            "? ",
            "e.g. ",
            "Dr. ",
            "1.5",
            "\n",
            "\n\n",
            "- ",
            "etc.",
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_ENGLISH)
def test_english_pieces_are_cut_no_further_and_by_the_old_rule(text):
    rule = sentence_rule(text, "en")
    cuts = sentence_cuts(text, 0, len(text), rule)
    assert cuts == sentence_cuts(text, 0, len(text))
    for a, b in pieces(0, len(text), cuts):
        assert sentence_cuts(text, a, b, rule) == []


# --- the stages that cut at sentence ends -------------------------------------------------------

_JAPANESE_DOC = (
    "# 経費精算\n\n"
    + "出張から戻ったら一週間以内に申請してください。領収書の原本は経理部に郵送してください。" * 6
    + "部長は「期限を過ぎた申請は受け付けない。」と話していました。以上です。\n"
)


@pytest.mark.parametrize("chunker", [SentenceChunker, RecursiveChunker, MarkdownChunker])
def test_the_chunkers_cut_japanese_at_its_stops(chunker):
    doc = Document("keihi.md", _JAPANESE_DOC)
    chunks = chunker(size=48, overlap=0).chunk(doc)
    assert len(chunks) > 3
    body = [c for c in chunks if not c.text.startswith("#")]
    # Every chunk ends at 。 (no cut inside the quotation, none mid-sentence).
    assert all(c.text.endswith("。") for c in body), [c.text for c in body]
    assert not any(c.text.endswith("受け付けない。") for c in body)
    assert chunk_health([doc], chunks).midsentence_share == 0.0


def test_the_health_column_reads_each_documents_rule():
    # 】 closes a Japanese sentence; the English rule does not know it.
    doc = Document("ja.md", "「上限は三万円です。」】" + "次に進みます。")
    end = len("「上限は三万円です。」】")
    chunks = [Chunk("ja.md", 0, 0, end, doc.text[:end], 8)]
    assert chunk_health([doc], chunks).midsentence_share == 0.0
    assert not SENTENCE_ENDS.ends_whole(doc.text[:end])


def test_passages_and_their_sentences_follow_the_documents_language():
    text = (
        "# Гарантия\n\nСервис находится в г. Москва, ул. Ленина. Директор — И. П. Петров. "
        "Подробнее см. Приложение 2.\n"
    )
    (passage,) = passages_of(Document("ru.md", text))
    assert [s.text for s in sentences_of(passage, text)] == [
        "Сервис находится в г. Москва, ул. Ленина.",
        "Директор — И. П. Петров.",
        "Подробнее см. Приложение 2.",
    ]


def test_a_code_fence_after_japanese_text_is_not_a_list_item():
    text = "プロキシを設定します。\n\n```bash\nexport http_proxy=http://proxy:8080\nsudo apt-get update\n```\n次に進みます。"
    rule = sentence_rule(text)
    assert rule is SENTENCE_RULES["ja"]
    assert sentence_cuts(text, 0, len(text), rule) == sentence_cuts(text, 0, len(text))
