"""What a job saves: its result row (``row.json``), what the setting cost besides its
scores, and per-query traces of what was retrieved.
"""
