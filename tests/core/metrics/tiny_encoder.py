"""A tiny random sentence-transformers encoder (2 layers, width 32) with the packaged
MiniLM's tokenizer: fast enough to train a few steps in a test; its vectors are noise."""

from __future__ import annotations

from pathlib import Path


def build_tiny_sentence_encoder(folder: Path, seed: int = 0) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from core.metrics.bertscore import packaged_minilm

    hf = folder / "hf"
    tokenizer = BertTokenizerFast.from_pretrained(str(packaged_minilm()))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(str(hf))
    tokenizer.save_pretrained(str(hf))
    transformer = models.Transformer(str(hf), max_seq_length=64)
    width = (
        getattr(transformer, "get_embedding_dimension", None)
        or transformer.get_word_embedding_dimension
    )
    pooling = models.Pooling(width(), "mean")
    out = folder / "encoder"
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(out))
    return out
