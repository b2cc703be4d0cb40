"""The ``sweep.check`` command (``python -m sweep.check``, in ``__main__``): fail CI when
retrieval got worse than a baseline sweep. It picks each sweep's job with
:mod:`sweep.reporting.selection` and tests the drop with :mod:`sweep.decision`."""
