"""Doc-level scores agree with trec_eval (through pytrec_eval) on random runs.

trec_eval counts every occurrence of a relevant document; SPEC §2 credits a
document once, at its first chunk, and treats later chunks as non-relevant
without compressing ranks. Replacing each later occurrence with a unique
filler id reproduces that convention for the reference.
"""

from __future__ import annotations

import random

import pytest

from sweep.core.measures import Measure
from sweep.core.types import Hit, Judgment, Query
from sweep.scoring.credit import score_queries

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 3, 5, 10)
N_QUERIES = 400


def random_case(rng: random.Random) -> tuple[list[Query], dict[str, list[Hit]]]:
    queries, runs = [], {}
    for i in range(N_QUERIES):
        pool = [f"d{j}" for j in range(rng.randint(3, 25))]
        judged = rng.sample(pool, rng.randint(0, min(6, len(pool))))
        # Grade 0 judgments included: judged non-relevant, ignored by both sides.
        queries.append(
            Query(
                f"q{i}", "", tuple(Judgment(d, grade=rng.choice((0, 1, 1, 2, 3))) for d in judged)
            )
        )
        # Chunk-level rankings repeat documents, as a chunk retriever does.
        runs[f"q{i}"] = [Hit(rng.choice(pool)) for _ in range(rng.randint(0, 20))]
    return queries, runs


def reference_run(hits: list[Hit], qid: str) -> dict[str, float]:
    """The ranking with each document's later chunks renamed to unique non-relevant ids."""
    seen: set[str] = set()
    out: dict[str, float] = {}
    for rank, hit in enumerate(hits):
        doc = hit.doc_id if hit.doc_id not in seen else f"filler-{qid}-{rank}"
        seen.add(hit.doc_id)
        out[doc] = float(len(hits) - rank)  # strictly decreasing: trec_eval sorts by score
    return out


def evaluate(queries, runs, *, exponential: bool) -> dict[str, dict[str, float]]:
    def gain(g: int) -> int:
        # trec_eval's ndcg uses the judgment value as the gain, so 2^g - 1 judgments
        # give the exponential gain; relevance (> 0) is unchanged.
        return 2**g - 1 if exponential else g

    qrels = {
        q.query_id: {j.doc_id: gain(j.grade) for j in q.relevant} for q in queries if q.relevant
    }
    run = {
        q.query_id: reference_run(runs[q.query_id], q.query_id)
        for q in queries
        if q.query_id in qrels
    }
    # trec_eval skips a query with an empty ranking; SPEC scores it 0.
    run = {qid: r for qid, r in run.items() if r}
    cut = ",".join(map(str, KS))
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels,
        {
            f"recall.{cut}",
            f"P.{cut}",
            f"ndcg_cut.{cut}",
            f"map_cut.{cut}",
            "recip_rank",
            f"success.{cut}",
        },
    )
    return evaluator.evaluate(run)


@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_doc_level_matches_trec_eval(gain: str) -> None:
    rng = random.Random(20240611 + (gain == "exponential"))
    queries, runs = random_case(rng)
    measures = [
        Measure(n, k=k)
        for n in ("recall", "precision", "ndcg", "ap", "mrr", "hit", "complete")
        for k in KS
    ]
    table = score_queries(queries, runs, measures, gain=gain)
    ours = {(q, m): v for q, level, m, v in table.rows() if level == "doc"}
    ref = evaluate(queries, runs, exponential=gain == "exponential")

    included = {q.query_id for q in queries if any(j.grade > 0 for j in q.relevant)}
    assert {q for q, _ in ours} == included  # no relevant document: excluded, not scored 0
    compared = 0
    for qid in included:
        r = ref.get(qid)
        for k in KS:
            if r is None:  # empty ranking
                for name in ("recall", "precision", "ndcg", "ap", "mrr", "hit", "complete"):
                    assert ours[(qid, f"{name}@{k}")] == 0.0
                continue
            rr = r["recip_rank"]
            expected = {
                "recall": r[f"recall_{k}"],
                "precision": r[f"P_{k}"],
                "ndcg": r[f"ndcg_cut_{k}"],
                "ap": r[f"map_cut_{k}"],
                "hit": r[f"success_{k}"],
                "mrr": rr if rr > 0 and round(1 / rr) <= k else 0.0,
                "complete": float(r[f"recall_{k}"] == 1.0),
            }
            for name, value in expected.items():
                assert ours[(qid, f"{name}@{k}")] == pytest.approx(value, abs=1e-9), (qid, name, k)
                compared += 1
    assert compared > 0.8 * len(included) * len(KS) * 7
