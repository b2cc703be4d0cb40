"""Rankings to scores: each relevance unit credited once, at the first rank that earns
it (so no duplicate chunk inflates a score), the score table, bootstrap intervals,
per-query arrays for the tests, and retrieval diagnostics.
"""
