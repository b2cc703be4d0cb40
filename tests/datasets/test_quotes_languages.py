"""Quotes in Japanese and Russian as people type them: spaces and line breaks between
Japanese characters, half-width katakana, full-width Latin, ``ё`` typed as ``е``, and a
fuzzy step that compares Japanese characters rather than whole clauses."""

from __future__ import annotations

import json
import re
import unicodedata
from itertools import accumulate, combinations, pairwise

import pytest
import regex
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sweep.core.text.languages import CJK_CLASS, nfkc
from sweep.datasets.quotes import (
    _ALL,
    _NAMES,
    _NFKC_JOINS,
    _STABLE_CJK,
    _TERM,
    _TOKEN_OF_DIFF,
    NotLocated,
    QuoteIndex,
    QuoteLocation,
    _fold,
    _fold_cluster,
    _fold_text,
    _terms,
    describe_difference,
    locate,
    normalise,
)
from sweep.validate.__main__ import main

# Travel and IT rules of a Japanese company, as its intranet pages read.
RULES = (
    "第1条（目的）\n"
    "この規程は、社員が業務のために出張する場合の旅費の支給基準を定めることを目的とする。\n\n"
    "第2条（出張の申請）\n"
    "出張する社員は、出張の5営業日前までに出張申請書を所属長に提出し、承認を得なければならない。\n"
    "緊急の場合は、事後速やかに申請することができる。\n\n"
    "第3条（交通費）\n"
    "交通費は、最も経済的な経路および方法により計算した実費を支給する。\n"
    "新幹線を利用する場合は、普通車指定席の料金を上限とする。\n\n"
    "第4条（宿泊費）\n"
    "宿泊費は、1泊につき12,000円を上限として実費を支給する。\n"
    "東京都特別区内に宿泊する場合は、1泊につき15,000円を上限とする。\n\n"
    "第5条（精算）\n"
    "出張者は、帰着後10日以内に旅費精算書に領収書を添えて経理部に提出しなければならない。\n\n"
    "第6条（パスワード）\n"
    "社員は、社内システムのパスワードを90日ごとに変更しなければならない。\n"
    "社外からVPNに接続する場合は、多要素認証を必ず使用すること。\n"
)
# The same rules as a PDF reader returns them: lines broken every 24 characters, inside
# sentences and words, and full-width Latin letters and digits, as an input method types.
WRAPPED = "\n".join(
    line[i : i + 24]
    for line in RULES.replace("VPN", "ＶＰＮ").replace("90日", "９０日").split("\n")
    for i in range(0, max(1, len(line)), 24)
)
# Leave rules of a Russian company, with "ё" where a careful writer puts it.
LEAVE = (
    "Ежегодный отпуск предоставляется работнику по графику, утверждённому руководителем.\n"
    "Заявление подаётся не позднее чем за две недели. Всё, что не учтено в графике, "
    "согласовывается отдельно; перенос отпуска оформляется приказом.\n"
    "Ёмкость графика — не более трёх сотрудников отдела одновременно.\n"
)


def _span(text: str, found: QuoteLocation | NotLocated) -> str:
    assert isinstance(found, QuoteLocation), found.message()
    return text[found.start : found.end]


# --- whitespace between CJK characters ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "quote", "span"),
    [
        # a space typed between words of a Japanese sentence, and none where the text has one
        (
            "出張申請書を所属長に提出し",
            "出張 申請書を 所属長に提出し",
            "出張申請書を所属長に提出し",
        ),
        (
            "出張 申請書を所属長に 提出し",
            "出張申請書を所属長に提出し",
            "出張 申請書を所属長に 提出し",
        ),
        # an ideographic space, and a line break with indentation
        ("出張\u3000申請書", "出張申請書", "出張\u3000申請書"),
        ("出張申\n    請書を提出", "出張申請書を提出", "出張申\n    請書を提出"),
        # beside Japanese punctuation and beside Latin letters typed in a Japanese sentence
        ("提出する。 緊急の場合", "提出する。緊急の場合", "提出する。 緊急の場合"),
        ("VPN に接続する", "VPNに接続する", "VPN に接続する"),
    ],
)
def test_a_space_beside_japanese_characters_is_optional(text, quote, span):
    document = f"前文。{text}。後文"
    found = locate(document, quote)
    assert found.how == "normalised", found.message()
    assert _span(document, found) == span
    assert found.normalisations == ("whitespace",)


@pytest.mark.parametrize(
    ("text", "quote", "span"),
    [
        # a PDF line broken inside a number or an English word of a Japanese sentence
        (
            "パスワードは3\n0日ごとに変更する",
            "パスワードは30日ごとに変更",
            "パスワードは3\n0日ごとに変更",
        ),
        ("まず Windows\nUpdate を実行する", "Windows Updateを実行", "Windows\nUpdate を実行"),
        ("まず WindowsUpdate を実行する", "Windows Update を実行", "WindowsUpdate を実行"),
    ],
)
def test_a_quote_in_japanese_is_found_whatever_its_spaces(text, quote, span):
    found = locate(text, quote)
    assert found.how == "normalised", found.message()
    assert _span(text, found) == span
    assert found.normalisations == ("whitespace",)


def test_spaces_between_latin_words_still_count():
    found = locate("Please connect to the VPN first.", "connect tothe VPN")
    assert isinstance(found, NotLocated)
    assert found.differs == "whitespace only"


def test_a_sentence_of_a_hard_wrapped_pdf_is_found_with_its_line_breaks():
    quote = "出張する社員は、出張の5営業日前までに出張申請書を所属長に提出し、承認を得なければならない。"
    found = locate(WRAPPED, quote)
    assert found.how == "normalised"
    span = _span(WRAPPED, found)
    assert "\n" in span and span.replace("\n", "") == quote
    # and a quote copied from the wrapped text, line breaks and all, in the unwrapped one
    found = locate(RULES, span)
    assert found.how == "normalised" and _span(RULES, found) == quote


# --- NFKC of the whole string -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "quote", "span"),
    [
        # half-width katakana: a voiced letter is two code points, a letter and its mark
        ("パスワードを変更する", "ﾊﾟｽﾜｰﾄﾞを変更", "パスワードを変更"),
        ("ﾊﾟｽﾜｰﾄﾞを変更する", "パスワードを変更", "ﾊﾟｽﾜｰﾄﾞを変更"),
        ("ﾃﾞｰﾀﾍﾞｰｽに接続", "データベース", "ﾃﾞｰﾀﾍﾞｰｽ"),
        # a kana and a combining voicing mark (as macOS file names have them)
        ("ハ\u309aスワート\u3099を変更", "パスワード", "ハ\u309aスワート\u3099"),
        # full-width Latin letters and digits, both ways
        ("社外からＶＰＮに接続する", "VPNに接続", "ＶＰＮに接続"),
        ("社外からVPNに接続する", "ＶＰＮに接続", "VPNに接続"),
        ("帰着後１０日以内に提出", "10日以内", "１０日以内"),
        ("帰着後10日以内に提出", "１０日以内", "10日以内"),
        # compatibility Hangul letters compose into a syllable, as NFKC composes the string
        ("ㄱㅏ격 문서", "가격", "ㄱㅏ격"),
    ],
)
def test_the_whole_quote_and_text_are_normalised_as_one_string(text, quote, span):
    found = locate(text, quote)
    assert found.how == "normalised", found.message()
    assert _span(text, found) == span
    assert found.normalisations == ("unicode",)


def test_the_offsets_index_the_text_as_it_was_given():
    found = QuoteIndex(WRAPPED).locate(
        "社外からVPNに接続する場合は、多要素認証を必ず使用すること。"
    )
    assert found.how == "normalised"
    assert WRAPPED[found.start : found.end].startswith("社外からＶＰＮ")
    assert WRAPPED[found.end - 1] == "。"


# --- ё and е ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quote", "span", "needed"),
    [
        (
            "по графику, утвержденному руководителем",
            "по графику, утверждённому руководителем",
            ("ё/е",),
        ),
        ("Все, что не учтено в графике", "Всё, что не учтено в графике", ("ё/е",)),
        ("ЕМКОСТЬ ГРАФИКА", "Ёмкость графика", ("case", "ё/е")),
        # "е" and a combining diaeresis are "ё" by NFKC
        ("подае\u0308тся не позднее", "подаётся не позднее", ("unicode",)),
    ],
)
def test_yo_typed_as_ye_matches(quote, span, needed):
    found = locate(LEAVE, quote)
    assert found.how == "normalised", found.message()
    assert _span(LEAVE, found) == span
    assert found.normalisations == needed


def test_ye_in_the_text_matches_yo_in_the_quote():
    text = LEAVE.replace("ё", "е").replace("Ё", "Е")
    found = locate(text, "Ёмкость графика — не более трёх сотрудников")
    assert found.how == "normalised" and found.normalisations == ("ё/е",)
    assert _span(text, found) == "Емкость графика — не более трех сотрудников"


# --- the fuzzy step in Japanese -----------------------------------------------------------


def test_fuzzy_compares_japanese_characters_not_whole_clauses():
    # "5" typed as "五", a comma and a particle changed: with \w+ "words" this quote shared
    # no word with its sentence, and the closest passage was the first article (0.15)
    quote = "出張する社員は出張の五営業日前までに出張申請書を所属長へ提出し承認を得なければならない"
    found = locate(RULES, quote, fuzzy=0.9)
    assert found.how == "fuzzy" and found.score >= 0.9, found
    assert _span(RULES, found) == (
        "出張する社員は、出張の5営業日前までに出張申請書を所属長に提出し、承認を得なければならない"
    )


def test_fuzzy_prefers_the_passage_that_differs_by_one_character():
    # two sentences alike in their words; the quote differs from the second by one kanji
    quote = "東京都特別区内に宿泊する場合は、1泊につき15,000円を上限とする。"
    text = RULES.replace("東京都特別区内", "東京都特別区外")
    found = locate(text, quote, fuzzy=0.5)
    assert _span(text, found) == quote.replace("内", "外")
    assert found.score > 0.95


@pytest.mark.parametrize(
    ("quote", "differs"),
    [
        (
            "出張者は、帰着後14日以内に旅費精算書に領収書を添えて経理部に提出しなければならない。",
            'a number: quote has "14", text has "10"',
        ),
        (
            "宿泊費は、1泊につき12,000円を上限として実費を精算する。",
            'characters: quote has "精算", text has "支給"',
        ),
        (
            "新幹線を利用する場合は、普通車指定席の料金を上限にする。",
            'a character: quote has "に", text has "と"',
        ),
        ("新幹線を利用する場合は、グリーン車の料金を上限とする。", "7 characters differ"),
    ],
)
def test_not_found_names_the_japanese_characters_that_differ(quote, differs):
    found = locate(RULES, quote)
    assert isinstance(found, NotLocated) and found.reason == "not found"
    assert found.differs == differs
    assert found.similarity > 0.8
    # the closest passage is the sentence, whole: not widened into the next clause
    assert found.closest.startswith(quote[:3]) and found.closest.endswith("。")


@pytest.mark.parametrize(
    ("quote", "reordered"),
    [
        # the two clauses of a sentence, in the order the PDF reader lost
        ("交通費は、最も経済的な経路および方法により計算した実費を支給する。", True),
        # one kanji changed: its pieces are not all in the text
        ("交通費は、最も経済的な経路および方法により計算した概算を支給する。", False),
        ("交通費は、最も効率的な経路および方法により計算した実費を支給する。", False),
    ],
)
def test_a_japanese_quote_whose_clauses_were_moved_is_told_so(quote, reordered):
    text = "第3条（交通費）\n方法により計算した実費を支給する。交通費は、最も経済的な経路および\n"
    found = locate(text, quote)
    assert not found and found.reordered is reordered, found


# --- English stays as it was --------------------------------------------------------------


NO_CJK = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)).filter(
        lambda c: not re.match(f"[{CJK_CLASS}]", c)
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(NO_CJK)
def test_text_without_cjk_has_the_words_it_always_had(text):
    # the fuzzy step's words and seed terms are \w+ runs and marks, as before
    assert _TOKEN_OF_DIFF.findall(text) == re.findall(r"\w+|[^\w\s]", text)
    assert [t for t, _ in _terms(text)] == re.findall(r"\w+", text)
    assert not _TERM.search(text) or all(m.lastgroup is None for m in _TERM.finditer(text))


def test_japanese_is_cut_into_characters_and_pairs():
    assert _TOKEN_OF_DIFF.findall("VPNに接続、10日") == ["VPN", "に", "接", "続", "、", "10", "日"]
    assert list(_terms("VPNに接続 第3章")) == [
        ("VPN", 0),
        ("に接", 3),
        ("接続", 4),
        ("第", 7),
        ("3", 8),
        ("章", 9),
    ]


# --- the map from the folded text to the original -----------------------------------------

# Pieces of Japanese, Russian and Korean text as they come from input methods, PDFs and web
# pages: kana and kanji, half-width katakana and their voicing marks, combining voicing
# marks, full-width Latin, compatibility Hangul letters and jamo, ё in its forms, spaces of
# several kinds, invisible characters, ASCII.
PIECES = [
    *"出張申請書を提出すパスワード",
    *"ﾊﾟｽﾜｰﾄﾞｶﾞﾃ",
    "\u3099",
    "\u309a",
    *"ＶＰＮ１０ａ",
    *"ㄱㅏㄴㄳ가한",
    "\u1100",
    "\u1161",
    "\u11a8",
    *"ёЁеЕжЖ",
    "\u0308",
    *"、。「」",
    " ",
    " ",
    "\n",
    "\u3000",
    "\u00a0",
    "\u200b",
    *"aBz.,",
]
_INVISIBLE = regex.compile(r"[\p{Cf}\p{Variation_Selector}]+")
_SPACED = f"[{CJK_CLASS}\u3001-\u303f]"


def reference_normalise(text: str) -> str:
    """What :func:`normalise` must give, computed on the whole string at each step."""
    folded = nfkc(nfkc(text).casefold())
    folded = _INVISIBLE.sub("", folded).translate(str.maketrans("ёЁ", "еЕ"))
    folded = " ".join(folded.split())
    return re.sub(f" (?={_SPACED})|(?<={_SPACED}) ", "", folded)


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from(PIECES), max_size=40))
def test_normalising_piece_by_piece_is_normalising_the_whole_string(text):
    assert normalise(text) == reference_normalise(text)


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from(PIECES), max_size=40))
def test_the_map_back_to_the_text_is_monotone_and_exact(text):
    folded = _fold(text)
    assert len(folded.starts) == len(folded.ends) == len(folded.text)
    for start, end in zip(folded.starts, folded.ends, strict=True):
        assert 0 <= start < end <= len(text)
    # in order: a later folded character never comes from earlier in the text
    assert all(a <= b for a, b in pairwise(folded.starts))
    assert all(a <= b for a, b in pairwise(folded.ends))
    # every folded character comes from original characters that fold to it
    for i, char in enumerate(folded.text):
        if char != " ":
            assert char in normalise(text[folded.starts[i] : folded.ends[i]])


@settings(max_examples=300, deadline=None)
@given(st.text(st.one_of(st.sampled_from(PIECES), st.characters(codec="utf-8")), max_size=60))
def test_for_any_text_the_map_is_monotone_and_inside_the_text(text):
    folded = _fold(text)
    assert len(folded.starts) == len(folded.ends) == len(folded.text)
    assert all(0 <= a < b <= len(text) for a, b in zip(folded.starts, folded.ends, strict=True))
    assert all(a <= b for a, b in pairwise(folded.starts))
    assert all(a <= b for a, b in pairwise(folded.ends))
    assert folded.text == normalise(text)


@st.composite
def typed(draw, passage: str) -> str:
    """``passage`` as a person may type it: spaces added or dropped beside Japanese
    characters, half-width katakana, full-width Latin, "е" for "ё", another case."""
    out = []
    for char in passage:
        choice = draw(st.integers(0, 4))
        if char.isspace() and re.match(_SPACED, out[-1][-1:] if out else "x"):
            out.append("" if choice < 2 else char)
        elif choice == 0 and re.match(_SPACED, char):
            out.append(char + " ")
        elif choice == 1:
            out.append(char.translate(str.maketrans("ёЁ", "еЕ")).swapcase())
        elif choice == 2:
            out.append(nfkc(char))
        else:
            out.append(char)
    return "".join(out)


def cluster_boundaries(text: str) -> set[int]:
    return set(accumulate(map(len, regex.findall(r"\X", text)), initial=0))


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_passage_typed_otherwise_is_found_and_its_span_folds_to_the_quote(data):
    text = data.draw(st.text(st.sampled_from(PIECES), min_size=1, max_size=60))
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i + 1, len(text)))
    bounds = cluster_boundaries(text)
    assume(i in bounds and j in bounds)
    # a passage that NFKC would join to what is around it is not one to quote
    assume(normalise(text[:i]) + normalise(text[i:j]) + normalise(text[j:]) == normalise(text))
    passage = text[i:j]
    quote = data.draw(typed(passage))
    assume(normalise(quote) and normalise(quote) == normalise(passage))
    found = locate(text, quote, occurrence=1)
    assert isinstance(found, QuoteLocation), found.message()
    assert found.how in ("exact", "normalised")
    # the span is the original text, and it folds to what the quote folds to
    assert normalise(text[found.start : found.end]) == normalise(quote)
    assert {found.start, found.end} <= bounds


def test_every_character_nfkc_composes_across_a_cluster_boundary_is_known():
    # a character that NFKC may compose with the one before it, though it begins a
    # grapheme cluster of its own, must be in _NFKC_JOINS (else text and quote could be
    # normalised differently than the whole string)
    joins = regex.compile(r"[\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}]")
    may_compose = regex.compile(r"\p{NFKC_QC=Maybe}")
    missing = [
        char
        for char in map(chr, range(0x110000))
        if unicodedata.category(char) not in ("Cn", "Co", "Cs")
        and not joins.match(char)
        and may_compose.match(nfkc(char)[:1])
        and char not in _NFKC_JOINS
    ]
    assert missing == []


def test_the_stable_cjk_characters_fold_to_themselves():
    stable = regex.compile(f"[{_STABLE_CJK}]")
    chars = [chr(c) for c in range(0x3000, 0xA000) if stable.match(chr(c))]
    assert len(chars) > 27000
    assert [c for c in chars if _fold_cluster(c, _ALL) != c] == []


def test_describe_difference_in_japanese():
    assert describe_difference("出張申請", "出張 申請") == "whitespace only"
    assert describe_difference("申請書を提出", "申請書を送付") == (
        'characters: quote has "提出", text has "送付"'
    )


# --- what sweep.validate says -------------------------------------------------------------


def _dataset(tmp_path, quotes: list[tuple[str, str]]):
    docs = {"rules.md": WRAPPED, "leave.md": LEAVE}
    (tmp_path / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"doc_id": d, "text": t}, ensure_ascii=False) + "\n" for d, t in docs.items()
        ),
        encoding="utf-8",
    )
    (tmp_path / "queries.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "query_id": f"q{i}",
                    "query": "どこ？",
                    "relevant": [{"doc_id": doc_id, "quote": quote}],
                },
                ensure_ascii=False,
            )
            + "\n"
            for i, (doc_id, quote) in enumerate(quotes, 1)
        ),
        encoding="utf-8",
    )
    return tmp_path


def test_validate_locates_quotes_as_people_type_them(tmp_path, capsys):
    folder = _dataset(
        tmp_path,
        [
            ("rules.md", "出張申請書を 所属長に提出し、承認を得なければならない。"),
            ("rules.md", "ﾊﾟｽﾜｰﾄﾞを９０日ごとに変更しなければならない"),
            ("rules.md", "社外からVPNに接続する場合は"),
            ("leave.md", "Заявление подается не позднее чем за две недели."),
        ],
    )
    assert main([str(folder), "--quotes"]) == 0
    out = capsys.readouterr().out
    assert "quotes: 4 located, 0 exact, 4 normalised, 0 fuzzy" in out
    assert f"{folder / 'queries.jsonl'}:4: relevant[0] in 'leave.md' at " in out


def test_validate_says_in_one_line_where_a_japanese_quote_differs(tmp_path, capsys):
    folder = _dataset(
        tmp_path,
        [
            ("rules.md", "出張の５営業日前までに"),
            ("rules.md", "出張者は、帰着後14日以内に旅費精算書に領収書を添えて経理部に提出"),
        ],
    )
    assert main([str(folder)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    line = err[0]
    assert line.startswith(
        f"{folder / 'queries.jsonl'}:2: relevant[0]: quote not located in 'rules.md': quote not "
        "found; closest passage (similarity 0.9"
    )
    assert 'a number: quote has "14", text has "10"' in line
    assert line.endswith("(dataset.fuzzy=0.9 accepts close matches)")
    # the closest passage, as the text has it (a line break and all), reads back from the line
    shown = json.loads(re.search(r': ("出張者.*?")(?: \(|;)', line).group(1))
    assert shown in WRAPPED and "\n" in shown


# Any ASCII, Latin with accents and ligatures, Cyrillic with ё, curly quotes and dashes.
NAMED = "aAbB é\u0301ﬁ-\n\t’“.ёЁеЕ—"


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(NAMED), min_size=1, max_size=30), st.data())
def test_the_normalisations_named_are_the_fewest_that_make_quote_and_span_equal(text, data):
    i = data.draw(st.integers(0, len(text) - 1))
    quote = data.draw(typed(text[i:]))
    found = locate(text, quote, occurrence=1)
    assume(isinstance(found, QuoteLocation) and found.how == "normalised")
    span = text[found.start : found.end]
    names = dict((name, bit) for bit, name in _NAMES)
    # every set of normalisations tried, smallest first, in the order messages list them
    for size in range(1, len(names) + 1):
        fitting = [
            subset
            for subset in combinations(names, size)
            if _fold_text(quote, sum(names[n] for n in subset))
            == _fold_text(span, sum(names[n] for n in subset))
        ]
        if fitting:
            assert found.normalisations == fitting[0]
            return
    raise AssertionError(f"no set of normalisations makes {quote!r} and {span!r} equal")
