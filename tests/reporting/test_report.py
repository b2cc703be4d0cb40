"""``sweep.report``: the files a sweep's report writes, and its CLI (no model)."""

import csv
import re
from pathlib import Path

import numpy as np

from sweep.report.__main__ import main
from sweep.reporting.sweepreport import build_report
from sweep.reporting.write import write_report
from sweepdirs import GRID, base, make_grid, make_job


def _csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_write_report_and_cli_rebuild_from_saved_rows(tmp_path, capsys):
    make_grid(tmp_path, {(128, 0): base(), (256, 0): np.ones(60)})
    make_job(tmp_path, 2, 512, 0, None, status="failed", error="RuntimeError: boom")
    write_report(tmp_path, quiet=True)
    rows = _csv(tmp_path / "results.csv")
    assert [r["status"] for r in rows] == ["ok", "ok", "failed"]
    assert list(rows[0])[:3] == ["chunk.strategy", "chunk.size", "chunk.overlap"]  # settings first
    lines = (tmp_path / "per_query.csv").read_text().splitlines()
    assert lines[0] == "job,query_id,level,metric,value"
    assert {line.split(",")[0] for line in lines[1:]} == {"0", "1"}
    (tmp_path / "results.csv").unlink()
    assert main([str(tmp_path)]) == 0
    assert (tmp_path / "results.csv").exists()
    out = capsys.readouterr().out
    assert "1.000 [1.00, 1.00]" in out and "3 setting(s): 2 ok, 1 failed" in out


def test_cli_on_missing_dir_is_one_line_error(tmp_path, capsys):
    assert main([str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a directory" in err[0]


def test_cli_on_a_folder_without_rows_exits_1(tmp_path, capsys):
    assert main([str(tmp_path)]) == 1
    assert "no finished rows" in capsys.readouterr().err


def test_cli_shows_a_folder_name_with_a_line_break_or_an_escape_escaped(tmp_path, capsys):
    # Issue 41 item 9: a name split the message in two and its ANSI escape reached the terminal.
    empty = tmp_path / "a\nb\x1b[2J\u202e"
    empty.mkdir()
    assert main([str(empty), str(tmp_path / "gone\nx")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"sweep.report: {tmp_path}/a\\nb\\x1b[2J\\u202e: no finished rows",
        f"sweep.report: error: {tmp_path}/gone\\nx: not a directory",
    ]


def test_an_error_or_setting_from_data_reaches_the_terminal_escaped(tmp_path, capsys):
    # A job's error and a setting's value are data: an escape or a bidi control in them
    # must not drive the terminal, nor a line break in them add a line to the table.
    scores = {so: base() for so in GRID}
    make_grid(tmp_path, scores)
    make_job(
        tmp_path,
        6,
        64,
        64,
        None,
        status="failed",
        error="boom\x1b[2J\u202eevil\nfailed: size=1 overlap=0: forged",
    )
    assert main([str(tmp_path), "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    (line,) = [line for line in out.splitlines() if "boom" in line]
    assert line.endswith("boom\\x1b[2J\\u202eevil\\nfailed: size=1 overlap=0: forged")


def test_a_full_disk_while_the_report_is_written_is_one_line(tmp_path):
    # The report of a folder on a full disk: one line naming the file, no traceback.
    import subprocess
    import sys

    from mounts import fill, tmpfs

    with tmpfs(tmp_path / "disk", "2m") as disk:
        make_grid(disk / "sweep", {so: base() for so in GRID})
        fill(disk)
        proc = subprocess.run(
            [sys.executable, "-m", "sweep.report", "--no-html", str(disk / "sweep")],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"sweep.report: error: {disk / 'sweep'}/") and (
        line.endswith("No space left on device")
    ), line


def test_quiet_writes_tables_but_no_pictures(tmp_path):
    make_grid(tmp_path, {so: base() for so in GRID})
    write_report(tmp_path, quiet=True)
    assert (tmp_path / "results.md").exists() and (tmp_path / "worst_queries.md").exists()
    assert (tmp_path / "by_type.md").exists()
    assert not (tmp_path / "report.html").exists() and not (tmp_path / "plots").exists()


def test_report_builds_from_saved_rows_alone(tmp_path, capsys):
    scores = {so: base() for so in GRID}
    scores[(128, 16)] = np.ones(60)
    make_grid(tmp_path, scores)
    make_job(tmp_path, 6, 64, 64, None, status="invalid", error="ValueError: overlap 64 >= size 64")
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Recommendation: size=128 overlap=16" in out and "report.html" in out
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<table>" in html and "size=128 overlap=16 has the best span recall@5" in html
    assert html.count('<img alt="') >= 3 and 'src="data:image/png;base64,iVBOR' in html
    # Every picture opens full size on a click (issue 21, item 13), the wide ones span the page.
    links = re.findall(r'<figure class="zoom" id="(fig-[0-9a-f]+)"><a href="#\1"[^>]*><img ', html)
    assert len(links) == html.count('<img alt="')
    ranks = re.search(
        r'<div class="picture( wide)?" id="fig-[0-9a-f]+-at">(?:(?!</figure>).)*'
        r"Where the first relevant chunk lands",
        html,
    )
    assert ranks.group(1) == " wide"  # six panels: a third of the page cannot show them
    assert not re.search(r'(src|href)="(?!data:|#)', html)  # nothing outside the file
    assert "invalid: ValueError: overlap 64 &gt;= size 64" in html
    assert "Question number 0 &amp; &lt;more&gt;?" in html and "gold evidence" in html
    assert "by query type" in html and "adversarial (n=20)" in html
    plots = {p.name for p in (tmp_path / "plots").iterdir()}
    assert {
        "heatmap_span_recall_5.png",
        "budget_span_recall.png",
        "first_relevant_rank_span.png",
    } <= plots
    # The invalid row is in the table with its reason, but not tested and not recommended.
    rows = _csv(tmp_path / "results.csv")
    assert rows[-1]["status"] == "invalid" and rows[-1]["vs_best"] == ""
    assert build_report(tmp_path).decision.comparison(6) is None


def test_worst_queries_are_sorted_worst_first_with_their_text(tmp_path):
    make_grid(tmp_path, {(64, 0): base(), (128, 0): base()})
    write_report(tmp_path, quiet=True)
    md = (tmp_path / "worst_queries.md").read_text()
    table = [line for line in md.splitlines() if re.match(r"\| \d+ +\|", line)]
    values = [float(line.split("|")[4]) for line in table]
    assert values == sorted(values) and len(values) == 60
    first = md[md.index("## 1.") :]
    assert "**Query:** Question number" in first and "gold evidence" in first
    assert "chunk text" in first and "&lt;about&gt; travel" in first


def test_one_setting_still_gets_a_report_without_heatmaps(tmp_path):
    make_job(tmp_path, 0, 128, 0, base())
    assert write_report(tmp_path, quiet=False) is not None
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<table>" in html and "One setting ran" in html
    assert not list((tmp_path / "plots").glob("heatmap_*"))
    assert (tmp_path / "plots" / "budget_span_recall.png").exists()


def test_bad_per_query_file_is_a_one_line_error_naming_file_and_line(tmp_path, capsys):
    make_grid(tmp_path, {so: base() for so in GRID[:2]})
    path = tmp_path / "1" / "per_query.csv"
    lines = path.read_text().splitlines()
    lines[3] = lines[3].rsplit(",", 1)[0] + ",oops"
    path.write_text("\n".join(lines) + "\n")
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}:4:" in err[0] and "'oops' is not a number" in err[0]


def test_bad_trace_file_is_a_one_line_error_naming_file_and_line(tmp_path, capsys):
    make_grid(tmp_path, {so: base() for so in GRID[:2]})
    path = tmp_path / "0" / "hits.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:40]
    path.write_text("\n".join(lines) + "\n")
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}:2: bad JSON" in err[0]


def test_several_sweeps_side_by_side(tmp_path, capsys):
    a, b = tmp_path / "runs" / "a", tmp_path / "runs" / "b"
    make_grid(a, {so: base() for so in GRID[:4]}, budgets=(512,))
    make_grid(b, {(512, 0): np.ones(60), (512, 64): base()}, budgets=(512,))
    out = tmp_path / "cmp"
    out.mkdir()
    assert main([str(a), str(b), "--out", str(out)]) == 0
    page = (out / "sweep-comparison.html").read_text(encoding="utf-8")
    assert "runs/a" in page and "runs/b" in page
    assert "vs best (all sweeps)" in page and 'src="data:image/png;base64,' in page
    assert not re.search(r'(src|href)="(?!data:|#)', page)
    # Pooled over both sweeps (same dataset content), b's perfect setting is the best of all.
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page)
    body = [r for r in rows if "runs/" in r]
    assert len(body) == 6
    assert sum("worse" in r for r in body) == 5 and any("512" in r and ">best<" in r for r in body)
    assert (a / "report.html").exists() and (b / "report.html").exists()


def test_sweeps_of_different_question_sets_under_one_name_are_not_pooled(tmp_path):
    # Issue 17: both folders say "evalset", but the judgments differ: by content, not by name.
    a, b = tmp_path / "a", tmp_path / "b"
    make_grid(a, {so: base() for so in GRID[:2]}, dataset="evalset", fingerprint="a" * 16)
    make_grid(b, {so: base() for so in GRID[:2]}, dataset="evalset", fingerprint="b" * 16)
    out = tmp_path / "c.html"
    assert main([str(a), str(b), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "vs best (all sweeps)" not in page
    assert "No test across sweeps: they scored different evaluation sets" in page
    assert "evalset #aaaaaaaa" in page and "evalset #bbbbbbbb" in page


def test_sweeps_scored_with_different_min_coverage_are_not_pooled(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    make_grid(a, {so: base() for so in GRID[:2]})
    make_grid(b, {so: base() for so in GRID[:2]}, min_coverage=0.3)
    out = tmp_path / "c.html"
    assert main([str(a), str(b), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "vs best (all sweeps)" not in page
    assert "eval.min_coverage: 0.5 vs 0.3" in page


def test_combined_per_query_table_grows_by_appending_and_matches_a_rewrite(tmp_path):
    make_grid(tmp_path, {so: base(5) for so in GRID[:2]})
    write_report(tmp_path, quiet=True)
    make_job(tmp_path, 2, 256, 0, base(5, seed=1))
    write_report(tmp_path, quiet=True)
    appended = (tmp_path / "per_query.csv").read_text()
    (tmp_path / "per_query.jobs.json").unlink()
    write_report(tmp_path, quiet=True)
    assert (tmp_path / "per_query.csv").read_text() == appended
    lines = appended.splitlines()
    assert lines[0] == "job,query_id,level,metric,value" and lines[1].startswith("0,q0,doc,")
    assert {line.split(",")[0] for line in lines[1:]} == {"0", "1", "2"}
    # An earlier job's file changed: rewritten, not appended.
    (tmp_path / "0" / "per_query.csv").write_text(
        "query_id,level,metric,value\nqX,span,recall@5,1.0\n"
    )
    write_report(tmp_path, quiet=True)
    lines = (tmp_path / "per_query.csv").read_text().splitlines()
    assert (
        lines[1] == "0,qX,span,recall@5,1.0" and sum(line.startswith("0,") for line in lines) == 1
    )


def test_an_unreadable_row_is_skipped_not_fatal(tmp_path, caplog):
    make_grid(tmp_path, {(128, 0): base(), (256, 0): base()})
    (tmp_path / "1" / "row.json").write_text('{"job": 1, "status": "o')  # killed mid-write
    write_report(tmp_path, quiet=True)
    assert [r["job"] for r in _csv(tmp_path / "results.csv")] == ["0"]
    assert "1/row.json: not JSON" in caplog.text


def test_a_row_of_an_older_version_is_skipped_with_the_reason(tmp_path, caplog):
    make_grid(tmp_path, {(128, 0): base(), (256, 0): base()})
    (tmp_path / "1" / "row.json").write_text('{"job": 1, "status": "ok", "levels": {}}')
    write_report(tmp_path, quiet=True)
    assert [r["job"] for r in _csv(tmp_path / "results.csv")] == ["0"]
    assert "written by another version of sweep" in caplog.text


HOSTILE = "<img src=x onerror=alert(1)>|two\nlines [x](javascript:alert(1))"


def test_names_and_errors_from_data_stay_text_in_results_md_and_report_html(tmp_path):
    from markdown_it import MarkdownIt

    make_grid(
        tmp_path,
        {(128, 0): base(), (256, 0): np.ones(60)},
        settings={"chunk.note": HOSTILE},
        notes=(HOSTILE,),
    )
    make_job(
        tmp_path,
        2,
        512,
        0,
        None,
        status="failed",
        error=f"RuntimeError: {HOSTILE}",
        settings={"chunk.note": "plain"},
    )  # a setting that varies: a column of its own
    assert write_report(tmp_path, quiet=False) is not None
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    md = (tmp_path / "results.md").read_text(encoding="utf-8")
    rendered = MarkdownIt("commonmark").enable("table").render(md)
    assert "<img" not in rendered and "<a " not in rendered
    table = rendered[: rendered.index("</table>")]
    head = len(re.findall(r"<th[ >]", table))
    rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)[1:]
    assert len(rows) == 3 and all(len(re.findall(r"<td", r)) == head for r in rows)
    shown = "&lt;img src=x onerror=alert(1)&gt;|two lines [x](javascript:alert(1))"
    assert f"RuntimeError: {shown}" in rendered  # the error, as it was
    assert rendered.count(shown) >= 5  # setting cells and labels, the error, the notes


def test_the_combined_per_query_table_is_never_followed_to_a_file_outside(tmp_path):
    import json

    folder = tmp_path / "sweep"
    make_grid(folder, {so: base() for so in GRID[:2]})
    victim = tmp_path / "victim.txt"
    victim.write_text("someone else's file\n")
    # a tampered folder: the table is a link out, the manifest says it holds no job yet
    (folder / "per_query.csv").symlink_to(victim)
    (folder / "per_query.jobs.json").write_text(
        json.dumps({"size": victim.stat().st_size, "entries": []})
    )
    write_report(folder, quiet=True)
    assert victim.read_text() == "someone else's file\n"
    table = folder / "per_query.csv"
    assert not table.is_symlink() and table.read_text().startswith("job,query_id,level")


def test_a_folder_name_that_is_not_utf8_is_reported_escaped(tmp_path):
    # Linux hands Python such a name with a lone surrogate in it (b"\xff" -> "\udcff"),
    # which no UTF-8 file or terminal can hold: shown as its code, never a crash.
    import os
    import subprocess
    import sys

    folder = Path(os.fsdecode(bytes(tmp_path) + b"/new\xff"))
    make_grid(folder, {so: base() for so in GRID[:2]})
    proc = subprocess.run(
        [sys.executable, "-m", "sweep.report", str(folder)], capture_output=True, timeout=300
    )
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert b"new\\udcff" in (folder / "report.html").read_bytes()
    assert b"files in " + bytes(tmp_path) + b"/new\\udcff/" in proc.stdout
    summary = tmp_path / "summary.md"
    proc = subprocess.run(
        [sys.executable, "-m", "sweep.check", str(folder), "--baseline", str(folder)],
        capture_output=True,
        timeout=300,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr[-2000:]
    assert "new\\\\udcff" in summary.read_text(encoding="utf-8")


def test_two_sweeps_of_the_same_questions_print_one_table_with_one_pick(tmp_path, capsys):
    import numpy as np

    from sweepdirs import base, make_job

    # sweep's own chunker in one folder, a framework's splitter (sizes in characters) in
    # another, on the same questions: one table, one recommendation across both
    for job, size in enumerate((128, 256)):
        make_job(
            tmp_path / "x" / "own", job, size, 0, base(seed=job), settings={"chunk.unit": "tokens"}
        )
    lc = {"chunk.strategy": "RecursiveCharacterTextSplitter", "chunk.unit": "characters"}
    make_job(tmp_path / "x" / "lc", 0, 1000, 200, np.ones(60), settings=lc)
    assert main(["--no-html", str(tmp_path / "x" / "own"), str(tmp_path / "x" / "lc")]) == 0
    out = capsys.readouterr().out
    combined = out[out.index("all 2 sweeps in one table") :]
    table = combined.split("\n\n")[1].splitlines()
    assert table[0].split()[:4] == ["strategy", "size", "unit", "overlap"] and "sweep" in table[0]
    assert len(table) == 2 + 3  # header, rule, the three settings of both folders
    assert combined.count("Recommendation:") == 1 and combined.count("recommended") == 1
    (pick,) = [line for line in table if "recommended" in line]
    # (the class name loses its TextSplitter suffix to keep the wider table in the terminal)
    assert pick.split()[:5] == ["RecursiveCharacter", "1000", "characters", "200", "lc"]


def test_folders_of_one_name_are_told_apart_in_the_combined_table(tmp_path, capsys):
    from sweepdirs import base, make_job

    make_job(tmp_path / "minilm" / "run", 0, 128, 0, base())
    make_job(tmp_path / "bge" / "run", 0, 256, 0, base(seed=1))
    assert main(["--no-html", str(tmp_path / "minilm" / "run"), str(tmp_path / "bge" / "run")]) == 0
    out = capsys.readouterr().out
    combined = out[out.index("all 2 sweeps in one table") :]
    assert "minilm:run" in combined and "bge:run" in combined


def test_two_sweeps_of_other_questions_get_one_line_saying_why_not_one_table(tmp_path, capsys):
    from sweepdirs import base, make_job

    make_job(tmp_path / "x" / "a", 0, 128, 0, base(), fingerprint="a" * 16)
    make_job(tmp_path / "x" / "b", 0, 128, 0, base(), fingerprint="b" * 16)
    assert main(["--no-html", str(tmp_path / "x" / "a"), str(tmp_path / "x" / "b")]) == 0
    captured = capsys.readouterr()
    assert "in one table" not in captured.out and "x/a" in captured.err
    (line,) = [e for e in captured.err.splitlines() if "combined" in e]
    assert line == (
        "sweep.report: no combined table: they scored different evaluation sets "
        "(by content: x/a: synthetic #aaaaaaaa, x/b: synthetic #bbbbbbbb)."
    )
