"""One setting end to end: chunk, embed, index, retrieve, re-rank and score, each step
returning a small frozen record, plus the retrieval latency per query.
"""
