"""The documentation: a short README that links into docs/, and a mkdocs site that builds cleanly."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paths import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"
MKDOCS_YML = ROOT / "mkdocs.yml"

#: [text](target) and [text](target "title"); images too. Not inside code.
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def _relative_links(path: Path) -> list[str]:
    text = _CODE_SPAN.sub("", _FENCE.sub("", path.read_text(encoding="utf-8")))
    links = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "//")):
            continue  # http:, mailto:, an anchor on the same page
        links.append(target)
    return links


def test_readme_is_a_front_page_with_the_blocks_ci_and_tests_extract():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 260, "README.md is the front page: move detail into docs/"
    for marker in (
        "<!-- run-command -->",
        "<!-- test-command -->",
        "<!-- python-example -->",
        "<!-- /python-example -->",
    ):
        assert marker in text, f"README.md lost its {marker} marker"
    for marker in ("run-command", "test-command"):
        block = re.search(rf"<!-- {marker} -->\n```bash\n(.+?)\n```", text)
        assert block and "python -m" in block.group(1), f"no bash block after <!-- {marker} -->"
    assert "## From Python" in text


@pytest.mark.parametrize("path", [README, *_pages()], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file(path):
    missing = []
    for target in _relative_links(path):
        file = target.split("#", 1)[0].split("?", 1)[0]
        if file and not (path.parent / file).exists():
            missing.append(target)
    assert not missing, f"{path.relative_to(ROOT)} links to missing files: {missing}"


def _nav_pages(node) -> list[str]:
    if isinstance(node, str):
        return [node] if node.endswith(".md") else []
    if isinstance(node, list):
        return [p for item in node for p in _nav_pages(item)]
    if isinstance(node, dict):
        return [p for value in node.values() for p in _nav_pages(value)]
    return []


def _nav() -> list[str]:
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may hold !!python/name: and !ENV tags; the nav needs neither.
    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load(MKDOCS_YML.read_text(encoding="utf-8"), Loader=Loader)
    return _nav_pages(config.get("nav", []))


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_exists():
    nav = _nav()
    pages = {p.relative_to(DOCS).as_posix() for p in _pages()}
    assert pages - set(nav) == set(), "pages missing from the nav of mkdocs.yml"
    assert set(nav) - pages == set(), "nav entries of mkdocs.yml with no page in docs/"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_mkdocs_build_is_strict_clean(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(MKDOCS_YML),
            "-d",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "reference" / "core" / "index.html").is_file()
