"""Training throughput: our pipeline (``pipeline.train.train``) vs a bare ``trl.SFTTrainer``.

Both runs train one epoch over the same rows with the same model (a cpu-tiny-sized bootstrap),
the same 4-bit NF4 + LoRA settings and the same SFTConfig values; the only differences are
ours: run fingerprinting, checkpoint bookkeeping and MLflow logging. Prints tokens/s of each
(non-pad tokens / trainer runtime), their ratio (target >= 0.95x) and the fraction of non-pad
tokens in our batches (target >= 95%), next to what plain padded batching would give.

    .venv/bin/python bench/train.py [--rows 600] [--recipe cpu-tiny] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.train import SFTData, TrainConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def corpus_rows(rows: int) -> tuple[list[dict], list[dict], str]:
    """Train rows from the built corpus if there is one, else the sample corpus."""
    from pipeline.corpus_io import load_corpus
    from pipeline.errors import DataError
    from pipeline.sample_corpus import sample_rows

    try:
        c = load_corpus()
        return c.train_rows()[:rows], c.heldout_rows(), f"corpus {c.version}"
    except DataError:
        sample = sample_rows(rows * 2)
        return [r for r in sample if r["split"] == "train"][:rows], [], "sample corpus (no corpus built)"


def bare_sft(cfg: TrainConfig, data: SFTData, out: Path) -> float:
    """A plain SFTTrainer run with the same settings; returns non-pad tokens/s."""
    from peft import LoraConfig, prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig
    from trl import SFTConfig, SFTTrainer

    from pipeline.quant import fast_bf16, torch_dtype

    compute = torch_dtype(cfg.compute_dtype, "cpu")  # the recipe's values, resolved as the recipe says
    bf16 = cfg.bf16 == "on" or (cfg.bf16 == "auto" and fast_bf16("cpu"))
    tok = AutoTokenizer.from_pretrained(cfg.base_model)
    model = AutoModelForCausalLM.from_pretrained(
        cfg.base_model, dtype=torch_dtype("auto", "cpu"), device_map={"": "cpu"},
        quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                               bnb_4bit_use_double_quant=cfg.double_quant,
                                               bnb_4bit_compute_dtype=compute))
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    args = SFTConfig(
        output_dir=str(out), num_train_epochs=1, max_steps=-1, per_device_train_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.grad_accum, learning_rate=cfg.learning_rate, warmup_steps=cfg.warmup_ratio,
        lr_scheduler_type=cfg.lr_scheduler, max_length=cfg.max_length, packing=True, packing_strategy="bfd",
        padding_free=True, assistant_only_loss=True, logging_steps=cfg.logging_steps, report_to="none",
        save_strategy="steps", save_steps=cfg.save_steps, save_total_limit=cfg.save_total_limit,
        include_num_input_tokens_seen="non_padding", seed=cfg.seed, bf16=bf16, use_cpu=True,
        gradient_checkpointing=False, dataloader_pin_memory=False, disable_tqdm=True)
    lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=list(cfg.target_modules), task_type="CAUSAL_LM")
    trainer = SFTTrainer(model=model, args=args, train_dataset=data.train, processing_class=tok, peft_config=lora)
    assert trainer.model is not None
    for p in trainer.model.parameters():  # same adapter dtype as ours (fp32 on CPU)
        if p.requires_grad:
            p.data = p.data.float()
    out_metrics = trainer.train().metrics
    return trainer.state.num_input_tokens_seen / out_metrics["train_runtime"]


def ours(cfg: TrainConfig, data: SFTData, out: Path) -> tuple[float, float]:
    """Our pipeline; returns (non-pad tokens/s, non-pad fraction of its batches)."""
    from pipeline.tracking import Tracker
    from pipeline.train import build_trainer, train

    res = train(cfg, data, out, tracker=Tracker(f"sqlite:///{out / 'mlflow.db'}"))
    trainer = build_trainer(cfg, data, out / "probe")
    pad = trainer.processing_class.pad_token_id
    real = total = 0
    for batch in trainer.get_train_dataloader():
        ids = batch["input_ids"]
        total += ids.numel()
        real += int(batch["attention_mask"].sum()) if "attention_mask" in batch else int((ids != pad).sum())
    return res.tokens_per_s, real / total


def padded_fraction(data: SFTData, tokenizer: Any, batch_size: int, max_length: int) -> float:
    """Non-pad fraction plain padded batching (no packing) would have on the same rows."""
    lens = [min(len(tokenizer.apply_chat_template(m, tokenize=True, return_dict=True)["input_ids"]), max_length)
            for m in data.train["messages"]]
    real = total = 0
    for i in range(0, len(lens), batch_size):
        chunk = lens[i : i + batch_size]
        real += sum(chunk)
        total += max(chunk) * len(chunk)
    return real / total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=600, help="rows in the epoch (bounds the bench's time)")
    parser.add_argument("--recipe", default="cpu-tiny")
    parser.add_argument("--repeats", type=int, default=2, help="alternating runs per side (the CPU is shared: noise)")
    args = parser.parse_args()

    import torch
    from transformers import AutoTokenizer

    torch.set_num_threads(int(os.environ.get("VOX_TORCH_THREADS", "2")))
    from pipeline.base_model import BaseModelConfig, build_base_model
    from pipeline.recipes import stage_config
    from pipeline.train import TrainConfig, make_sft_data

    train_rows, _, source = corpus_rows(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["VOX_STATE_DIR"] = str(root / "state")
        bcfg = replace(stage_config(BaseModelConfig, "base_model", args.recipe), pretrain_steps=1, pretrain_warmup=1)
        base = build_base_model(bcfg, train_rows, root / "base", "bench")
        cfg = replace(stage_config(TrainConfig, "train", args.recipe), base_model=base.model, max_steps=-1, epochs=1.0,
                      max_train_rows=0, save_steps=10_000, eval_steps=10_000)
        data = make_sft_data(train_rows, [], cfg, "bench", base.fingerprint)
        print(f"bench/train.py: {len(train_rows)} rows from {source}; {(base.params or 0) / 1e6:.1f}M-param bootstrap; "
              f"QLoRA nf4 r={cfg.lora_r}; batch {cfg.batch_size} x {cfg.max_length} packed; torch threads "
              f"{torch.get_num_threads()}")
        bare_tps, our_tps, fractions = [], [], []
        for i in range(args.repeats):
            t = time.perf_counter()
            bare_tps.append(bare_sft(cfg, data, root / f"bare{i}"))
            print(f"  bare SFTTrainer run {i + 1}: {bare_tps[-1]:.0f} tok/s ({time.perf_counter() - t:.0f}s)")
            t = time.perf_counter()
            tps, frac = ours(cfg, data, root / f"ours{i}")
            our_tps.append(tps)
            fractions.append(frac)
            print(f"  our pipeline run {i + 1}:    {tps:.0f} tok/s ({time.perf_counter() - t:.0f}s)")
        padded = padded_fraction(data, AutoTokenizer.from_pretrained(base.model), cfg.batch_size, cfg.max_length)
    ratio = statistics.mean(our_tps) / statistics.mean(bare_tps)
    print(f"tokens/s: ours {statistics.mean(our_tps):.0f} vs bare SFTTrainer {statistics.mean(bare_tps):.0f} "
          f"-> {ratio:.3f}x (target >= 0.95x) {'OK' if ratio >= 0.95 else 'BELOW TARGET'}")
    print(f"non-pad token fraction: {min(fractions):.1%} packed padding-free (target >= 95%) "
          f"{'OK' if min(fractions) >= 0.95 else 'BELOW TARGET'}; plain padded batches would be {padded:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
