"""Build a tiny random xCOMET checkpoint in unbabel-comet's own layout, offline.

Run it with the Python of an environment that has unbabel-comet (it imports ``comet``,
``transformers<5`` and ``pytorch_lightning``, never TailLens):

    /path/to/comet-env/bin/python benchmarks/build_tiny_xcomet.py OUT_DIR

OUT_DIR gets ``encoder/`` (a 2-layer XLM-RoBERTa-XL config and a BPE tokenizer trained
with ``tokenizers`` on a few sentences) and ``xcomet/`` (``hparams.yaml`` and
``checkpoints/model.ckpt``, as ``Unbabel/XCOMET-XL`` ships them), so that
``comet.load_from_checkpoint`` loads it through its real code path and ``predict`` returns
scores and error spans. The weights are random: the scores are noise; what it checks is
that TailLens drives the real package end to end (``references qe --qe-python``).
"""

from __future__ import annotations

import sys
from pathlib import Path

SENTENCES = [
    "Paris is the capital of France.",
    "Parigi è la capitale della Francia.",
    "París es la capital de Francia.",
    "Anne Hidalgo was born in San Fernando, Spain.",
    "Anne Hidalgo è nata a San Fernando, in Spagna.",
    "Anne Hidalgo nació en San Fernando, España.",
]


def main(out: Path) -> None:
    import pytorch_lightning
    import torch
    import yaml
    from comet.models import XCOMETMetric
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import XLMRobertaTokenizerFast, XLMRobertaXLConfig

    encoder = out / "encoder"
    encoder.mkdir(parents=True, exist_ok=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    raw = Tokenizer(models.BPE(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(
        SENTENCES,
        trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    raw.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tokenizer = XLMRobertaTokenizerFast(
        tokenizer_object=raw,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )
    tokenizer.save_pretrained(encoder)
    XLMRobertaXLConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=514,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
    ).save_pretrained(encoder)

    torch.manual_seed(0)
    model = XCOMETMetric(
        encoder_model="XLM-RoBERTa-XL",
        pretrained_model=str(encoder),
        load_pretrained_weights=False,
        local_files_only=True,
        word_layer=2,
        hidden_sizes=[16, 8],
    )
    folder = out / "xcomet"
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    hparams = dict(model.hparams)
    (folder / "hparams.yaml").write_text(yaml.safe_dump(hparams))
    torch.save(
        {
            "state_dict": model.state_dict(),
            "hyper_parameters": hparams,
            "pytorch-lightning_version": pytorch_lightning.__version__,
        },
        folder / "checkpoints" / "model.ckpt",
    )
    print(folder)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
