"""Build an evaluation set from a corpus with an LLM (``python -m sweep.generate``).

``__main__`` reads the command line and ``generating`` runs one generation from the
composed config.

Modules, one job each: ``settings`` (the config node), ``passages`` (windows
to write from), ``prompts`` and ``replies`` (what is asked and the answer
contracts), ``kinds`` (which passages each question kind uses),
``neighbours`` (embedding neighbours and shared entities), ``spans``
(quotes to offsets), ``filters`` (copied wording, near duplicates), ``run``
(the rounds and stages), ``runreport`` and ``output`` (what is written).
"""
