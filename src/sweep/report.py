"""``python -m sweep.report DIR [DIR ...]``: rebuild a sweep's tables, pictures and report.html.

The sweep itself calls :func:`write_report` after every job (``quiet=True``:
tables only, they are cheap), so an interrupted sweep still has a table of the
rows it finished, and once more at the end (pictures and ``report.html`` too).
With several folders, a comparison page is written as well.
"""

from __future__ import annotations

import logging
import os
import sys
from contextlib import nullcontext
from pathlib import Path

from sweep.reporting import htmlkit as htmlpage
from sweep.cli.commands import CommandParser
from sweep.core.folderlock import locked
from sweep.reporting.frames import combine_per_query, write_results
from sweep.reporting.sweepreport import SweepReport, build_report
from sweep.reporting.tables import (agreement_markdown, breakdown_markdown, diagnostics_markdown,
                          results_markdown, terminal_text, worst_markdown)
from sweep.store.traces import TraceError

__all__ = ["ReportError", "main", "summary_line", "write_report", "write_tables"]

log = logging.getLogger(__name__)


class ReportError(ValueError):
    """A saved file of a sweep cannot be read; ``str()`` names the file, line and problem."""


def write_tables(rep: SweepReport) -> list[str]:
    """results.csv, results.md, per_query.csv, and by_type.md / worst_queries.md when they apply."""
    from sweep.core.files import write_text_atomic

    d = rep.sweep_dir
    write_results(d / "results.csv", rep.frame)
    write_text_atomic(d / "results.md", results_markdown(rep) + "\n")
    combine_per_query(rep.rows, d / "per_query.csv")
    files = ["results.csv", "results.md", "per_query.csv"]
    for name, text in (("by_type.md", breakdown_markdown(rep)), ("diagnostics.md", diagnostics_markdown(rep)),
                       ("by_source.md", agreement_markdown(rep)), ("worst_queries.md", worst_markdown(rep))):
        if text is not None:
            write_text_atomic(d / name, text)
            files.append(name)
    return files


def write_html(rep: SweepReport) -> list[str]:
    """plots/ and report.html (seconds: matplotlib)."""
    from sweep.reporting.html import render_html
    from sweep.reporting.pictures import write_pictures, write_score_histograms

    pictures, scores = write_pictures(rep), write_score_histograms(rep)
    htmlpage.write_page(rep.sweep_dir / "report.html", render_html(rep, pictures, scores))
    return ["report.html"] + (["plots/"] if pictures or scores else [])


def summary_line(rep: SweepReport) -> str:
    """``6 setting(s): 5 ok, 1 invalid``: the last line a sweep prints says what did not run."""
    counts = {s: sum(r.status == s for r in rep.rows) for s in ("ok", "invalid", "failed")}
    parts = [f"{n} {s}" for s, n in counts.items() if n or s == "ok"]
    return f"{len(rep.rows)} setting(s): {', '.join(parts)}"


def write_report(sweep_dir: Path, *, quiet: bool = False, html: bool | None = None
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
        files += write_html(rep)
    if not quiet:
        print("\n" + terminal_text(rep) + "\n")
        print(f"sweep: {summary_line(rep)}; files in {sweep_dir}/ ({', '.join(files)}, "
              "<job>/row.json); the full table and notes are in results.md")
    return rep


def main(argv: list[str] | None = None) -> int:
    ap = CommandParser("sweep.report")
    ap.add_argument("dirs", nargs="+", type=Path, help="sweep directories (outputs/<name>/<time>)")
    ap.add_argument("--out", default="sweep-comparison.html",
                    help="comparison page for several sweeps: an .html file or a directory "
                         "(default: ./sweep-comparison.html)")
    ap.add_argument("--no-html", action="store_true", help="tables only: no pictures, no report.html")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="sweep.report: warning: %(message)s")
    status = 0
    done: list[SweepReport] = []
    for d in args.dirs:
        if not d.is_dir():
            print(f"sweep.report: error: {d}: not a directory", file=sys.stderr)
            status = 2
            continue
        try:
            rep = write_report(d, quiet=False, html=not args.no_html)
        except ReportError as e:
            print(f"sweep.report: error: {e}", file=sys.stderr)
            status = 2
            continue
        if rep is None:
            print(f"sweep.report: {d}: no finished rows", file=sys.stderr)
            status = max(status, 1)
        else:
            done.append(rep)
    if len(args.dirs) > 1 and len(done) > 1:
        from sweep.reporting.comparison import compare_sweeps, sweep_agreements

        if not args.no_html:
            out = Path(args.out)
            if (out.is_dir() or args.out.endswith(("/", os.sep))
                    or out.suffix.lower() not in (".html", ".htm")):
                out = out / "sweep-comparison.html"
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                print(f"sweep.report: comparison of {len(done)} sweeps: {compare_sweeps(done, out)}")
            except OSError as e:
                print(f"sweep.report: error: {e}", file=sys.stderr)
                status = 2
        # Whether the sweeps agree is text: it does not need the HTML page.
        for line in sweep_agreements(done):
            print(f"sweep.report: {line}")
    return status


if __name__ == "__main__":
    sys.exit(main())
