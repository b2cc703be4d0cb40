"""``sweep.reporting.tables``: the comparison table as text."""

import numpy as np

from sweep.reporting.sweepreport import build_report
from sweep.reporting.tables import TERMINAL_WIDTH, footnotes, results_frame, terminal_table
from sweepdirs import GRID, base, make_grid, make_job


def test_full_table_marks_invalid_rows_and_shows_varied_settings(tmp_path):
    make_job(tmp_path, 0, 128, 0, base())
    make_job(tmp_path, 1, 128, 128, None, status="invalid", error="ValueError: overlap >= size")
    df = results_frame(build_report(tmp_path))
    assert list(df.columns[:2]) == ["size", "overlap"] and "span recall@5" in df.columns
    assert df.loc[0, "trunc %"] == "0.0" and df.loc[0, "tok@5"] == "640"
    assert df.loc[1, "status"] == "invalid: ValueError: overlap >= size"
    assert df.loc[1, "span recall@5"] == "–"


def test_any_varied_setting_gets_a_column(tmp_path):
    make_job(tmp_path, 0, 128, 0, base(), settings={"embed.max_seq_length": 32})
    make_job(tmp_path, 1, 128, 0, base(), settings={"embed.max_seq_length": 128})
    rep = build_report(tmp_path)
    assert rep.keys == ("chunk.size", "chunk.overlap", "embed.max_seq_length")
    assert list(results_frame(rep)["embed.max_seq_length"]) == ["32", "128"]


def test_two_index_choices_get_one_index_column(tmp_path):
    # Issue 17: index=flat,hnsw used to give two columns both labelled "index".
    make_job(tmp_path, 0, 128, 0, base(), settings={"index": "flat"})
    make_job(tmp_path, 1, 128, 0, base(), settings={"index": "hnsw"})
    df = results_frame(build_report(tmp_path))
    assert list(df.columns).count("index") == 1 and list(df["index"]) == ["flat", "hnsw"]


def test_the_printed_table_fits_a_terminal(tmp_path):
    make_grid(tmp_path, {so: base(seed=i) for i, so in enumerate(GRID)})
    make_job(
        tmp_path,
        6,
        64,
        64,
        None,
        status="invalid",
        error="ChunkingSettingsError: chunk.overlap (64) must be smaller than chunk.size (64)",
    )
    rep = build_report(tmp_path)
    text = terminal_table(rep)
    lines = text.splitlines()
    assert max(len(line) for line in lines[:-1]) <= TERMINAL_WIDTH
    # The reason names the strategy even when it is not a column: it may be the mistake.
    assert lines[-1] == (
        "invalid: strategy=token size=64 overlap=64: ChunkingSettingsError: "
        "chunk.overlap (64) must be smaller than chunk.size (64)"
    )
    header = [c for c in lines[0].split("  ") if c]
    assert [c.strip() for c in header] == [
        "size",
        "overlap",
        "tok@5",
        "trunc %",
        "span recall@5",
        "@256t",
        "@512t",
        "@1024t",
        "vs best",
        "status",
    ]
    assert lines[-2].split()[-1] == "invalid"
    # The full table is wider and keeps every column.
    assert len(results_frame(rep).columns) > len(header)


def test_many_varied_settings_still_fit(tmp_path):
    for job, (strategy, prefix) in enumerate(
        [
            ("token", "none"),
            ("recursive", "title+headings"),
            ("markdown", "title"),
            ("semantic", "none"),
        ]
    ):
        make_job(
            tmp_path,
            job,
            256,
            0,
            base(seed=job),
            settings={
                "chunk.strategy": strategy,
                "chunk.prefix": prefix,
                "embed.model": f"/models/some-long-embedding-model-name-{job}",
            },
        )
    assert max(len(line) for line in terminal_table(build_report(tmp_path)).splitlines()) <= 120


def test_notes_say_what_was_scored_per_dataset(tmp_path):
    # Issue 17: with dataset=tiny,kestrel the notes described the first dataset only.
    make_job(tmp_path, 0, 64, 0, base(6), dataset="tiny", fingerprint="1" * 16)
    make_job(tmp_path, 1, 64, 0, base(60), dataset="kestrel", fingerprint="2" * 16)
    notes = footnotes(build_report(tmp_path))
    assert any(n.startswith("dataset tiny: doc level: 6 queries scored") for n in notes)
    assert any(n.startswith("dataset kestrel: doc level: 60 queries scored") for n in notes)


def test_chunker_notes_and_bootstrap_settings_appear_under_the_table(tmp_path):
    make_job(tmp_path, 0, 128, 0, base())
    make_job(
        tmp_path,
        1,
        256,
        32,
        np.ones(60),
        settings={"chunk.strategy": "paragraph"},
        notes=["overlap is ignored by strategy 'paragraph'"],
    )
    notes = footnotes(build_report(tmp_path))
    assert any("overlap is ignored by strategy 'paragraph'" in n and "size=256" in n for n in notes)
    assert any("100 resamples, seed 0" in n for n in notes)


def test_the_cost_table_has_a_line_per_ok_setting_and_a_dash_for_what_was_not_measured(tmp_path):
    from sweep.reporting.tables import cost_frame, results_markdown

    make_job(tmp_path, 0, 128, 0, base())
    make_job(tmp_path, 1, 256, 0, base(seed=1))
    make_job(tmp_path, 2, 64, 64, None, status="invalid", error="ValueError: x")
    rep = build_report(tmp_path)
    df = cost_frame(rep)
    assert list(df.columns) == [
        "setting",
        "vectors",
        "index MB",
        "embed tokens",
        "tok@5",
        "latency p50 ms",
        "latency p95 ms",
        "peak MB",
    ]
    assert len(df) == 2 and list(df["tok@5"]) == ["640", "1280"]
    # The synthetic rows measured no latency and built no index: shown as a dash, not 0 or nan.
    assert set(df["latency p50 ms"]) == {"–"} and set(df["index MB"]) == {"–"}
    assert "## What each setting costs" in results_markdown(rep)


def _undecided(tmp_path, n=15):
    """n questions; two settings a question or two off the best: every row ≈ best."""
    b = base(n)
    near, nearer = b.copy(), b.copy()
    near[np.flatnonzero(b)[:2]] = 0
    nearer[np.flatnonzero(b)[:1]] = 0
    make_grid(tmp_path, {(64, 0): near, (128, 0): nearer, (256, 0): b})
    return build_report(tmp_path)


def test_a_set_that_cannot_tell_the_settings_apart_says_so_before_the_pick(tmp_path):
    from sweep.reporting.tables import results_markdown, terminal_text

    rep = _undecided(tmp_path)
    d = rep.decision.decisions[0]
    assert {c.verdict for c in d.comparisons.values()} == {"best", "tie"}
    smallest = min(c.n_needed for c in d.comparisons.values() if c.n_needed is not None)
    line = (
        f"These 15 questions cannot tell the settings apart: none differs significantly "
        f"from the best on span recall@5; about {smallest:,} would be needed to confirm even "
        "the clearest difference seen"
    )
    for text in (terminal_text(rep), results_markdown(rep)):
        assert text.count(line) == 1
        assert text.index(line) < text.index("Recommendation:")


def test_a_set_that_tells_a_setting_apart_gives_its_pick_without_that_caveat(tmp_path):
    from sweep.reporting.tables import terminal_text

    scores = {so: base() for so in GRID}
    scores[(128, 16)] = np.ones(60)
    make_grid(tmp_path, scores)
    text = terminal_text(build_report(tmp_path))
    assert "cannot tell the settings apart" not in text and "Recommendation:" in text


def test_identical_settings_cannot_be_told_apart_by_any_number_of_questions(tmp_path):
    from sweep.reporting.tables import terminal_text

    make_grid(tmp_path, {so: base(15) for so in GRID[:3]})
    text = terminal_text(build_report(tmp_path))
    assert (
        "These 15 questions cannot tell the settings apart: none differs significantly from "
        "the best on span recall@5, and they show no difference that more such questions "
        "could confirm."
    ) in text


def test_the_printed_summary_says_whether_synthetic_and_hand_written_questions_agree(
    tmp_path, capsys
):
    from sweep.reporting.write import write_report

    rng = np.random.default_rng(0)
    sources = ["synthetic" if i % 2 else None for i in range(60)]
    scores = {so: (rng.random(60) < 0.3 + 0.1 * i).astype(float) for i, so in enumerate(GRID)}
    make_grid(tmp_path, scores, sources=sources)
    write_report(tmp_path, quiet=False, html=False)
    out = capsys.readouterr().out
    line = "synthetic vs hand-written questions (30 and 30): Kendall's τ between their rankings"
    assert out.count(line) == 1
    # Under the table, before the recommendation.
    assert out.index("vs best") < out.index(line) < out.index("Recommendation:")


def _one_pair_apart(tmp_path):
    """Six settings; (64, 16) loses 6 of the best's 60 questions (a paired p of 2/64 on its
    own), the others one: alone that pair is significant, Holm over five comparisons is not."""
    best = base()
    scores = {so: best.copy() for so in GRID}
    for so, lost in zip(GRID[1:], (6, 1, 1, 1, 1)):
        scores[so][np.flatnonzero(best)[:lost]] = 0
    make_grid(tmp_path, scores)
    return build_report(tmp_path)


def test_every_table_says_its_p_is_holm_adjusted_over_the_comparisons_with_the_best(tmp_path):
    from sweep.reporting.html import render_html
    from sweep.reporting.tables import results_markdown, terminal_text

    rep = _one_pair_apart(tmp_path)
    c = rep.decision.comparison(1)
    assert c.verdict == "tie" and c.p_value < 0.05 <= c.p_holm
    said = "p Holm-adjusted over 5 comparisons with the best"
    why = (
        "python -m sweep.check tests one planned pair (a baseline against a new run) without "
        "adjustment: for the same pair its p is p_value, up to 5 times smaller, so it can "
        "find a significant drop where this column says ≈ best."
    )
    terminal = terminal_text(rep)
    # Printed right under the table, before anything else is said.
    assert terminal.split("\n\n")[1] == (
        f"vs best: {said}; sweep.check tests one pair unadjusted, so its p for a pair can be "
        "up to 5 times smaller."
    )
    for text in (results_markdown(rep), render_html(rep, [])):
        assert said in text and why in text


def _timed(row, **stats):
    row.with_stats(latency_p50_ms=5.6, latency_p95_ms=7.0, **stats).save(row.path)


def test_latency_says_when_and_under_what_load_it_was_measured_and_marks_a_busy_figure(tmp_path):
    from sweep.reporting.html import render_html
    from sweep.reporting.tables import LOAD_MARK, cost_frame, results_markdown

    _timed(
        make_job(tmp_path, 0, 128, 0, base()),
        latency_measured_at="2026-12-05T13:40:00+00:00",
        latency_load=0.3,
        latency_cpus=2,
        peak_rss_mb=1234.4,
    )
    _timed(
        make_job(tmp_path, 1, 256, 0, base(seed=1)),
        latency_measured_at="2026-12-05T13:52:10+00:00",
        latency_load=6.5,
        latency_cpus=2,
    )
    rep = build_report(tmp_path)
    df = cost_frame(rep)
    assert list(df["latency p50 ms"]) == ["5.6", f"5.6 {LOAD_MARK}"]  # only the busy one marked
    assert list(df["peak MB"]) == ["1234", "–"]
    md = results_markdown(rep)
    assert "latency measured 2026-12-05 13:40–13:52 UTC, 1-minute load 0.3–6.5 on 2 CPUs" in md
    assert f"{LOAD_MARK} measured under load" in md and "runtime.retime=true" in md
    html = render_html(rep, [])
    assert "latency measured 2026-12-05 13:40–13:52 UTC" in html and "measured under load" in html


def test_latency_of_a_row_saved_before_its_conditions_were_recorded_is_of_an_unknown_time(tmp_path):
    from sweep.reporting.tables import LOAD_MARK, cost_frame, results_markdown

    _timed(make_job(tmp_path, 0, 128, 0, base()))
    rep = build_report(tmp_path)
    assert list(cost_frame(rep)["latency p50 ms"]) == ["5.6"] and LOAD_MARK not in results_markdown(
        rep
    )
    assert "latency measured at an unknown time" in results_markdown(rep)


def test_long_strategy_names_are_shortened_readably_not_clipped(tmp_path):
    names = [
        "langchain_text_splitters.RecursiveCharacterTextSplitter",
        "llama_index.core.node_parser.SentenceSplitter",
        "sentence",
        "token",
    ]
    for job, (name, size) in enumerate((n, s) for n in names for s in (256, 512)):
        make_job(tmp_path, job, size, 0, base(seed=job), settings={"chunk.strategy": name})
    lines = terminal_table(build_report(tmp_path)).splitlines()
    assert max(len(line) for line in lines) <= TERMINAL_WIDTH
    shown = [line.split()[0] for line in lines[2::2]]
    # The suffix goes where the names stay apart; SentenceSplitter beside sentence stays whole.
    assert shown == ["RecursiveCharacter", "SentenceSplitter", "sentence", "token"]
    assert "…" not in "\n".join(lines)


def test_page_columns_show_only_for_a_question_set_with_pages(tmp_path):
    unpaged, paged = tmp_path / "unpaged", tmp_path / "paged"
    make_grid(unpaged, {so: base(seed=i) for i, so in enumerate(GRID[:2])})
    make_grid(
        paged,
        {so: base(seed=i) for i, so in enumerate(GRID[:2])},
        pages=True,
        primary="page/recall@5",
    )
    plain = build_report(unpaged)
    assert [c for c in results_frame(plain).columns if c.startswith("page ")] == []
    assert not any("page level" in n for n in footnotes(plain))
    rep = build_report(paged)
    df = results_frame(rep)
    assert {"page recall@5", "page ndcg@5", "page recall@512t"} <= set(df.columns)
    # the fixture scores both levels alike; each level resamples from its own stream
    assert df.loc[0, "page recall@5"][:5] == df.loc[0, "span recall@5"][:5]
    assert any(
        "page level: 60 queries scored, 0 excluded (no evidence on a page of a paged document)" in n
        for n in footnotes(rep)
    )
    header = terminal_table(rep).splitlines()[0]
    assert "page recall@5" in header and "span recall@5" not in header
