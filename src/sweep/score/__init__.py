"""The ``sweep.score`` command (``python -m sweep.score``, in ``__main__``): score any
retriever's run file with :mod:`sweep.scoring`."""
