"""The ``sweep.report`` command (``python -m sweep.report``, in ``__main__``): rebuild or
compare sweep reports; the work is :mod:`sweep.reporting`'s."""
