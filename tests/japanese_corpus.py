"""A small Japanese dataset in sweep's folder format (``docs/`` and ``queries.jsonl``), written
for the language tests: company rules, questions whose evidence is a quote."""

from __future__ import annotations

import json
from pathlib import Path

DOCUMENTS = {
    "travel.md": (
        "# 出張旅費規程\n\n"
        "出張する社員は、出発の五営業日前までに出張申請書を上長に提出しなければならない。"
        "国内出張の日当は一日あたり二千円とし、宿泊を伴う場合は一泊一万二千円を上限として"
        "実費を支給する。新幹線の利用は片道百キロメートルを超える場合に限り認める。"
        "領収書は帰着後十日以内に経理部へ提出すること。\n"
    ),
    "leave.md": (
        "# 休暇規程\n\n"
        "年次有給休暇は、入社六か月後に十日付与される。以後、勤続年数に応じて加算し、"
        "最大二十日とする。休暇を取得する場合は、原則として三日前までに勤怠システムで"
        "申請すること。病気による急な欠勤は、当日の始業時刻までに上長へ電話で連絡する。"
        "慶弔休暇は本人の結婚で五日、配偶者の出産で二日を与える。\n"
    ),
    "purchasing.md": (
        "# 購買規程\n\n"
        "五万円未満の物品は部門長の承認で購入できる。五万円以上の物品は、二社以上から"
        "見積書を取り、購買部の審査を経て発注する。ソフトウェアのライセンスは情報システム部が"
        "一括して管理し、個人での契約は禁止する。納品後は検収書を三営業日以内に作成する。\n"
    ),
    "it.md": (
        "# 情報セキュリティ規程\n\n"
        "パスワードは十二文字以上とし、英大文字、英小文字、数字、記号をそれぞれ一文字以上"
        "含めること。パスワードは九十日ごとに変更する。社外へのデータ持ち出しには暗号化した"
        "USBメモリを使い、紛失した場合は直ちに情報システム部へ報告する。私物のパソコンを"
        "社内ネットワークに接続してはならない。\n"
    ),
}

QUERIES = [
    ("q1", "国内出張の日当はいくらですか？", "travel.md", "国内出張の日当は一日あたり二千円とし"),
    (
        "q2",
        "有給休暇は入社後いつ付与されますか？",
        "leave.md",
        "年次有給休暇は、入社六か月後に十日付与される。",
    ),
    (
        "q3",
        "十万円のパソコンを買うにはどうすればいいですか？",
        "purchasing.md",
        "五万円以上の物品は、二社以上から見積書を取り",
    ),
    ("q4", "パスワードは何文字以上必要ですか？", "it.md", "パスワードは十二文字以上とし"),
    (
        "q5",
        "USBメモリをなくしたらどうすればいいですか？",
        "it.md",
        "紛失した場合は直ちに情報システム部へ報告する。",
    ),
    (
        "q6",
        "領収書はいつまでに提出しますか？",
        "travel.md",
        "領収書は帰着後十日以内に経理部へ提出すること。",
    ),
]


def write_japanese_dataset(root: Path) -> Path:
    """The dataset's folder under ``root``."""
    folder = root / "rules-ja"
    (folder / "docs").mkdir(parents=True)
    for name, text in DOCUMENTS.items():
        (folder / "docs" / name).write_text(text, encoding="utf-8")
    lines = []
    for qid, query, doc, quote in QUERIES:
        start = DOCUMENTS[doc].index(quote)
        relevant = [
            {"doc_id": doc, "start": start, "end": start + len(quote), "quote": quote, "grade": 2}
        ]
        lines.append(
            json.dumps({"query_id": qid, "query": query, "relevant": relevant}, ensure_ascii=False)
        )
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
