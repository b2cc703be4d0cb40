"""Text to BM25 terms per language (sweep.core.text.analyzers), on real text."""

from __future__ import annotations

import logging
import re
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sweep.core.errors import InvalidSetting
from sweep.core.text import analyzers
from sweep.core.text.analyzers import ANALYZERS, Analyzer, AnalyzerMissing, cjk_bigrams

pytest.importorskip("sudachipy")
pytest.importorskip("fugashi")
pytest.importorskip("rjieba")


def today(text: str) -> list[str]:
    """sweep's terms before it read languages: lowercased \\w+, English stopwords, stems."""
    import Stemmer
    from bm25s.stopwords import STOPWORDS_EN

    words = [w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS_EN]
    return Stemmer.Stemmer("english").stemWords(words) if words else words


@pytest.fixture
def no_packages(monkeypatch):
    """The analyzers' packages missing, as on an install without the languages extra."""
    monkeypatch.setattr(analyzers, "_TOOLS", {})
    monkeypatch.setattr(analyzers, "_TERMS_MEMO", {})
    for name in ("sudachipy", "fugashi", "jieba", "rjieba"):
        monkeypatch.setitem(sys.modules, name, None)


def test_japanese_is_read_in_words_in_their_dictionary_form_particles_out():
    terms = Analyzer()("出張旅費は、戻った日から十四日以内に申請してください。")
    assert {"出張旅費", "出張", "旅費", "申請", "戻る", "以内"} <= set(terms)
    assert not {"は", "に", "から", "、", "。", "為る", "下さる"} & set(terms)


def test_mecab_reads_japanese_too_and_drops_unidic_glosses():
    terms = Analyzer("mecab")("パッケージを確認してください")
    assert terms == ["パッケージ", "確認"]


def test_full_width_latin_is_read_as_ascii():
    a = Analyzer()
    wide = a("ａｐｔ－ｇｅｔでパッケージをインストールする")
    assert wide == a("apt-getでパッケージをインストールする")
    assert wide[:2] == ["apt", "get"]
    assert Analyzer("english")("ａｐｔ－ｇｅｔ") == ["apt", "get"]


def test_half_width_katakana_with_voicing_marks_is_read_as_full_width():
    a = Analyzer()
    assert a("ﾊﾟｯｹｰｼﾞを確認") == a("パッケージを確認") == ["パッケージ", "確認"]
    assert Analyzer("bigram")("ﾊﾟｯｹｰｼﾞ") == cjk_bigrams("パッケージ")


def test_chinese_is_cut_into_jieba_words():
    terms = Analyzer()("员工出差报销需要在三十天内提交申请，并附上发票。")
    assert {"员工", "出差", "报销", "提交", "申请", "发票"} <= set(terms)
    assert "，" not in terms and "。" not in terms


def test_rjieba_cuts_chinese_as_jieba_does():
    # The languages extra installs rjieba (5 MB) in place of jieba (42 MB) on this promise.
    import jieba
    import rjieba

    jieba.setLogLevel(60)
    for text in (
        "员工出差报销需要在三十天内提交申请，并附上发票。",
        "年假根据工龄计算，工作满一年不满十年的，年休假五天。",
        "密码长度不少于十二位，必须包含大写字母、小写字母、数字和特殊符号。",
    ):
        assert rjieba.cut(text) == list(jieba.cut(text))


def test_a_han_only_question_follows_the_corpus_language():
    a = Analyzer()
    assert a("交通費精算", prior="ja") == ["交通費精算", "交通", "費", "精算"]
    assert a("交通費精算") != a("交通費精算", prior="ja")  # read as Chinese without a prior


def test_russian_is_stemmed_without_stopwords_and_yo_read_as_ye():
    a = Analyzer()
    assert a("Сотрудники уходят в отпуск") == ["сотрудник", "уход", "отпуск"]
    assert a("ёлка") == a("елка")
    assert a("отпусках") == a("отпуск")
    assert Analyzer("russian", russian="lemmas")("Сотрудники уходят") == ["сотрудник", "уходить"]


def test_mixed_text_stems_each_word_by_its_own_script():
    a = Analyzer()
    assert a("Контейнеры Docker запускаются командой running containers") == [
        "контейнер",
        "docker",
        "запуска",
        "команд",
        "run",
        "contain",
    ]
    # Latin words inside Japanese take the English rules: stopwords out, stems.
    assert a("この設定は running containers の場合に使います") == a(
        "この設定は run container の場合に使います"
    )
    assert "the" not in a("the containers を起動する")


def test_korean_is_read_as_character_bigrams():
    assert Analyzer()("연차 휴가는") == ["연차", "휴가", "가는"]


def test_cjk_bigrams_of_a_run_and_of_a_lone_character():
    assert cjk_bigrams("経費精算") == ["経費", "費精", "精算"]
    assert cjk_bigrams("円") == ["円"]
    assert Analyzer("bigram")("30日以内 に") == ["30", "日以", "以内", "に"]


def test_english_reads_as_it_always_has():
    text = "The meal allowances were 45 euros per day; calibrations repeat yearly (v2)."
    assert Analyzer("english")(text) == Analyzer()(text) == today(text)
    assert Analyzer("simple")(text) == re.findall(r"\w+", text.lower())
    assert Analyzer("english", stemmer="none", stopwords="none")(text) == Analyzer("simple")(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=200))
def test_english_is_unchanged_on_any_ascii_text(text):
    assert Analyzer()(text) == Analyzer("english")(text) == today(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(),
            st.sampled_from("ﾊﾟｯｹｰｼﾞａｐｔ－ｇｅｔ経費精算はをの员工出差отпускёЁ연차 。、\n"),
        ),
        max_size=120,
    ),
    st.sampled_from([None, "ja", "zh", "ru", "en"]),
)
@example("\ud800経費", None)  # a lone surrogate (an undecodable byte kept): not UTF-8
def test_every_analyzer_is_total_on_any_text(text, prior):
    for name in ANALYZERS:
        terms = Analyzer(name)(text, prior)
        assert isinstance(terms, list)
        assert all(isinstance(t, str) and t and not t.isspace() for t in terms)


def test_text_longer_than_sudachi_accepts_is_read_in_parts():
    line = "出張旅費は十四日以内に申請してください。\n"
    terms = Analyzer("sudachi")(line * 2000)  # 44,000 characters, 130,000 bytes
    assert terms == Analyzer("sudachi")(line) * 2000


def test_the_terms_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(analyzers, "_TERMS_MEMO", {})
    monkeypatch.setattr(analyzers, "_MEMO_ENTRIES", 5)
    a = Analyzer()
    for i in range(12):
        a(f"第{i}条 有給休暇を申請する")
    assert 0 < len(analyzers._TERMS_MEMO) <= 5


def test_without_the_packages_cjk_falls_back_to_bigrams_said_once(no_packages, caplog):
    a = Analyzer()
    with caplog.at_level(logging.WARNING, logger="sweep.core.text.analyzers"):
        assert a.for_language("ja") == "bigram (sudachipy missing)"
        assert a("有給休暇を申請する", prior="ja") == cjk_bigrams("有給休暇を申請する")
        a("年次有給休暇", prior="ja")
        assert a.for_language("zh") == "bigram (jieba missing)"
        assert a("员工出差") == cjk_bigrams("员工出差")
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2
    assert all('pip install "chunk-sweep[languages]"' in line for line in said)
    assert all("\n" not in line for line in said)
    assert a("Сотрудники уходят в отпуск") == ["сотрудник", "уход", "отпуск"]


def test_mecab_stands_in_for_a_missing_sudachi(monkeypatch, caplog):
    monkeypatch.setattr(analyzers, "_TOOLS", {})
    monkeypatch.setattr(analyzers, "_TERMS_MEMO", {})
    monkeypatch.setitem(sys.modules, "sudachipy", None)
    a = Analyzer()
    with caplog.at_level(logging.WARNING, logger="sweep.core.text.analyzers"):
        assert a.for_language("ja") == "mecab (sudachipy missing)"
        assert a("パッケージを確認してください", prior="ja") == ["パッケージ", "確認"]
    (said,) = [r.getMessage() for r in caplog.records]
    assert "read by mecab" in said


@pytest.mark.parametrize("name", ["sudachi", "mecab", "jieba"])
def test_an_analyzer_asked_for_by_name_whose_package_is_missing_is_bad_input(no_packages, name):
    with pytest.raises(AnalyzerMissing) as caught:
        Analyzer(name)
    # An invalid setting: a sweep's other settings (retrieve.analyzer=sudachi,bigram) run.
    assert isinstance(caught.value, InvalidSetting) and isinstance(caught.value, ImportError)
    message = str(caught.value)
    assert f"retrieve.analyzer={name}" in message and "pip install" in message
    assert "\n" not in message


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="retrieve.analyzer must be one of"):
        Analyzer("kuromoji")
    with pytest.raises(ValueError, match="sudachi_mode"):
        Analyzer("sudachi", sudachi_mode="D")
