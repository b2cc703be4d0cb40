"""The ``python -m sweep`` command's package (``sweep/__main__.py`` is its entry): one
Hydra job per setting, the checks before the first job, the prewarm pass, the launchers,
and the report at the end. Device placement and the Hydra glue it shares with the other
Hydra commands are in :mod:`sweep.hydrakit`.
"""
