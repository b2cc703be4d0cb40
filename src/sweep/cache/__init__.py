"""The ``sweep.cache`` command (``python -m sweep.cache``, in ``__main__``): show or clear
the embedding cache (:mod:`sweep.embedding.cache`) and the pictures kept beside it."""
