"""``sweep.store.row``: a job's row survives JSON exactly."""

import json

import pytest

from sweep.core.evalconfig import EvalConfig
from sweep.store.row import (
    ROW_FORMAT,
    DatasetInfo,
    Row,
    RowError,
    load_rows,
    read_row,
    unfinished_jobs,
)
from sweep.store.stats import Stats
from sweepdirs import base, make_job


def test_an_ok_row_round_trips(tmp_path):
    row = make_job(tmp_path, 3, 128, 16, base())
    back = Row.from_json(row.to_json())
    assert back == row
    assert back.summary.interval("span", "recall@5").mean == pytest.approx(base().mean())
    assert back.stats.tokens(5) == 640.0 and back.stats.tokens(7) is None
    assert back.eval == EvalConfig(k=(1, 3, 5, 10), table_k=(5,), n_boot=100)


def test_an_invalid_row_round_trips_and_needs_no_summary(tmp_path):
    row = make_job(tmp_path, 1, 64, 64, None, status="invalid", error="ValueError: x")
    assert Row.from_json(row.to_json()) == row and row.summary is None


def test_an_ok_row_without_a_summary_is_refused():
    with pytest.raises(ValueError, match="needs its summary"):
        Row(0, "ok", {}, EvalConfig())
    with pytest.raises(ValueError, match="status"):
        Row(0, "done", {}, EvalConfig())


@pytest.mark.parametrize(
    "text,problem",
    [
        ("{", "not JSON"),
        ("[]", "not a row object"),
        ('{"job": 0, "status": "ok", "levels": {}}', "another version of sweep (row format 1"),
        (json.dumps({"format": ROW_FORMAT, "status": "ok"}), "missing key 'job'"),
        (
            json.dumps(
                {"format": ROW_FORMAT, "job": 0, "status": "ok", "settings": {}, "eval": {"k": [0]}}
            ),
            "eval.k must be a list of positive integers",
        ),
    ],
)
def test_bad_rows_say_what_is_wrong(text, problem, tmp_path):
    with pytest.raises(RowError) as e:
        Row.from_json(text, path=tmp_path)
    assert str(tmp_path / "row.json") in str(e.value) and problem in str(e.value)


def test_load_rows_sorts_by_job_and_remembers_the_folder(tmp_path):
    for job in (10, 2):
        make_job(tmp_path, job, 64, 0, None, status="failed", error="boom")
    rows = load_rows(tmp_path)
    assert [r.job for r in rows] == [2, 10] and rows[0].path == tmp_path / "2"


def test_stats_columns_round_trip():
    st = Stats(n_chunks=5, tokens_at={5: 100.0, 1: 20.0}, total_s=1.5)
    cols = st.to_columns()
    assert cols["tokens@1"] == 20.0 and cols["n_chunks"] == 5
    assert Stats.from_columns(cols) == st
    with pytest.raises(ValueError, match="unknown stats column"):
        Stats.from_columns({"nonsense": 1})


def test_columns_only_some_rows_have_are_absent_from_the_others_and_old_rows_load():
    paged = Stats(n_chunks=5, n_pages=41, pages_split=3, docs_without_pages=9)
    cols = paged.to_columns()
    assert (cols["n_pages"], cols["pages_split"], cols["docs_without_pages"]) == (41, 3, 9)
    assert Stats.from_columns(cols) == paged
    # A strategy that counts no pages has no such columns; a row saved before they existed
    # (no key at all) loads as one of those.
    plain = Stats(n_chunks=5).to_columns()
    assert not {"n_pages", "pages_split", "docs_without_pages"} & set(plain)
    assert Stats.from_columns(plain) == Stats(n_chunks=5)
    assert Stats.from_columns({**plain, "n_pages": None}).n_pages is None


def test_dataset_info_names_the_content():
    from sweep.core.types import Dataset, Document, Judgment, Query

    a = Dataset("evalset", (Document("d", "text"),), (Query("q", "?", (Judgment("d", 0, 2),)),))
    b = Dataset("evalset", (Document("d", "text"),), (Query("q", "?", (Judgment("d", 1, 3),)),))
    assert DatasetInfo.of(a).fingerprint != DatasetInfo.of(b).fingerprint
    assert DatasetInfo.of(a) == DatasetInfo.of(Dataset("evalset", a.documents, a.queries))


def test_a_row_nested_too_deeply_is_one_line_naming_the_file(tmp_path):
    with pytest.raises(RowError) as e:
        Row.from_json("[" * 100_000 + "]" * 100_000, path=tmp_path)
    assert str(e.value) == f"{tmp_path / 'row.json'}: nested too deeply to be a row"


def test_a_row_in_place_of_which_there_is_no_file_is_skipped_with_its_reason(tmp_path, caplog):
    import os

    make_job(tmp_path, 0, 64, 0, None, status="failed", error="boom")
    make_job(tmp_path, 1, 64, 0, None, status="failed", error="boom")
    (tmp_path / "1" / "row.json").unlink()
    os.mkfifo(tmp_path / "1" / "row.json")  # regular_file is asked before anything opens it
    (tmp_path / "2").mkdir()
    (tmp_path / "2" / "row.json").write_bytes(b'{"job": "\xff"}')
    assert [r.job for r in load_rows(tmp_path)] == [0]
    assert [m for m in caplog.messages] == [
        f"skipped a row: {tmp_path / '1' / 'row.json'}: is a FIFO, not a regular file",
        f"skipped a row: {tmp_path / '2' / 'row.json'}:1: not UTF-8 text (a byte 0xff)",
    ]
    with pytest.raises(RowError, match="row.json: missing"):
        read_row(tmp_path / "3" / "row.json")


def test_jobs_that_started_and_saved_no_row_are_unfinished(tmp_path):
    make_job(tmp_path, 0, 64, 0, None, status="failed", error="boom")
    for job in ("3", "12"):
        (tmp_path / job / ".hydra").mkdir(parents=True)
    (tmp_path / "plots").mkdir()
    assert unfinished_jobs(tmp_path) == (3, 12)
    assert unfinished_jobs(tmp_path / "nowhere") == ()


def test_a_row_saved_before_latency_conditions_and_peak_memory_were_recorded_still_reads(tmp_path):
    from sweep.core.timing import Conditions

    row = make_job(tmp_path, 0, 128, 0, base()).with_stats(
        latency_p50_ms=5.6,
        latency_measured_at="2026-12-05T13:40:00+00:00",
        latency_load=0.3,
        latency_cpus=2,
        peak_rss_mb=900.5,
    )
    data = json.loads(row.to_json())
    assert Row.from_json(json.dumps(data)).stats.latency_conditions == Conditions(
        "2026-12-05T13:40:00+00:00", 0.3, 2
    )
    for key in ("latency_measured_at", "latency_load", "latency_cpus", "peak_rss_mb"):
        del data["stats"][key]  # as an earlier version wrote it
    stats = Row.from_json(json.dumps(data)).stats
    assert stats.latency_p50_ms == 5.6 and stats.peak_rss_mb is None
    assert stats.latency_conditions.describe() == "measured at an unknown time"
