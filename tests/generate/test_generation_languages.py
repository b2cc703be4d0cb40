"""Questions in the documents' language: the prompts name it, and the local filters count
Japanese and Chinese by characters (a Japanese question has no spaces)."""

from __future__ import annotations

import json
import re

import pytest

from llm_server import GenerationResponders, StandInLLM
from sweep.core.types import Document
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.generate import prompts
from sweep.generate.config import GenerateConfig
from sweep.generate.filters import CJK_CHARS_PER_WORD, longest_copied_run
from sweep.generate.passages import SentenceWindow
from sweep.generate.replies import ShapeError, parse_draft
from sweep.generate.run import generate
from sweep.generate.spans import match_span, normalize
from sweep.llm import LLMClient, LLMConfig, ResponseCache

PASSAGE_JA = (
    "国内出張の宿泊費は一泊あたり一万二千円を上限として実費で精算します。"
    "東京都内と大阪市内は上限が一万五千円になります。"
)


def _window(text: str) -> SentenceWindow:
    return SentenceWindow(0, "doc.md", "", 0, 0, len(text), text, len(text))


# --- the prompts ---------------------------------------------------------------------------------


def test_the_prompts_ask_for_questions_in_the_passages_language():
    japanese = prompts.fact(_window(PASSAGE_JA))[1]["content"]
    assert "Write the question in Japanese, as a Japanese-speaking employee" in japanese
    russian = prompts.adversarial(
        _window("Командировочные расходы возмещаются в течение десяти рабочих дней."),
        [_window("Отпуск оформляется через портал.")],
    )[1]["content"]
    assert "Write the question in Russian" in russian
    chinese = prompts.unanswerable([_window("国内出差的住宿费以每晚一万二千日元为上限。")])[1]
    assert "Write the question in Chinese" in chinese["content"]
    german = prompts.multi(
        _window("Die Reisekosten werden innerhalb von zehn Arbeitstagen erstattet."),
        _window("Der Urlaub wird über das Portal beantragt."),
        "Portal",
    )[1]["content"]
    assert "Write the question in the language of the passage" in german


def test_the_prompts_of_english_passages_are_unchanged():
    english = _window("Hotel costs are refunded up to 120 euros a night within the country.")
    text = prompts.fact(english)[1]["content"]
    assert "Write the question in" not in text
    assert "language" not in text  # the cached answers of English passages stay valid


# --- the filters ---------------------------------------------------------------------------------


def test_a_japanese_question_copying_twenty_characters_copies_the_passage():
    copied = "国内出張の宿泊費は一泊あたり一万二千円を上限として"[:20]
    assert len(copied) == 20 and copied in PASSAGE_JA
    run = longest_copied_run(f"{copied}いますか？", PASSAGE_JA)
    assert run == 20 / CJK_CHARS_PER_WORD == 8  # the default generate.copy_run_words
    paraphrase = "出張で泊まるホテル代はいくらまで出ますか？"
    assert longest_copied_run(paraphrase, PASSAGE_JA) < 3
    # Full-width letters are the passage's letters (NFKC), case folded.
    assert longest_copied_run("ＶＰＮ Client の設定", "the vpn client settings") == 2


def test_short_cjk_questions_are_questions():
    assert parse_draft("unanswerable", '{"question": "有給は何日？"}').question == "有給は何日？"
    with pytest.raises(ShapeError):
        parse_draft("unanswerable", '{"question": "有給？"}')
    with pytest.raises(ShapeError):
        parse_draft("unanswerable", '{"question": "Leave?"}')


def test_quotes_found_case_folded_keep_exact_offsets():
    # "İ" lowercases to two characters and "ß" casefolds to "ss": the offsets still map
    # back to the document's own characters.
    text = "İZMİR ŞUBESİ: Die Straße 5 ist montags geschlossen."
    found = match_span("die STRASSE 5 ist montags geschlossen", text)
    assert found is not None and not found.exact
    assert text[found.start : found.end] == "Die Straße 5 ist montags geschlossen"
    found = match_span(normalize("İZMİR ŞUBESİ"), text)
    assert found is not None and text[found.start : found.end] == "İZMİR ŞUBESİ"


# --- a run on Japanese documents -----------------------------------------------------------------

JAPANESE_DOCS = [
    Document(
        "ryohi.md",
        "# 旅費規程\n\n"
        "国内出張の宿泊費は一泊あたり一万二千円を上限として実費で精算します。"
        "東京都内と大阪市内は上限が一万五千円になります。"
        "日帰り出張の日当は支給しません。",
    ),
    Document(
        "kyuka.md",
        "# 休暇規程\n\n"
        "入社一年目の社員には十日間の年次有給休暇を付与します。"
        "有給休暇の申請は取得日の三日前までに上司へ提出してください。"
        "未使用の休暇は翌年度に限り繰り越すことができます。",
    ),
    Document(
        "it.md",
        "# 情報システム\n\n"
        "社外から社内システムに接続するときは必ず会社支給のパソコンを使用してください。"
        "パスワードは九十日ごとに変更する必要があります。"
        "紛失した場合は直ちに情報システム部へ連絡してください。",
    ),
]
_PASSAGE = re.compile(r"<passage[^>]*>\n(.*?)\n</passage>", re.DOTALL)


def _japanese_fact(copy: bool):
    """A fact-question responder writing Japanese: a question copying the first 20
    characters of the passage's first sentence, or one in its own words."""

    def answer(req) -> str:
        user = req.text("user")
        assert "Write the question in Japanese" in user
        sentence = _PASSAGE.findall(user)[0].split("。")[0] + "。"
        sentence = sentence.split("\n")[-1]
        if copy:
            question = f"{sentence[:20]}のですか？"
        else:  # four characters of the passage, the rest in other words
            question = f"{sentence[:4]}について、会社の決まりはどうなっていますか？"
        return json.dumps(
            {"fact": sentence, "question": question, "quote": sentence}, ensure_ascii=False
        )

    return answer


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return SentenceTransformerEmbedder(
        cache_dir=str(tmp_path_factory.mktemp("embeddings")), show_progress=False
    )


@pytest.mark.e2e
@pytest.mark.parametrize("copy", [True, False])
def test_a_japanese_run_rejects_copied_questions_and_keeps_paraphrases(tmp_path, embedder, copy):
    responders = GenerationResponders(realism=lambda q: 5, answerable=True, in_corpus=False)
    with responders.install(StandInLLM()) as server:
        server.responders["fact-question"] = _japanese_fact(copy)
        settings = GenerateConfig(
            n=3,
            kinds={"fact": 1.0},
            window_tokens=60,
            out="unused",
            show_progress=False,
            max_attempts=1,
            dedup_threshold=1.0,
        )
        config = LLMConfig(base_url=server.url, model="stand-in", backoff_s=0.01, max_retries=1)
        client = LLMClient(config, None, ResponseCache(tmp_path / "llm"), show_progress=False)
        result = generate(JAPANESE_DOCS, settings, client, embedder, dataset="ja")
    if copy:
        assert result.queries == () and result.report.rejected == {"copies_passage": 3}
    else:
        assert len(result.queries) == 3 and result.report.rejected == {}
        texts = {d.doc_id: d.text for d in JAPANESE_DOCS}
        for q in result.queries:
            (j,) = q.relevant
            assert texts[j.doc_id][j.start : j.end] == j.quote and j.quote.endswith("。")


def test_multi_hop_partners_share_japanese_and_russian_names():
    from sweep.generate import neighbours

    ja = neighbours.entity_terms(
        "海外出張の日当は「海外出張旅費規程」による。ＶＰＮはグローバルプロテクトを使う。"
    )
    assert {"海外出張旅費規程", "グローバルプロテクト", "海外出張"} <= ja
    assert not any(len(t) < 2 for t in ja)  # no particles or single characters
    ru = neighbours.entity_terms("Отпуск согласует Иван Петров. Заявку подают в ООО Кестрел.")
    assert {"Иван", "Петров", "ООО", "Кестрел"} <= ru
    assert "Отпуск" not in ru and "Заявку" not in ru  # sentence-initial words are not names


def test_dry_run_vectors_make_japanese_passages_on_one_subject_similar():
    import numpy as np

    from sweep.generate import neighbours

    v = neighbours.normalize_rows(
        neighbours.word_vectors(
            [
                "年次有給休暇は入社6か月後に10日付与する。",
                "有給休暇の取得は前日までに申請する。",
                "ノートPCを紛失したときは情報システム部に連絡する。",
            ]
        )
    )
    sims = v @ v[0]
    assert sims[1] > sims[2] and sims[1] > 0
    assert np.isfinite(sims).all()
