"""Texts to float32 vectors: the sentence-transformers embedder with its torch and ONNX
Runtime backends, the on-disk embedding cache, and the one-time ONNX export.
"""
