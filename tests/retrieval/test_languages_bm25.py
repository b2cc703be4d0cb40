"""BM25 over Japanese and Russian text read by its analyzer, checked against bm25s used
directly on the same analyzer's terms (an independent BM25), and the unmatched share."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from sweep.core.text.analyzers import Analyzer
from sweep.core.types import Chunk
from sweep.retrieval.fusion import HybridRetriever
from sweep.retrieval.lexical import BM25Retriever

pytest.importorskip("sudachipy")
pytest.importorskip("fugashi")

# Company rules, one short paragraph each, as an intranet handbook writes them.
JA_CORPUS = [
    "出張旅費は、出張から戻った日の翌日から起算して十四日以内に経費精算システムで申請してください。",
    "国内出張の日当は一日あたり二千円とし、宿泊を伴う場合は三千円を支給します。",
    "宿泊費の上限は東京二十三区内で一泊一万二千円、その他の地域で一泊一万円です。",
    "新幹線のグリーン車は部長職以上に限り利用できます。それ以外の社員は普通車指定席を利用してください。",
    "航空券は原則としてエコノミークラスを利用し、会社指定の旅行代理店を通じて手配します。",
    "タクシーの利用は、深夜の帰宅や公共交通機関がない場合など、やむを得ない場合に限ります。",
    "年次有給休暇は入社六か月後に十日付与され、その後は勤続年数に応じて最大二十日まで増えます。",
    "有給休暇を取得する場合は、原則として三営業日前までに勤怠システムから上長に申請してください。",
    "夏季休暇は七月から九月の間に連続三日まで取得でき、年次有給休暇とは別に扱います。",
    "慶弔休暇は、本人の結婚で五日、配偶者の出産で二日、親族の葬儀で最大五日取得できます。",
    "育児休業は子が一歳に達するまで取得でき、保育所に入れない場合は最長二歳まで延長できます。",
    "病気やけがで連続して四日以上休む場合は、医師の診断書を人事部に提出してください。",
    "物品の購入は、十万円未満であれば所属長の承認のみで発注できます。",
    "十万円以上の物品を購入する場合は、見積書を二社以上から取り、購買部の審査を受けてください。",
    "ソフトウェアのライセンスを購入する際は、事前に情報システム部へ利用目的を届け出てください。",
    "請求書は受領後五営業日以内に経理部へ回付し、支払いは翌月末に行います。",
    "会社の備品を社外へ持ち出す場合は、持ち出し申請書に記入し、総務部の許可を得てください。",
    "パスワードは十二文字以上とし、英大文字・英小文字・数字・記号をそれぞれ一文字以上含めてください。",
    "パスワードは九十日ごとに変更し、過去五回分と同じものは使用できません。",
    "業務用パソコンにソフトウェアをインストールする場合は、情報システム部の許可が必要です。",
    "社外から社内ネットワークに接続する際は、必ずＶＰＮを使用してください。",
    "ノートパソコンを紛失した場合は、直ちに情報システム部と上長に報告してください。",
    "私物のＵＳＢメモリを業務用パソコンに接続することは禁止されています。",
    "不審なメールを受け取った場合は、添付ファイルを開かずに情報セキュリティ窓口へ転送してください。",
    "在宅勤務は週二日まで認められ、前日までに勤怠システムで申請する必要があります。",
    "在宅勤務中も始業と終業の時刻をチャットで上長に連絡してください。",
    "フレックスタイム制のコアタイムは午前十時から午後三時までです。",
    "時間外労働を行う場合は、事前に上長の承認を得てから勤怠システムに入力してください。",
    "健康診断は年に一回、全社員が受診しなければなりません。費用は会社が負担します。",
    "社内研修の受講費用は会社が負担しますが、業務時間外の自己啓発は対象外です。",
    "Ubuntu の開発サーバーでは、パッケージを apt-get でインストールする前に管理者に相談してください。",
]
# (question, the paragraph that answers it)
JA_QUESTIONS = [
    ("出張旅費の精算はいつまでに申請すればいいですか", 0),
    ("ホテル代の上限はいくらですか", 2),
    ("グリーン車に乗れるのは誰ですか", 3),
    ("有給休暇は何日もらえますか", 6),
    ("結婚したときの休暇は何日ですか", 9),
    ("診断書が必要になるのはどんなときですか", 11),
    ("十万円以上の購入にはどんな手続きが必要ですか", 13),
    ("パスワードは何文字以上必要ですか", 17),
    ("パソコンをなくしたらどうすればいいですか", 21),
    ("在宅勤務は週に何日までできますか", 24),
    ("コアタイムは何時から何時までですか", 26),
    ("ａｐｔ－ｇｅｔでパッケージを入れてもいいですか", 30),
]

RU_CORPUS = [
    "Командировочные расходы необходимо отчитать в течение десяти рабочих дней после возвращения.",
    "Суточные при командировках по России составляют семьсот рублей в день.",
    "Стоимость проживания в гостинице возмещается в пределах пяти тысяч рублей за сутки.",
    "Ежегодный оплачиваемый отпуск составляет двадцать восемь календарных дней.",
    "Заявление на отпуск подаётся руководителю не позднее чем за две недели.",
    "При болезни сотрудник обязан сообщить руководителю в первый же день и предоставить больничный лист.",
    "Закупки стоимостью более ста тысяч рублей согласуются с финансовым отделом.",
    "Пароль должен содержать не менее двенадцати символов и меняться каждые девяносто дней.",
    "Подключение к корпоративной сети из дома допускается только через VPN.",
    "Об утере ноутбука нужно немедленно сообщить в службу информационной безопасности.",
    "Удалённая работа разрешена не более двух дней в неделю по согласованию с руководителем.",
    "Сверхурочная работа оплачивается в двойном размере при наличии письменного распоряжения.",
]
RU_QUESTIONS = [
    ("Сколько дней длится отпуск?", 3),
    ("За сколько времени подавать заявление на отпуск", 4),
    ("Какие суточные в командировке?", 1),
    ("Что делать, если я заболел?", 5),
    ("Кто согласует крупные закупки?", 6),
    ("Как часто менять пароль", 7),
    ("Я потерял ноутбук, куда сообщить?", 9),
    ("Сколько дней можно работать удалённо?", 10),
]


def chunks_of(texts):
    return [Chunk("d", i, 0, len(t), t, max(1, len(t))) for i, t in enumerate(texts)]


def recall_at(ranking_ids, answers, k):
    return float(np.mean([a in row[:k] for row, a in zip(ranking_ids, answers)]))


def bm25s_reference(corpus, queries, analyzer, k):
    """bm25s used directly: its own index over the analyzer's terms, its own retrieve."""
    import bm25s

    prior = "ja" if any("\u3040" <= ch <= "\u30ff" for ch in "".join(corpus)) else "ru"
    docs = [analyzer(t, prior) for t in corpus]
    vocab = {t for d in docs for t in d}
    model = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    model.index(docs, show_progress=False)
    rows = []
    for q in queries:
        terms = [t for t in dict.fromkeys(analyzer(q, prior)) if t in vocab]
        scores = model.get_scores(terms) if terms else np.zeros(len(corpus))
        rows.append(np.lexsort((np.arange(len(corpus)), -scores))[:k])
    return rows


@pytest.mark.parametrize("name", ["auto", "sudachi", "mecab", "bigram"])
def test_japanese_bm25_ranks_as_bm25s_does_on_the_same_terms(name):
    retriever = BM25Retriever(analyzer=name)
    retriever.index(chunks_of(JA_CORPUS))
    queries = [q for q, _ in JA_QUESTIONS]
    ours = retriever.retrieve(queries, None, 5).ids
    reference = bm25s_reference(JA_CORPUS, queries, Analyzer(name), 5)
    for mine, theirs in zip(ours, reference):
        assert mine.tolist() == theirs.tolist()


def test_japanese_analyzers_find_what_english_rules_miss():
    queries = [q for q, _ in JA_QUESTIONS]
    answers = [a for _, a in JA_QUESTIONS]
    recall = {}
    for name in ("english", "auto"):
        retriever = BM25Retriever(analyzer=name)
        retriever.index(chunks_of(JA_CORPUS))
        recall[name] = recall_at(retriever.retrieve(queries, None, 5).ids, answers, 5)
        if name == "auto":
            assert retriever.analyzer_ran == "sudachi"
    assert recall["auto"] >= 0.9
    assert recall["auto"] >= recall["english"] + 0.3


def test_full_width_latin_in_a_question_finds_the_same_chunk():
    retriever = BM25Retriever()
    retriever.index(chunks_of(JA_CORPUS))
    wide, narrow = retriever.scores(["ａｐｔ－ｇｅｔ の使い方", "apt-get の使い方"])
    assert np.array_equal(wide, narrow)
    assert int(np.argmax(wide)) == 30


def test_russian_bm25_stems_and_matches_bm25s():
    retriever = BM25Retriever()
    retriever.index(chunks_of(RU_CORPUS))
    assert retriever.analyzer_ran == "russian"
    queries = [q for q, _ in RU_QUESTIONS]
    ours = retriever.retrieve(queries, None, 3).ids
    assert recall_at(ours, [a for _, a in RU_QUESTIONS], 3) >= 0.85
    reference = bm25s_reference(RU_CORPUS, queries, Analyzer("auto"), 3)
    assert [r.tolist() for r in ours] == [r.tolist() for r in reference]


def test_questions_without_a_corpus_term_are_counted_and_warned_about_once(caplog):
    retriever = BM25Retriever(analyzer="english")
    retriever.index(chunks_of(JA_CORPUS))
    assert retriever.unmatched_share is None
    queries = [q for q, _ in JA_QUESTIONS]
    with caplog.at_level(logging.WARNING, logger="sweep.retrieval.lexical"):
        retriever.scores(queries)
        retriever.scores(queries[:3])
    share = retriever.unmatched_share
    assert share is not None and share >= 0.5
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1
    assert f"of {len(queries)} questions" in warnings[0]
    assert "retrieve.analyzer=auto" in warnings[0]
    assert retriever.row_facts()["bm25_analyzer"] == "english"

    read = BM25Retriever()
    read.index(chunks_of(JA_CORPUS))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sweep.retrieval.lexical"):
        read.scores(queries)
    assert read.unmatched_share == 0.0 and not caplog.records


def test_hybrid_passes_the_analyzer_to_its_bm25_side():
    hybrid = HybridRetriever(analyzer="bigram")
    assert hybrid.lexical.tokenize.analyzer.name == "bigram"
    hybrid.lexical.index(chunks_of(JA_CORPUS))
    assert hybrid.row_facts()["bm25_analyzer"] == "bigram"


def test_a_missing_japanese_package_falls_back_to_bigrams_and_says_so(monkeypatch, caplog):
    from sweep.core.text import analyzers

    monkeypatch.setattr(analyzers, "_TOOLS", {})
    monkeypatch.setattr(analyzers, "_TERMS_MEMO", {})
    monkeypatch.setitem(__import__("sys").modules, "sudachipy", None)
    monkeypatch.setitem(__import__("sys").modules, "fugashi", None)
    retriever = BM25Retriever()
    with caplog.at_level(logging.WARNING, logger="sweep.core.text.analyzers"):
        retriever.index(chunks_of(JA_CORPUS))
        retriever.index(chunks_of(JA_CORPUS[:10]))
    assert retriever.analyzer_ran == "bigram (sudachipy missing)"
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and 'pip install "chunk-sweep[languages]"' in said[0]
    ids = retriever.retrieve(["有給休暇は何日もらえますか"], None, 3).ids
    assert 6 in ids[0].tolist()
