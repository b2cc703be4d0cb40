"""The ``sweep.extract`` command (``python -m sweep.extract``, in ``__main__``): write the
text each document was read as, with the readers of :mod:`sweep.datasets`."""
