"""Screenshots of report.html's explorer for the docs (docs/img/explorer-*.png).

    python tools/explorer_screenshots.py outputs/<sweep>/report.html [docs/img]

Opens the page from file:// in the system Chromium (Playwright, no browser download) and
shoots the window each view opens in, 1400 x 900: the question list, a question whose outcome flips between the
recommended setting and the best other one (side by side), that question's document with
chunk boundaries, the sortable results table, and the question at 800 px wide. Nothing is fetched from the network.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "reporting"))
# the browser as the explorer's tests launch it: the system Chromium, no network
from test_explorer_browser import ARGS, CHROMIUM  # noqa: E402

READ_DATA = """() => {
  const s = document.getElementById('sweep-explorer-data');
  return (s && JSON.parse(s.textContent)) || window.sweepExplorerData || null;
}"""
DRAWN = "document.getElementById('explorer').dataset.view === location.hash"


def _flipped(data: dict, a: int, b: int) -> int:
    """Index of the first question found by one of a, b and missed by the other (else 0)."""
    for i, q in enumerate(data["questions"]):
        va, vb = q["outcome"][a], q["outcome"][b]
        if va is not None and vb is not None and (va > 0) != (vb > 0) and q["gold"]:
            return i
    return next((i for i, q in enumerate(data["questions"]) if q["gold"]), 0)


def shoot(report: Path, out: Path, width: int = 1400) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    url = report.resolve().as_uri()
    shots = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.route(
            "**/*",
            lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort(),
        )
        page = context.new_page()
        page.goto(url)
        page.wait_for_function(DRAWN)
        data = page.evaluate(READ_DATA)
        jobs = data["jobs"]
        a = next((i for i, j in enumerate(jobs) if j["pick"]), 0)
        b = next((i for i, j in enumerate(jobs) if i != a and j["ok"]), a)
        qi = _flipped(data, a, b)
        q = data["questions"][qi]
        doc = data["docs"][q["gold"][0]["doc"]]["id"] if q["gold"] else data["docs"][0]["id"]
        ja, jb = jobs[a]["job"], jobs[b]["job"]

        def view(name: str, hash_: str) -> None:
            # the window as a deep link opens it: the view must be there, at the top
            page.goto(url + hash_)
            page.wait_for_function(DRAWN)
            shots.append(out / f"explorer-{name}.png")
            page.screenshot(path=shots[-1])

        view("questions", f"#questions&a={ja}&b={jb}")
        view("question", f"#question={quote(q['id'], safe='')}&a={ja}&b={jb}")
        view("document", f"#document={quote(doc, safe='')}&job={ja}")
        if page.locator("#results-table table").count():
            shots.append(out / "explorer-table.png")
            page.locator("#results-table").screenshot(path=shots[-1])
        page.set_viewport_size({"width": 800, "height": 900})
        view("question-800", f"#question={quote(q['id'], safe='')}&a={jb}&b={ja}")
        browser.close()
    return shots


def _shrink(path: Path) -> None:
    """256 colours are plenty for a page of text: the docs' PNGs shrink about three times."""
    from PIL import Image

    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("docs/img")
    for path in shoot(Path(sys.argv[1]), out):
        _shrink(path)
        print(path, f"{path.stat().st_size // 1024} kB")


if __name__ == "__main__":
    main()
