"""sweep: find the chunking configuration that retrieves best on your data, with evidence."""

__version__ = "0.1.0"
