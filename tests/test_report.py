import csv
import json

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
