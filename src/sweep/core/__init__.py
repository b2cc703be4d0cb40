"""What every stage shares and no stage owns: the data model (``Document``, ``Query``,
``Chunk``, ``Hit``, ``Ranking``), the stage Protocols, measure names, the ``eval`` config,
offline tokenization, and small helpers (checks, one-line messages, atomic files, locks,
the config files a sweep folder keeps).
It imports no other package of sweep.
"""
