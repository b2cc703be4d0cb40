"""``python -m sweep.embedding MODEL``: check that a model loads, show its identity."""

import sys

from sweep.embedding.embedder import main

if __name__ == "__main__":
    sys.exit(main())
