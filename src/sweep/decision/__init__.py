"""Deciding from the rows: paired tests against the best with Holm's correction, ties,
the recommended setting, per-type breakdowns and the agreement of two question sets.
"""
