"""Script-based language detection on real sentences of each language sweep reads."""

from hypothesis import given
from hypothesis import strategies as st

from sweep.core.text.languages import LANGUAGES, detect_language, is_cjk, language_mix, nfkc


def test_each_language_is_told_by_its_script():
    assert detect_language("出張の前に、旅費の見積もりを上長に提出してください。") == "ja"
    assert detect_language("ﾊﾟｽﾜｰﾄﾞを変更する") == "ja"  # half-width katakana
    assert detect_language("员工出差前必须提交费用预算。") == "zh"
    assert detect_language("출장 전에 경비 예산을 제출해야 합니다.") == "ko"
    assert detect_language("Сотрудник обязан подать заявку на командировку заранее.") == "ru"
    assert detect_language("Employees must file a travel request before they book.") == "en"
    assert (
        detect_language("Die Mitarbeiter müssen vor der Buchung einen Antrag stellen.") == "latin"
    )
    assert detect_language("12345 — 678") == "other"


def test_a_japanese_page_with_english_commands_is_japanese():
    text = "インストールするには sudo apt-get install kestrel-agent --yes を実行します。"
    assert detect_language(text) == "ja"


def test_full_width_latin_counts_as_latin():
    assert nfkc("ａｐｔ－ｇｅｔ") == "apt-get"
    assert detect_language("ｔｈｅ ｑｕｉｃｋ ｆｏｘ") == "en"


def test_a_han_only_text_follows_the_corpus():
    assert detect_language("交通費精算") == "zh"
    assert detect_language("交通費精算", prior="ja") == "ja"
    assert detect_language("", prior="ru") == "ru"


def test_nfkc_composes_voicing_marks_across_characters():
    assert nfkc("ﾊﾟｯｹｰｼﾞ") == "パッケージ"
    assert is_cjk("パ") and is_cjk("漢") and is_cjk("한") and not is_cjk("a")


def test_the_mix_is_shares_of_characters():
    mix = language_mix(["これは日本語の文です。", "This is the English one."])
    assert list(mix) == ["en", "ja"] or list(mix) == ["ja", "en"]
    assert abs(sum(mix.values()) - 1) < 1e-9
    assert language_mix([]) == {}


@given(st.text())
def test_detection_is_total(text):
    assert detect_language(text) in LANGUAGES
