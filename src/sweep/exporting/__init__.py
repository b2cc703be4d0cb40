"""Taking a sweep's setting home: which job (``selection``), its chunks with exact offsets
(``chunks``), a runnable splitter module for the framework you deploy (``modules``, with
the boundary agreement measured by ``agreement``) and its Hydra config (``hydrafile``)."""
