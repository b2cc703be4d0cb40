"""A sweep's tables, pictures and report.html, written from its saved rows.

The sweep calls :func:`write_report` after every job (``quiet=True``: tables
only, they are cheap), so an interrupted sweep still has a table of the rows it
finished, and once more at the end (pictures and ``report.html`` too).
:func:`rebuild_reports` does it again for finished sweeps, and puts several side
by side on one comparison page.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

from sweep.cli.exits import report_error
from sweep.core.errors import BadInput
from sweep.core.files import NotRegularFile, folder_inside, write_text_atomic
from sweep.core.folderlock import locked
from sweep.core.messages import visible
from sweep.reporting import htmlkit
from sweep.reporting.chunkhealth import health_markdown
from sweep.reporting.figurecache import FigureCache
from sweep.reporting.frames import combine_per_query, write_results
from sweep.reporting.sweepreport import SweepReport, build_report
from sweep.reporting.tables import (
    agreement_markdown,
    breakdown_markdown,
    diagnostics_markdown,
    results_markdown,
    terminal_text,
    unfinished_note,
    worst_markdown,
)
from sweep.store.corpus import CorpusError
from sweep.store.row import unfinished_jobs
from sweep.store.traces import TraceError

__all__ = [
    "ReportError",
    "rebuild_reports",
    "summary_line",
    "write_html",
    "write_report",
    "write_tables",
]

log = logging.getLogger(__name__)


class ReportError(ValueError, BadInput):
    """A saved file of a sweep cannot be read; ``str()`` names the file, line and problem."""


def write_tables(rep: SweepReport) -> list[str]:
    """results.csv, results.md, per_query.csv, and by_type.md / worst_queries.md when they apply."""
    d = rep.sweep_dir
    write_results(d / "results.csv", rep.frame)
    health = health_markdown(rep)
    write_text_atomic(
        d / "results.md", results_markdown(rep) + (f"\n\n{health}" if health else "") + "\n"
    )
    combine_per_query(rep.rows, d / "per_query.csv")
    files = ["results.csv", "results.md", "per_query.csv"]
    for name, text in (
        ("by_type.md", breakdown_markdown(rep)),
        ("diagnostics.md", diagnostics_markdown(rep)),
        ("by_source.md", agreement_markdown(rep)),
        ("worst_queries.md", worst_markdown(rep)),
    ):
        if text is not None:
            write_text_atomic(d / name, text)
            files.append(name)
    return files


def write_html(rep: SweepReport, figures: FigureCache | None = None) -> list[str]:
    """plots/ and report.html (seconds: matplotlib; pictures drawn before are copied from
    ``figures``)."""
    from sweep.reporting.chunkhealth import write_length_histograms
    from sweep.reporting.explorer import explorer_data, explorer_page_parts, write_sidecar
    from sweep.reporting.html import render_html
    from sweep.reporting.pictures import write_pictures, write_score_histograms

    # Pictures go only into a folder of the sweep's own: a link in its place (to a folder
    # elsewhere) is refused, never written through, and a file there is left as it is.
    folder_inside(rep.sweep_dir / "plots", rep.sweep_dir)
    pictures, scores = write_pictures(rep, figures), write_score_histograms(rep, figures)
    lengths = write_length_histograms(rep, figures) if rep.ok else []
    explorer = explorer_page_parts(explorer_data(rep))
    sidecar = write_sidecar(rep.sweep_dir, explorer)
    htmlkit.write_page(
        rep.sweep_dir / "report.html", render_html(rep, pictures, scores, lengths, explorer)
    )
    return (
        ["report.html"]
        + ([sidecar.name] if sidecar is not None else [])
        + (["plots/"] if pictures or scores or lengths else [])
    )


def summary_line(rep: SweepReport) -> str:
    """``6 setting(s): 5 ok, 1 invalid``: the last line a sweep prints says what did not run."""
    counts = {s: sum(r.status == s for r in rep.rows) for s in ("ok", "invalid", "failed")}
    parts = [f"{n} {s}" for s, n in counts.items() if n or s == "ok"]
    return f"{len(rep.rows)} setting(s): {', '.join(parts)}"


def write_report(
    sweep_dir: Path,
    *,
    quiet: bool = False,
    html: bool | None = None,
    figures: FigureCache | None = None,
) -> SweepReport | None:
    """(Re)write the tables; unless quiet also print them and draw plots/ and report.html.

    ``html`` overrides whether pictures and report.html are made (default: ``not quiet``,
    because drawing takes seconds and the sweep calls this after every job).
    Returns None when no job has finished.
    """
    sweep_dir = Path(sweep_dir)
    try:
        # Jobs of a parallel launcher rebuild the tables at the same time: one at a time,
        # each from the rows saved when it got the lock (sweep.core.folderlock).
        with locked(sweep_dir) if sweep_dir.is_dir() else nullcontext():
            rep = build_report(sweep_dir)
            if rep is None:
                return None
            files = write_tables(rep)
    except (ValueError, TraceError) as e:  # a damaged per-query file or trace: name it
        raise ReportError(str(e)) from None
    if (not quiet) if html is None else html:
        try:
            files += write_html(rep, figures)
        except (TraceError, CorpusError, NotRegularFile) as e:  # traces, documents, pictures
            raise ReportError(str(e)) from None
    if not quiet:
        print("\n" + terminal_text(rep) + "\n")
        print(
            f"sweep: {summary_line(rep)}; files in {visible(sweep_dir)}/ ({', '.join(files)}, "
            "<job>/row.json); the full table and notes are in results.md"
        )
        if rep.unfinished:  # a killed sweep's report must not read as the whole sweep
            log.warning(unfinished_note(rep.unfinished))
    return rep


def comparison_path(out: str) -> Path:
    """The comparison page's file: ``out`` itself when it names an .html file, else
    ``sweep-comparison.html`` inside it."""
    path = Path(out)
    if path.is_dir() or out.endswith(("/", os.sep)) or path.suffix.lower() not in (".html", ".htm"):
        path = path / "sweep-comparison.html"
    return path


def rebuild_reports(
    dirs: Sequence[Path], *, out: str = "sweep-comparison.html", html: bool = True
) -> int:
    """Rewrite each sweep's report and, for several, the comparison page; the exit status.

    0 when every folder had rows; 1 when one had none yet; 2 when one is not a sweep
    folder, a saved file is damaged or the comparison page cannot be written. Every
    folder is tried, whatever happened to the one before it.
    """
    status = 0
    done: list[SweepReport] = []
    for d in dirs:
        if not d.is_dir():
            report_error("sweep.report", f"{visible(d)}: not a directory")
            status = 2
            continue
        try:
            rep = write_report(d, quiet=False, html=html)
        except (ReportError, OSError) as e:  # a damaged folder; a full disk, a FIFO to replace
            report_error("sweep.report", e)
            status = 2
            continue
        if rep is None:
            unfinished = unfinished_jobs(d)
            print(
                f"sweep.report: {visible(d)}: no finished rows"
                + (f"; {unfinished_note(unfinished)}" if unfinished else ""),
                file=sys.stderr,
            )
            status = max(status, 1)
        else:
            done.append(rep)
    if len(dirs) > 1 and len(done) > 1:
        from sweep.reporting.comparison import compare_sweeps, sweep_agreements

        if html:
            page = comparison_path(out)
            try:
                page.parent.mkdir(parents=True, exist_ok=True)
                print(
                    f"sweep.report: comparison of {len(done)} sweeps: {compare_sweeps(done, page)}"
                )
            except OSError as e:
                report_error("sweep.report", e)
                status = 2
        # Whether the sweeps agree is text: it does not need the HTML page.
        for line in sweep_agreements(done):
            print(f"sweep.report: {line}")
        print_combined(done)
    return status


def print_combined(reports: Sequence[SweepReport]) -> None:
    """One table of every sweep's settings with one pick, when they scored the same
    questions the same way; else one line saying why not."""
    from sweep.reporting.comparison import combined_report

    combined = combined_report(reports)
    if isinstance(combined, str):
        print(f"sweep.report: {combined}", file=sys.stderr)
        return
    print(f"\nsweep.report: all {len(reports)} sweeps in one table (one pick across them):\n")
    print(terminal_text(combined) + "\n")
