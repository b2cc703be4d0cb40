"""Build queries.jsonl from the hand-written drafts by resolving each quote to offsets.

The drafts name evidence by quote only (easy to write and review by hand);
the evaluation set needs exact character offsets, and a quote that is missing
or ambiguous in its document is an error here rather than a silent wrong span.

    python tools/build_kestrel_queries.py          # writes corpora/kestrel/queries.jsonl
    python tools/build_kestrel_queries.py --check  # only checks the drafts

(A development script: it lives outside the package, so the wheel ships the corpus it
built, not the script.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

#: The corpus folder the script builds (the bundled kestrel corpus inside the package).
HERE = Path(__file__).resolve().parent.parent / "src" / "sweep" / "corpora" / "kestrel"


def _occurrences(text: str, quote: str) -> list[int]:
    found, at = [], text.find(quote)
    while at != -1:
        found.append(at)
        at = text.find(quote, at + 1)
    return found


def build_queries(docs_dir: Path, drafts: list[Path]) -> tuple[list[dict], list[str]]:
    texts = {
        # Bytes, not read_text(): offsets must match the file exactly, \r\n included.
        p.relative_to(docs_dir).as_posix(): p.read_bytes().decode("utf-8")
        for p in sorted(docs_dir.rglob("*"))
        if p.suffix in {".md", ".txt"}
    }
    queries, problems, seen = [], [], set()
    for draft in drafts:
        for lineno, line in enumerate(draft.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{draft.name}:{lineno}"
            try:
                q = json.loads(line)
            except json.JSONDecodeError as e:
                problems.append(f"{where}: bad JSON: {e.msg}")
                continue
            qid = q.get("query_id")
            if qid in seen:
                problems.append(f"{where}: duplicate query_id {qid!r}")
            seen.add(qid)
            relevant = []
            for j in q.get("relevant", []):
                doc_id = j.get("doc_id")
                if doc_id not in texts:
                    problems.append(f"{where}: unknown doc_id {doc_id!r}")
                    continue
                out = {"doc_id": doc_id, "grade": int(j.get("grade", 1))}
                quote = j.get("quote")
                if quote is not None:
                    hits = _occurrences(texts[doc_id], quote)
                    nth = int(j.get("occurrence", 1))
                    if not hits:
                        problems.append(f"{where}: quote not found in {doc_id}: {quote[:60]!r}")
                        continue
                    if len(hits) > 1 and "occurrence" not in j:
                        problems.append(
                            f"{where}: quote occurs {len(hits)} times in {doc_id}; "
                            f'lengthen it or add "occurrence": {quote[:60]!r}'
                        )
                        continue
                    if nth > len(hits):
                        problems.append(f"{where}: occurrence {nth} > {len(hits)} in {doc_id}")
                        continue
                    start = hits[nth - 1]
                    out.update(start=start, end=start + len(quote), quote=quote)
                relevant.append(out)
            rec = {
                "query_id": qid,
                "query": q["query"],
                "type": q.get("type"),
                "relevant": relevant,
            }
            if q.get("note"):
                rec["note"] = q["note"]
            queries.append(rec)
    return queries, problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="check the drafts, write nothing")
    ap.add_argument("drafts", nargs="*", type=Path, help="draft files (default: drafts/*.jsonl)")
    args = ap.parse_args(argv)
    drafts = args.drafts or sorted((HERE / "drafts").glob("*.jsonl"))
    queries, problems = build_queries(HERE / "docs", drafts)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    if not args.check:
        with open(HERE / "queries.jsonl", "w", encoding="utf-8") as f:
            for q in queries:
                f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{len(queries)} queries OK" + ("" if args.check else f" -> {HERE / 'queries.jsonl'}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
