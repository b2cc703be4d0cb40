"""Hydra glue shared by the commands that compose ``conf/`` (``sweep``, ``sweep.generate``,
``sweep.answers``, ``sweep.export``), so that no command imports another: where conf/ is
and what is registered before composing (``config``), the command line checked before
Hydra runs (``overrides``), and the device and CPU threads a job gets from its launcher
(``devices``).
"""
