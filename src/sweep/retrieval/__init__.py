"""Chunks to rankings: FAISS indexes (flat, HNSW, IVF), dense, BM25 and hybrid
retrievers, and cross-encoder re-ranking.
"""
