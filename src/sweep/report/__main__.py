"""``python -m sweep.report DIR [DIR ...]``: rebuild a sweep's tables, pictures and report.html.

With several folders, a comparison page is written as well
(:func:`sweep.reporting.write.rebuild_reports`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from sweep.cli.commands import CommandParser
from sweep.cli.exits import log_warnings
from sweep.reporting.write import rebuild_reports


def main(argv: list[str] | None = None) -> int:
    ap = CommandParser("sweep.report")
    ap.add_argument("dirs", nargs="+", type=Path, help="sweep directories (outputs/<name>/<time>)")
    ap.add_argument(
        "--out",
        default="sweep-comparison.html",
        help="comparison page for several sweeps: an .html file or a directory "
        "(default: ./sweep-comparison.html)",
    )
    ap.add_argument(
        "--no-html", action="store_true", help="tables only: no pictures, no report.html"
    )
    args = ap.parse_args(argv)
    log_warnings("sweep.report")
    return rebuild_reports(args.dirs, out=args.out, html=not args.no_html)


if __name__ == "__main__":
    sys.exit(main())
