"""The ``sweep.export`` command (``python -m sweep.export``, in ``__main__``): taking a
sweep's setting home. The job is picked by :mod:`sweep.reporting.selection`; its chunks with
exact offsets (``chunks``), a runnable splitter module for the framework you deploy
(``modules``, with the boundary agreement measured by ``agreement``) and its Hydra config
(``hydrafile``)."""
