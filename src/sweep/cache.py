"""``python -m sweep.cache``: show or clear the embedding cache."""

import sys

from sweep.embedding.cache import main

if __name__ == "__main__":
    sys.exit(main())
