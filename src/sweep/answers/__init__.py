"""The ``sweep.answers`` command (``python -m sweep.answers``; ``__main__`` and
``answering``): judge the answers an LLM gives from a setting's retrieved chunks: prompts,
verdicts, the diagnosis of each query, per-setting rates and the check of the judges."""
