"""Texts to float32 vectors: the sentence-transformers embedder (``embedder``), one file
per backend (``torch_backend``, ``onnx_backend``, ``openvino_backend``, picked by name in
``backends``), late chunking (``late``), the on-disk embedding cache (``cache``) and any
embedder behind it (``cached``), the one-time ONNX export (``onnx_export``), and every
exception of the stage (``errors``). What an embedder must provide is
``sweep.core.protocols.Embedder``: ``embed_documents``, ``embed_queries``, ``identity``.
"""
