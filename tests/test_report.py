import csv
import json
import re

from sweep.report import flatten, headline_table, main, to_markdown, varied_settings, write_report


def _row(job, size, overlap, recall, status="ok", error=None):
    levels = {lvl: {"n_queries": 10, "n_excluded": 2,
                    "metrics": {"recall@5": {"mean": recall, "ci_low": recall - 0.1, "ci_high": recall + 0.1},
                                "ndcg@5": {"mean": recall / 2, "ci_low": 0.0, "ci_high": 1.0}}}
              for lvl in ("doc", "span")} if status == "ok" else {}
    return {"job": job, "status": status, "error": error, "overrides": [f"chunk.size={size}"],
            "settings": {"chunk.strategy": "token", "chunk.size": size, "chunk.overlap": overlap,
                         "chunk.prefix": "none", "embed.model": "m", "index._target_": "sweep.index.FlatIPIndex"},
            "notes": [], "eval": {"table_k": [5]},
            "stats": {"n_chunks": 100 // size, "mean_chunk_tokens": float(size), "truncated_share": 0.25,
                      "embed_s": 1.0, "total_s": 2.0} if status == "ok" else {"total_s": 0.1},
            "levels": levels}


def _write(tmp_path, rows):
    for r in rows:
        d = tmp_path / str(r["job"])
        d.mkdir()
        (d / "row.json").write_text(json.dumps(r))
        if r["status"] == "ok":
            (d / "per_query.csv").write_text("query_id,level,metric,value\nq1,doc,recall@5,1.0\n")


def test_flatten_has_mean_and_interval_columns():
    flat = flatten(_row(0, 128, 0, 0.5))
    assert flat["span.recall@5"] == 0.5 and flat["span.recall@5.lo"] == 0.4
    assert flat["doc.n_excluded"] == 2 and flat["chunk.size"] == 128


def test_headline_table_marks_invalid_rows_and_shows_varied_settings():
    rows = [_row(0, 128, 0, 0.5), _row(1, 128, 128, None, "invalid", "ValueError: overlap >= size")]
    assert varied_settings(rows) == ["chunk.size", "chunk.overlap"]
    header, cells = headline_table(rows)
    assert header[:2] == ["size", "overlap"] and "span recall@5" in header
    assert cells[0][header.index("span recall@5")] == "0.500 [0.40, 0.60]"
    assert cells[1][-1].startswith("invalid: ValueError")
    assert cells[0][header.index("trunc %")] == "25.0"
    md = to_markdown(header, cells)
    assert md.count("\n") == 3


def test_write_report_and_cli_rebuild_from_saved_rows(tmp_path, capsys):
    _write(tmp_path, [_row(0, 128, 0, 0.5), _row(1, 256, 0, 0.7), _row(2, 512, 0, None, "failed", "boom")])
    write_report(tmp_path, quiet=True)
    with open(tmp_path / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == ["ok", "ok", "failed"]
    lines = (tmp_path / "per_query.csv").read_text().splitlines()
    assert lines == ["job,query_id,level,metric,value", "0,q1,doc,recall@5,1.0", "1,q1,doc,recall@5,1.0"]
    (tmp_path / "results.csv").unlink()
    assert main([str(tmp_path)]) == 0
    assert (tmp_path / "results.csv").exists()
    assert "0.700 [0.60, 0.80]" in capsys.readouterr().out


def test_cli_on_missing_dir_is_one_line_error(tmp_path, capsys):
    assert main([str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a directory" in err[0]


# ---------------------------------------------------------------- issue 6: deciding from the table

import numpy as np
import pytest

from sweep.report import Primary, ReportError, build_report, decide, load_rows

TYPES = ("fact", "multi", "adversarial")


def _job(sweep, job, size, overlap, recall, *, status="ok", error=None, primary="span/recall@5",
         budgets=(256, 512, 1024), dataset="synthetic", types=TYPES):
    """A finished job as the sweep saves it: row.json, per_query.csv, hits.jsonl (no model)."""
    d = sweep / str(job)
    d.mkdir(parents=True)
    row = {"job": job, "status": status, "error": error, "dataset": dataset,
           "overrides": [f"chunk.size={size}", f"chunk.overlap={overlap}"],
           "settings": {"chunk.strategy": "token", "chunk.size": size, "chunk.overlap": overlap,
                        "chunk.prefix": "none", "embed.model": "m", "index._target_": "sweep.index.FlatIPIndex"},
           "eval": {"k": [1, 3, 5, 10], "budgets": list(budgets), "table_k": [5], "primary": primary,
                    "n_boot": 100, "seed": 0},
           "notes": [], "stats": {"total_s": 0.1}, "levels": {}}
    if status == "ok":
        recall = np.asarray(recall, dtype=float)
        ranks = np.where(recall > 0, 1 + np.arange(recall.size) % 4, 0)
        per_metric = {"recall@5": recall, "ndcg@5": recall * 0.8,
                      "mrr@10": np.where(ranks > 0, 1.0 / np.maximum(ranks, 1), 0.0)}
        for b in budgets:
            per_metric[f"recall@{b}t"] = recall * min(1.0, b / (4 * size))
        lines, levels = ["query_id,level,metric,value"], {}
        for level in ("doc", "span"):
            metrics = {}
            for m, v in per_metric.items():
                lines += [f"q{i},{level},{m},{float(x)!r}" for i, x in enumerate(v)]
                metrics[m] = {"mean": float(v.mean()), "ci_low": max(float(v.mean()) - 0.1, 0.0),
                              "ci_high": min(float(v.mean()) + 0.1, 1.0)}
            levels[level] = {"n_queries": int(recall.size), "n_excluded": 0, "metrics": metrics}
        lines.append("q_unanswerable,span,precision_omega,nan")  # excluded: must be skipped
        (d / "per_query.csv").write_text("\n".join(lines) + "\n")
        row["levels"] = {"levels": levels, "bootstrap": {"n_boot": 100, "confidence": 0.95, "seed": 0}}
        row["stats"] = {"n_chunks": 10_000 // size + overlap, "mean_chunk_tokens": float(size),
                        "truncated_share": 0.0, "tokens@5": 5.0 * size, "tokens@1": float(size),
                        "embed_s": 1.0, "total_s": 2.0}
        with open(d / "hits.jsonl", "w", encoding="utf-8") as f:
            for i in range(recall.size):
                hits = [{"rank": r, "chunk_id": f"doc{i + r}.md#0", "doc_id": f"doc{i + r}.md",
                         "start": 0, "end": 60, "n_tokens": size} for r in range(1, 11)]
                for h in hits[:3]:
                    h["text"] = f"chunk text {i}-{h['rank']} <about> travel"
                f.write(json.dumps({"query_id": f"q{i}", "query": f"Question number {i} & <more>?",
                                    "type": types[i % len(types)] if types else None,
                                    "gold": [{"doc_id": f"doc{i}.md", "grade": 1, "start": 5, "end": 25,
                                              "text": f"gold evidence {i}"}],
                                    "hits": hits}) + "\n")
    (d / "row.json").write_text(json.dumps(row))


def _grid(sweep, scores, **kw):
    """scores[(size, overlap)] = per-query recall array; jobs numbered in insertion order."""
    for job, ((size, overlap), v) in enumerate(scores.items()):
        _job(sweep, job, size, overlap, v, **kw)


def _base(n=60, seed=0):
    return (np.random.default_rng(seed).random(n) < 0.6).astype(float)


GRID = [(s, o) for s in (64, 128, 256) for o in (0, 16)]


def _csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_identical_settings_are_never_worse_through_the_report(tmp_path):
    _grid(tmp_path, {so: _base() for so in GRID})
    write_report(tmp_path, quiet=True)
    rows = _csv(tmp_path / "results.csv")
    assert sorted(r["vs_best"] for r in rows) == ["best"] + ["tie"] * 5
    assert all(r["p_holm"] == "" or float(r["p_holm"]) == 1.0 for r in rows)
    md = (tmp_path / "results.md").read_text()
    assert "worse" not in md and md.count("≈ best (p=1.00)") == 5
    # Rows hold Summary.to_dict(): levels nested under "levels", bootstrap settings beside them.
    assert float(rows[0]["span.recall@5"]) == _base().mean() and rows[0]["doc.n_queries"] == "60"
    assert "(95%, 100 resamples, seed 0)" in md


def test_a_strongly_better_setting_makes_every_other_worse(tmp_path):
    scores = {so: _base() for so in GRID}
    scores[(128, 16)] = np.ones(60)
    _grid(tmp_path, scores)
    write_report(tmp_path, quiet=True)
    rows = _csv(tmp_path / "results.csv")
    verdicts = {(r["chunk.size"], r["chunk.overlap"]): r["vs_best"] for r in rows}
    assert verdicts.pop(("128", "16")) == "best"
    assert set(verdicts.values()) == {"worse"}
    assert all(float(r["p_holm"]) < 0.001 for r in rows if r["vs_best"] == "worse")
    header, *lines = [l for l in (tmp_path / "results.md").read_text().splitlines() if l.startswith("| ")]
    col = [c.strip() for c in header.split("|")].index("vs best")
    cells = [[c.strip() for c in l.split("|")][col] for l in lines]
    assert sorted(cells) == ["best"] + ["worse (p<0.001)"] * 5
    text = (tmp_path / "results.md").read_text()
    assert ("Recommendation: size=128 overlap=16 has the best span recall@5 (1.000) and every "
            "other setting is significantly worse.") in text


def test_recommendation_is_the_cheapest_setting_as_good_as_the_best(tmp_path):
    base = _base()
    scores = {so: base.copy() for so in GRID}
    better = base.copy()
    better[np.flatnonzero(base == 0)[:2]] = 1  # two queries more: not a real difference
    scores[(256, 0)] = better
    _grid(tmp_path, scores)
    text = write_report(tmp_path, quiet=True)
    # Best is size=256 (1280 tokens at k=5); size=64 reads 320 tokens and is as good;
    # of the two size=64 rows, overlap=0 has fewer chunks.
    assert ("Recommendation: size=64 overlap=0 is not distinguishable from the best, "
            "size=256 overlap=0, on span recall@5") in text
    assert "retrieves 320 tokens per query instead of 1280" in text
    rep = build_report(tmp_path)
    assert rep.decision.recommendation.job == 0 and rep.decision.comparisons[4].verdict == "best"


def test_with_a_budget_primary_the_smaller_index_wins_among_ties(tmp_path):
    _grid(tmp_path, {so: _base() for so in GRID}, primary="span/recall@512t")
    rep = build_report(tmp_path)
    assert rep.decision.primary == Primary("span", Primary.parse("recall@512t").measure)
    # At 512 tokens size=256 gets half the recall of the smaller sizes (see _job): worse.
    verdicts = {rep.labels[j]: c.verdict for j, c in rep.decision.comparisons.items()}
    assert verdicts["size=256 overlap=0"] == verdicts["size=256 overlap=16"] == "worse"
    # The rest tie and all fill the same budget: the smallest index wins (size=128 overlap=0, 78 chunks).
    assert rep.decision.recommended_label == "size=128 overlap=0"
    assert "at the same 512 tokens per query needs 78 chunks in the index instead of 156" in rep.text


def test_quiet_writes_tables_but_no_pictures(tmp_path):
    _grid(tmp_path, {so: _base() for so in GRID})
    write_report(tmp_path, quiet=True)
    assert (tmp_path / "results.md").exists() and (tmp_path / "worst_queries.md").exists()
    assert (tmp_path / "by_type.md").exists()
    assert not (tmp_path / "report.html").exists() and not (tmp_path / "plots").exists()


def test_report_builds_from_saved_rows_alone(tmp_path, capsys):
    scores = {so: _base() for so in GRID}
    scores[(128, 16)] = np.ones(60)
    _grid(tmp_path, scores)
    _job(tmp_path, 6, 64, 64, None, status="invalid", error="ValueError: overlap 64 >= size 64")
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Recommendation: size=128 overlap=16" in out and "report.html" in out
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<table>" in html and "Recommendation: size=128 overlap=16" in html
    assert html.count('<img alt="') >= 3 and 'src="data:image/png;base64,iVBOR' in html
    assert not re.search(r'(src|href)="(?!data:)', html)  # nothing outside the file
    assert "invalid: ValueError: overlap 64 &gt;= size 64" in html
    assert "Question number 0 &amp; &lt;more&gt;?" in html and "gold evidence" in html
    assert "by query type" in html and "adversarial (n=20)" in html
    plots = {p.name for p in (tmp_path / "plots").iterdir()}
    assert {"heatmap_span_recall_5.png", "budget_span_recall.png",
            "first_relevant_rank_span.png"} <= plots
    assert (tmp_path / "plots" / "heatmap_span_recall_5.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The invalid row is in the table with its reason, but not tested and not recommended.
    rows = _csv(tmp_path / "results.csv")
    assert rows[-1]["status"] == "invalid" and rows[-1]["vs_best"] == ""
    assert 6 not in build_report(tmp_path).decision.comparisons


def test_worst_queries_are_sorted_worst_first_with_their_text(tmp_path):
    base = _base()
    _grid(tmp_path, {(64, 0): base, (128, 0): base})
    write_report(tmp_path, quiet=True)
    md = (tmp_path / "worst_queries.md").read_text()
    table = [l for l in md.splitlines() if re.match(r"\| \d+ \|", l)]
    values = [float(l.split("|")[4]) for l in table]
    assert values == sorted(values) and len(values) == 60
    first = md[md.index("## 1."):]
    assert "**Query:** Question number" in first and "gold evidence" in first
    assert "chunk text" in first and "&lt;about> travel" in first


def test_one_setting_still_gets_a_report_without_heatmaps(tmp_path):
    _job(tmp_path, 0, 128, 0, _base())
    assert write_report(tmp_path, quiet=False)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<table>" in html and "One setting ran" in html
    assert not list((tmp_path / "plots").glob("heatmap_*"))
    assert (tmp_path / "plots" / "budget_span_recall.png").exists()


def test_primary_metric_that_was_not_scored_is_a_note_not_a_crash(tmp_path):
    _grid(tmp_path, {so: _base() for so in GRID[:2]}, primary="span/recall@20", budgets=())
    text = write_report(tmp_path, quiet=False)
    assert "Significance needs per-query span recall@20" in text
    assert (tmp_path / "report.html").exists()


def test_bad_primary_is_reported_in_the_notes(tmp_path):
    _grid(tmp_path, {so: _base() for so in GRID[:2]}, primary="span/recal@5")
    text = write_report(tmp_path, quiet=True)
    assert "No significance test: eval.primary 'span/recal@5': unknown measure" in text


@pytest.mark.parametrize("text,level,metric", [("span/recall@5", "span", "recall@5"),
                                                ("doc.ndcg@10", "doc", "ndcg@10"),
                                                ("recall@512t", "span", "recall@512t"),
                                                ("span/cov_iou@5", "span", "cov_iou@5")])
def test_primary_parses(text, level, metric):
    p = Primary.parse(text)
    assert (p.level, p.metric, p.label) == (level, metric, f"{level} {metric}")


@pytest.mark.parametrize("text,problem", [("page/recall@5", "level must be"),
                                          ("span/recall", "needs exactly one cut-off"),
                                          ("doc/cov_iou@5", "span level only"),
                                          ("span/foo@5", "unknown measure")])
def test_bad_primary_is_one_line_naming_the_problem(text, problem):
    with pytest.raises(ReportError) as e:
        Primary.parse(text)
    assert problem in str(e.value) and "\n" not in str(e.value)


def test_bad_per_query_file_is_a_one_line_error_naming_file_and_line(tmp_path, capsys):
    _grid(tmp_path, {so: _base() for so in GRID[:2]})
    path = tmp_path / "1" / "per_query.csv"
    path.write_text(path.read_text().replace("q3,doc,recall@5,", "q3,doc,recall@5,oops", 1).replace(
        "q3,span,recall@5,", "q3,span,recall@5,x", 1))
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}:" in err[0] and "is not a number" in err[0]


def test_several_sweeps_side_by_side(tmp_path, capsys):
    a, b = tmp_path / "runs" / "a", tmp_path / "runs" / "b"
    _grid(a, {so: _base() for so in GRID[:4]}, budgets=(512,))
    _grid(b, {(512, 0): np.ones(60), (512, 64): _base()}, budgets=(512,))
    out = tmp_path / "cmp"
    out.mkdir()
    assert main([str(a), str(b), "--out", str(out)]) == 0
    page = (out / "sweep-comparison.html").read_text(encoding="utf-8")
    assert "runs/a" in page and "runs/b" in page
    assert "vs best (all sweeps)" in page and 'src="data:image/png;base64,' in page
    assert not re.search(r'(src|href)="(?!data:)', page)
    # Pooled over both sweeps (same dataset), b's perfect setting is the best of all.
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page)
    body = [r for r in rows if "runs/" in r]
    assert len(body) == 6
    assert sum("worse" in r for r in body) == 5 and any("512" in r and ">best<" in r for r in body)
    assert (a / "report.html").exists() and (b / "report.html").exists()


def test_sweeps_of_different_datasets_are_not_tested_together(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _grid(a, {so: _base() for so in GRID[:2]}, budgets=())
    _grid(b, {so: _base() for so in GRID[:2]}, dataset="other", budgets=())
    out = tmp_path / "c.html"
    assert main([str(a), str(b), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "vs best (all sweeps)" not in page and "no test across sweeps" in page


def test_a_pick_from_few_queries_says_it_is_weak(tmp_path):
    _grid(tmp_path, {so: _base(10) for so in GRID})
    assert [r["job"] for r in load_rows(tmp_path)] == list(range(6))
    decision = decide(load_rows(tmp_path))
    assert set(decision.comparisons) == set(range(6)) and decision.n_compared == 10
    text = write_report(tmp_path, quiet=True)
    assert "Only 10 queries back this: a weak pick." in text
    assert "Only 10 queries are compared" in text


def test_combined_per_query_table_grows_by_appending_and_matches_a_rewrite(tmp_path):
    _grid(tmp_path, {so: _base(5) for so in GRID[:2]})
    write_report(tmp_path, quiet=True)
    _job(tmp_path, 2, 256, 0, _base(5, seed=1))
    write_report(tmp_path, quiet=True)
    appended = (tmp_path / "per_query.csv").read_text()
    (tmp_path / "per_query.jobs.json").unlink()
    write_report(tmp_path, quiet=True)
    assert (tmp_path / "per_query.csv").read_text() == appended
    lines = appended.splitlines()
    assert lines[0] == "job,query_id,level,metric,value" and lines[1].startswith("0,q0,doc,")
    assert {line.split(",")[0] for line in lines[1:]} == {"0", "1", "2"}
    # An earlier job's file changed (a rerun into the same folder): rewritten, not appended.
    (tmp_path / "0" / "per_query.csv").write_text("query_id,level,metric,value\nqX,span,recall@5,1.0\n")
    write_report(tmp_path, quiet=True)
    lines = (tmp_path / "per_query.csv").read_text().splitlines()
    assert lines[1] == "0,qX,span,recall@5,1.0" and sum(l.startswith("0,") for l in lines) == 1


def test_any_varied_setting_gets_a_column(tmp_path):
    a, b = _row(0, 128, 0, 0.5), _row(1, 128, 0, 0.6)
    a["settings"]["embed.max_seq_length"], b["settings"]["embed.max_seq_length"] = 32, 128
    assert varied_settings([a, b]) == ["chunk.size", "chunk.overlap", "embed.max_seq_length"]
    header, cells = headline_table([a, b])
    col = header.index("embed.max_seq_length")
    assert [c[col] for c in cells] == ["32", "128"]


def test_an_unreadable_row_is_skipped_not_fatal(tmp_path, capsys):
    _write(tmp_path, [_row(0, 128, 0, 0.5), _row(1, 256, 0, 0.7)])
    (tmp_path / "1" / "row.json").write_text('{"job": 1, "status": "o')  # killed mid-write
    write_report(tmp_path, quiet=True)
    with open(tmp_path / "results.csv", newline="") as f:
        assert [r["job"] for r in csv.DictReader(f)] == ["0"]
    assert "unreadable row" in capsys.readouterr().err


def test_chunker_notes_and_bootstrap_settings_appear_under_the_table(tmp_path):
    a, b = _row(0, 128, 0, 0.5), _row(1, 256, 32, 0.6)
    b["settings"]["chunk.strategy"] = "paragraph"
    b["notes"] = ["overlap is ignored by strategy 'paragraph'"]
    a["bootstrap"] = b["bootstrap"] = {"n_boot": 1000, "confidence": 0.95, "seed": 0}
    _write(tmp_path, [a, b])
    write_report(tmp_path, quiet=True)
    md = (tmp_path / "results.md").read_text()
    assert "overlap is ignored by strategy 'paragraph'" in md and "size=256" in md
    assert "1000 resamples, seed 0" in md
