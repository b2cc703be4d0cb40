"""Where the checkout is, for tests that read its corpora, fixtures and bench scripts."""

from pathlib import Path

#: The repository's root (corpora/ there links to the package's bundled corpora).
ROOT = Path(__file__).resolve().parents[1]
