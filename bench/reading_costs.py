"""What the reading limits let a reader spend: the costliest files the defaults let through.

    python bench/reading_costs.py [--only NAME ...] [--units N] [--list]

For each case, a file shaped the costliest way found for its reader (one piece
repeated: a table row, a text-showing operator, a slide listed again...) is grown
until the default limits (:class:`~sweep.datasets.readers.limits.ReadLimits`) refuse
it, and the largest one they let through is read by its reader in a fresh process.
Printed per case: the pieces it holds, the file's size, the seconds the limits took
to measure it, the reader's CPU seconds and the memory it added (peak RSS over the
process after imports), and both per piece. ``--units N`` reads N pieces instead of
searching (the per-piece costs the limits' weights come from).

The files are built with the same helpers as the tests (tests/documents.py); the
numbers are CPU time, so a busy machine gives the same ones. docs/documents.md
("Files too costly to read") quotes them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from documents import (  # noqa: E402
    pdf_stream,
    write_docx,
    write_pptx,
    write_raw_pdf,
    write_xlsx,
    write_zip_bomb,
)
from sweep.datasets.readers.base import UnreadableFile  # noqa: E402
from sweep.datasets.readers.limits import ReadLimits, check_limits  # noqa: E402

MB = 1 << 20


@dataclass(frozen=True)
class Case:
    """A file of ``n`` pieces of one kind, for one reader."""

    name: str
    fmt: str
    reader: str
    build: Callable[[Path, int], Path]
    start: int  # pieces to start the search from


# --------------------------------------------------------------------------- builders


def _office(
    template: Path,
    member: str,
    anchor: bytes,
    head: bytes,
    unit: bytes,
    tail: bytes,
    path: Path,
    n: int,
    *,
    after: bool = False,
    edits: dict[str, bytes] | None = None,
) -> Path:
    """``template`` with ``head + unit * n + tail`` put before (or after) ``anchor`` in
    ``member`` (and members replaced by ``edits``), written without compressing it all."""
    xml = zipfile.ZipFile(template).read(member)
    at = xml.index(anchor) + (len(anchor) if after else 0)
    block = max(1, min(n, 1000))
    bomb = write_zip_bomb(
        path,
        template,
        member,
        xml[:at] + head + unit * (n % block),
        unit * block,
        n // block,
        tail + xml[at:],
    )
    if not edits:
        return bomb
    data = io.BytesIO()
    with zipfile.ZipFile(bomb) as source, zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            out.writestr(info, edits.pop(info.filename, None) or source.read(info))
        for name, content in edits.items():
            out.writestr(name, content)
    bomb.write_bytes(data.getvalue())
    return bomb


def _docx(
    head: bytes,
    unit: bytes,
    tail: bytes,
    *,
    member: str = "word/document.xml",
    anchor: bytes = b"<w:sectPr",
    edits: Callable[[int], dict[str, bytes]] | None = None,
):
    def build(path: Path, n: int) -> Path:
        template = write_docx(path.with_suffix(".template.docx"), ["# Costs", "One paragraph."])
        return _office(
            template, member, anchor, head, unit, tail, path, n, edits=edits(n) if edits else None
        )

    return build


def _footnote(references: int) -> dict[str, bytes]:
    """A footnotes part (where mammoth looks when no relationship says) whose one note
    holds 400 paragraphs (1200 elements): each reference renders it again."""
    body = b"<w:p><w:r><w:t>note</w:t></w:r></w:p>" * 400
    return {
        "word/footnotes.xml": b'<w:footnotes xmlns:w="http://schemas.openxmlformats.org/'
        b'wordprocessingml/2006/main"><w:footnote w:id="1">' + body + b"</w:footnote></w:footnotes>"
    }


_TEXT_BOX = (
    b'<p:sp><p:nvSpPr><p:cNvPr id="9" name="b"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
    b"<p:spPr/><p:txBody><a:bodyPr/><a:p><a:r><a:t>w</a:t></a:r></a:p></p:txBody></p:sp>"
)


def _pptx_shapes(path: Path, n: int) -> Path:
    template = write_pptx(path.with_suffix(".template.pptx"), [("Costs", ["x"])])
    return _office(template, "ppt/slides/slide1.xml", b"</p:spTree>", b"", _TEXT_BOX, b"", path, n)


def _pptx_listed(path: Path, n: int) -> Path:
    """One slide of 50 text boxes, listed ``n`` times by the deck."""
    template = write_pptx(path.with_suffix(".template.pptx"), [("Costs", ["x"])])
    presentation = zipfile.ZipFile(template).read("ppt/presentation.xml")
    listed = b"".join(b'<p:sldId id="%d" r:id="rId7"/>' % (256 + i) for i in range(n))
    presentation = re.sub(
        rb"<p:sldIdLst>.*</p:sldIdLst>", b"<p:sldIdLst>" + listed + b"</p:sldIdLst>", presentation
    )
    return _office(
        template,
        "ppt/slides/slide1.xml",
        b"</p:spTree>",
        b"",
        _TEXT_BOX,
        b"",
        path,
        50,
        edits={"ppt/presentation.xml": presentation},
    )


def _pptx_placeholders(path: Path, n: int) -> Path:
    """A slide of ``n`` placeholders on a layout of 200 more."""
    template = write_pptx(path.with_suffix(".template.pptx"), [("Costs", ["x"])])
    layout = zipfile.ZipFile(template).read("ppt/slideLayouts/slideLayout2.xml")
    extra = b"".join(
        b'<p:sp><p:nvSpPr><p:cNvPr id="9" name="b"/><p:cNvSpPr/><p:nvPr><p:ph idx="%d"/>'
        b"</p:nvPr></p:nvSpPr><p:spPr/></p:sp>" % (1000 + i)
        for i in range(200)
    )
    layout = layout.replace(b"</p:spTree>", extra + b"</p:spTree>")
    placeholder = (
        b'<p:sp><p:nvSpPr><p:cNvPr id="9" name="b"/><p:cNvSpPr/><p:nvPr><p:ph idx="77777"/>'
        b"</p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:p><a:r><a:t>w</a:t></a:r></a:p>"
        b"</p:txBody></p:sp>"
    )
    return _office(
        template,
        "ppt/slides/slide1.xml",
        b"</p:spTree>",
        b"",
        placeholder,
        b"",
        path,
        n,
        edits={"ppt/slideLayouts/slideLayout2.xml": layout},
    )


def _xlsx_cells(columns: int):
    def build(path: Path, n: int) -> Path:
        rows = [[f"v{r}x{c}" for c in range(columns)] for r in range(max(1, n // columns))]
        return write_xlsx(path, {"Sheet": rows})

    return build


def _xlsx_empty(path: Path, n: int) -> Path:
    """A sheet of a header row of 10 columns and one cell on row ``n``: the converter
    writes every empty row between."""
    template = write_xlsx(
        path.with_suffix(".template.xlsx"), {"Sheet": [[f"h{c}" for c in range(10)]]}
    )
    return _office(
        template,
        "xl/worksheets/sheet1.xml",
        b"</sheetData>",
        b"",
        b"",
        b'<row r="%d"><c r="A%d" t="n"><v>1</v></c></row>' % (n, n),
        path,
        0,
    )


def _xlsx_listed(path: Path, n: int) -> Path:
    """A sheet of 500 cells listed ``n`` times by the workbook."""
    template = write_xlsx(
        path.with_suffix(".template.xlsx"),
        {"S": [[f"v{r}x{c}" for c in range(10)] for r in range(50)]},
    )
    workbook = zipfile.ZipFile(template).read("xl/workbook.xml")
    sheets = b"".join(
        b'<sheet xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
        b'name="S%d" sheetId="%d" r:id="rId1"/>' % (i, i + 1)
        for i in range(n)
    )
    workbook = re.sub(rb"<sheets>.*</sheets>", b"<sheets>" + sheets + b"</sheets>", workbook)
    data = io.BytesIO()
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for info in source.infolist():
            out.writestr(
                info, workbook if info.filename == "xl/workbook.xml" else source.read(info)
            )
    path.write_bytes(data.getvalue())
    return path


def _xlsx_shared(path: Path, n: int) -> Path:
    """``n`` cells showing one shared string of 1 MB."""
    template = write_xlsx(path.with_suffix(".template.xlsx"), {"S": [["x"] * 10] * 2})
    rows = b"".join(
        b'<row r="%d">' % (r + 1)
        + b"".join(
            b'<c r="%s%d" t="s"><v>0</v></c>' % (bytes([65 + c]), r + 1)
            for c in range(min(10, n - 10 * r))
        )
        + b"</row>"
        for r in range((n + 9) // 10)
    )
    types = (
        zipfile.ZipFile(template)
        .read("[Content_Types].xml")
        .replace(
            b"</Types>",
            (
                b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
                b'officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
            ),
        )
    )
    data = io.BytesIO()
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for info in source.infolist():
            content = source.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                content = re.sub(
                    rb"<sheetData>.*</sheetData>",
                    b"<sheetData>" + rows + b"</sheetData>",
                    content,
                    flags=re.DOTALL,
                )
            out.writestr(info, types if info.filename == "[Content_Types].xml" else content)
        out.writestr(
            "xl/sharedStrings.xml",
            b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            b"<si><t>" + b"word " * (MB // 5) + b"</t></si></sst>",
        )
    path.write_bytes(data.getvalue())
    return path


def _html(unit: str, head: str = "", tail: str = ""):
    def build(path: Path, n: int) -> Path:
        path.write_text(
            f"<html><head><title>Costs</title></head><body><main><h1>Costs</h1>{head}"
            f"{unit * n}{tail}</main></body></html>",
            encoding="utf-8",
        )
        return path

    return build


def _pdf(
    unit: bytes,
    pre: bytes = b"BT /F1 12 Tf 72 700 Td ",
    post: bytes = b" ET",
    *,
    page_bytes: int = 0,
):
    """Pages drawing one shared stream of ``unit`` repeated: ``n`` units on one page, or
    (``page_bytes``) pages of that many bytes of units each, as many as ``n`` units fill."""

    def build(path: Path, n: int) -> Path:
        per_page = max(1, min(n, page_bytes // len(unit))) if page_bytes else n
        pages = max(1, n // per_page)
        block = max(1, min(per_page, 1000))
        kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
        objects = [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
            pdf_stream(
                pre + unit * (per_page % block),
                repeat=unit * block,
                times=per_page // block,
                tail=post,
            ),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
        objects += [
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
            b"/Resources << /Font << /F1 4 0 R >> >> >>"
        ] * pages
        return write_raw_pdf(path, objects)

    return build


def _pdf_cmap(path: Path, n: int) -> Path:
    """A page whose font's /ToUnicode map holds ``n`` entries."""
    block = b"100 beginbfchar\n" + b"<0041> <0042>\n" * 100 + b"endbfchar\n"
    head = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def "
        b"1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
    )
    return write_raw_pdf(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
            pdf_stream(b"BT /F1 12 Tf 72 700 Td (Costs of a font's map.) Tj ET"),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
            b"/Resources << /Font << /F1 4 0 R >> >> >>",
            pdf_stream(
                head,
                repeat=block,
                times=max(1, n // 100),
                tail=b"endcmap CMapName currentdict /CMap defineresource pop end end",
            ),
        ],
    )


_P = b"<w:p>"
_HALF_MB = MB * 45 // 100  # (a page a little within pypdf's share of one page)

CASES = [
    Case(
        "docx-table-rows",
        "docx",
        "markitdown",
        _docx(b"<w:tbl>", b"<w:tr><w:tc><w:p/></w:tc></w:tr>", b"</w:tbl>"),
        1000,
    ),
    Case(
        "docx-breaks", "docx", "markitdown", _docx(_P + b"<w:r>", b"<w:br/>", b"</w:r></w:p>"), 1000
    ),
    Case(
        "docx-paragraphs",
        "docx",
        "markitdown",
        _docx(b"", b"<w:p><w:r><w:t>word</w:t></w:r></w:p>", b""),
        1000,
    ),
    Case(
        "docx-runs", "docx", "markitdown", _docx(_P, b"<w:r><w:t>ab</w:t></w:r>", b"</w:p>"), 1000
    ),
    Case(
        "docx-styles",
        "docx",
        "markitdown",
        _docx(
            b"",
            b'<w:style w:type="paragraph" w:styleId="s"><w:name w:val="n"/>'
            b'<w:basedOn w:val="Normal"/></w:style>',
            b"",
            member="word/styles.xml",
            anchor=b"</w:styles>",
        ),
        1000,
    ),
    Case(
        "docx-text",
        "docx",
        "markitdown",
        _docx(_P + b"<w:r><w:t>", b"a", b"</w:t></w:r></w:p>"),
        1_000_000,
    ),
    Case(
        "docx-footnote-references",
        "docx",
        "markitdown",
        _docx(
            _P,
            b'<w:r><w:footnoteReference w:id="1"/></w:r>',
            b"</w:p>",
            edits=lambda n: _footnote(n),
        ),
        10,
    ),
    Case("pptx-shapes", "pptx", "markitdown", _pptx_shapes, 1000),
    Case("pptx-slide-listed", "pptx", "markitdown", _pptx_listed, 10),
    Case("pptx-placeholders", "pptx", "markitdown", _pptx_placeholders, 10),
    Case("xlsx-cells", "xlsx", "markitdown", _xlsx_cells(10), 1000),
    Case("xlsx-rows", "xlsx", "markitdown", _xlsx_cells(1), 1000),
    Case("xlsx-empty-rows", "xlsx", "markitdown", _xlsx_empty, 1000),
    Case("xlsx-sheet-listed", "xlsx", "markitdown", _xlsx_listed, 2),
    Case("xlsx-shared-string", "xlsx", "markitdown", _xlsx_shared, 2),
    Case("html-tags", "html", "trafilatura", _html("<b>a</b> "), 1000),
    Case("html-tags", "html", "markitdown", _html("<b>a</b> "), 1000),
    Case(
        "html-table-cells",
        "html",
        "markitdown",
        _html("<tr><td>a</td><td>b</td></tr>", "<table>", "</table>"),
        1000,
    ),
    Case("html-text", "html", "trafilatura", _html("word and more words. ", "<p>", "</p>"), 10_000),
    Case(
        "pdf-one-text-object",
        "pdf",
        "pypdf",
        _pdf(b"(Every page draws this one stream.) Tj\n", page_bytes=_HALF_MB),
        1000,
    ),
    Case("pdf-show-one-char", "pdf", "pypdf", _pdf(b"(a)Tj ", page_bytes=_HALF_MB), 1000),
    Case("pdf-kerned-arrays", "pdf", "pypdf", _pdf(b"[(a)-3(b)]TJ ", page_bytes=_HALF_MB), 1000),
    Case(
        "pdf-one-long-string",
        "pdf",
        "pdfplumber",
        _pdf(b"a", pre=b"BT /F1 12 Tf 72 700 Td (", post=b") Tj ET"),
        1000,
    ),
    Case(
        "pdf-one-text-object",
        "pdf",
        "pdfplumber",
        _pdf(b"(Every page draws this one stream.) Tj\n"),
        100,
    ),
    Case("pdf-rectangles", "pdf", "pdfplumber", _pdf(b"0 0 1 1 re f\n", pre=b"", post=b""), 1000),
    Case("pdf-font-map", "pdf", "pdfplumber", _pdf_cmap, 1000),
]


# --------------------------------------------------------------------------- measuring


def _passes(case: Case, folder: Path, n: int) -> tuple[Path, bool]:
    path = case.build(folder / f"{case.name}.{case.fmt}", n)
    try:
        check_limits(path.read_bytes(), case.fmt, ReadLimits(), case.reader)
    except UnreadableFile:
        return path, False
    return path, True


def largest_passing(case: Case, folder: Path) -> int:
    """The most pieces the default limits let through (to within 2%)."""
    low, high = 0, case.start
    while _passes(case, folder, high)[1]:
        low, high = high, high * 2
    while high - low > max(1, low // 50):
        middle = (low + high) // 2
        if _passes(case, folder, middle)[1]:
            low = middle
        else:
            high = middle
    return low


_READ = r"""
import json, re, resource, sys, time
from pathlib import Path
from sweep.datasets.readers.registry import reader_for
from sweep.datasets.readers.base import UnreadableFile
fmt, name, path = sys.argv[1:4]
reader = reader_for(fmt, name)
import importlib
for module in ("pypdf", "pdfplumber", "mammoth", "pptx", "openpyxl", "pandas", "trafilatura",
               "markitdown.converters"):
    try:
        importlib.import_module(module)
    except ImportError:
        pass
def peak_kb():
    # This process's own peak (VmHWM): ru_maxrss would start at the peak of the process
    # that launched this one, as Linux keeps it across exec.
    return int(re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1))
data = Path(path).read_bytes()
before = resource.getrusage(resource.RUSAGE_SELF)
peak_before = peak_kb()
try:
    chars = len(reader.read(data, path).text)
except UnreadableFile as e:
    chars = str(e)
after = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
                  "added_mb": (peak_kb() - peak_before) / 1024, "chars": chars}))
"""


def read_cost(case: Case, path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, "-c", _READ, case.fmt, case.reader, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    if result.returncode:
        return {
            "cpu": float("nan"),
            "added_mb": float("nan"),
            "chars": result.stderr.strip()[-200:],
        }
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="cases to run, by name")
    parser.add_argument("--units", type=int, default=None, help="read this many pieces, no search")
    parser.add_argument("--list", action="store_true", help="list the cases")
    args = parser.parse_args(argv)
    cases = [
        c
        for c in CASES
        if not args.only or c.name in args.only or f"{c.name}/{c.reader}" in args.only
    ]
    if args.list:
        for case in CASES:
            print(f"{case.name}/{case.reader}")
        return 0
    print(
        f"{'case':28s} {'reader':11s} {'pieces':>9s} {'file KB':>8s} {'check s':>8s} {'read s':>7s} "
        f"{'+MB':>6s} {'us/piece':>9s} {'KB/piece':>8s}  text"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for case in cases:
            n = args.units or largest_passing(case, folder)
            path = case.build(folder / f"{case.name}.{case.fmt}", n)
            data = path.read_bytes()
            start = time.process_time()
            try:
                check_limits(data, case.fmt, ReadLimits(), case.reader)
            except UnreadableFile as e:
                print(f"  ({case.name}: {n} pieces refused: {e})")
            checked = time.process_time() - start
            cost = read_cost(case, path)
            print(
                f"{case.name:28s} {case.reader:11s} {n:9,d} {len(data) / 1024:8.0f} {checked:8.2f} "
                f"{cost['cpu']:7.1f} {cost['added_mb']:6.0f} "
                f"{cost['cpu'] / n * 1e6:9.1f} {cost['added_mb'] * 1024 / n:8.2f}  {str(cost['chars'])[:60]}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
