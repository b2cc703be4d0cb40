"""``python -m sweep.validate`` says the languages of the documents and the questions, and
how many characters a cl100k token is in each."""

from __future__ import annotations

import re
from pathlib import Path

from japanese_corpus import write_japanese_dataset
from paths import ROOT
from sweep.core.types import Dataset, Document, Query
from sweep.validate.__main__ import main
from sweep.validate.validating import language_line

TINY = ROOT / "corpora" / "tiny"
LINE = re.compile(
    r"languages: documents (?P<docs>.+) · questions (?P<questions>.+) · "
    r"characters per cl100k token: (?P<ratios>.+)"
)


def _line(out: str) -> re.Match:
    found = [m for m in map(LINE.fullmatch, out.splitlines()) if m]
    assert len(found) == 1, out
    return found[0]


def test_a_japanese_dataset_is_japanese_at_about_one_character_a_token(tmp_path, capsys):
    assert main([str(write_japanese_dataset(tmp_path))]) == 0
    line = _line(capsys.readouterr().out)
    assert line["docs"] == "ja 100%" and line["questions"] == "ja 100%"
    lang, ratio = line["ratios"].split()
    assert lang == "ja" and 0.7 < float(ratio) < 1.5


def test_an_english_dataset_is_english_at_about_four_characters_a_token(capsys):
    assert main([str(TINY)]) == 0
    line = _line(capsys.readouterr().out)
    assert line["docs"] == "en 100%"
    lang, ratio = line["ratios"].split()
    assert lang == "en" and 3.5 < float(ratio) < 6


def test_a_mixed_corpus_gives_each_language_its_share_and_ratio():
    ja = "年次有給休暇は、入社六か月後に十日付与される。以後、勤続年数に応じて加算する。" * 3
    ru = "Сотрудник подаёт заявление на отпуск не позднее чем за три дня до его начала."
    dataset = Dataset(
        "mixed",
        (Document("a", ja), Document("b", ru)),
        (Query("q", "有給休暇はいつ付与されますか？"),),
    )
    line = LINE.fullmatch(language_line(dataset))
    assert line is not None
    assert line["docs"] == f"ja {100 * len(ja) / (len(ja) + len(ru)):.0f}% ru " + (
        f"{100 * len(ru) / (len(ja) + len(ru)):.0f}%"
    )
    assert line["questions"] == "ja 100%"
    ratios = dict(pair.split() for pair in line["ratios"].split(", "))
    assert set(ratios) == {"ja", "ru"} and float(ratios["ja"]) < float(ratios["ru"])


def test_the_line_stands_between_the_quotes_and_the_statistics(tmp_path, capsys):
    main([str(write_japanese_dataset(Path(tmp_path)))])
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if line.startswith("languages: "))
    assert out[at + 1] == "" and out[at + 2].startswith("documents")
