"""The GPU check's driver: the whole graph through :func:`pipeline.stages.run_stage`, then figures.

Runs every stage of :data:`pipeline.stages.STAGES` in order (no Dagster) under a fresh state
directory and prints, per stage, wall time and peak CUDA memory; then pretraining and QLoRA
tokens/s, model FLOPs utilization (MFU) and the export's round-trip check. The release gate
failing does not stop the check (it measures the path, not the score): export runs either way.

MFU = achieved model FLOP/s / peak FLOP/s, with model FLOPs per token = 6·N + 12·L·d·T
(PaLM appendix B; nanoGPT ``estimate_mfu``): N parameters (tied embeddings counted once: the
output projection's matmul), L layers, d width, T tokens per sequence. The peak is the H200's
989 TFLOP/s dense bf16 datasheet figure (``--peak-tflops``); the check also times an 8192³ bf16
matmul so the achievable peak sits beside it. For QLoRA the same 6·N convention is used although
the frozen 4-bit base gets no weight gradients (≈4·N useful) and gradient checkpointing recomputes
the forward pass (≈8·N executed): the figure compares runs, it is not a hardware count.

Run through ``tools/gpu_check.sh``; ``--allow-cpu`` runs it without CUDA (a smoke test of the path).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("gpu_check")

#: H200 SXM dense bf16 tensor-core peak, TFLOP/s (NVIDIA datasheet; 1979 is with 2:4 sparsity)
H200_BF16_DENSE_TFLOPS = 989.0


def flops_per_token(params: int, layers: int, width: int, seq: int) -> float:
    """Training FLOPs per token, 6·N + 12·L·d·T (forward + backward; PaLM appendix B)."""
    return 6.0 * params + 12.0 * layers * width * seq


def mfu(tokens_per_s: float, params: int, layers: int, width: int, seq: int, peak_tflops: float) -> float:
    """Model FLOPs utilization in [0, 1]: ``tokens_per_s`` · :func:`flops_per_token` / peak."""
    return tokens_per_s * flops_per_token(params, layers, width, seq) / (peak_tflops * 1e12)


def matmul_tflops(n: int = 8192, reps: int = 10) -> float:
    """TFLOP/s of an ``n``³ bf16 matmul on CUDA (mean of ``reps`` after 3 warm-ups)."""
    import torch

    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        a @ b
    torch.cuda.synchronize()
    return 2 * n**3 * reps / (time.perf_counter() - start) / 1e12


class _Timer:
    """Wraps module functions to add up their wall time (CUDA synchronized) under a label."""

    def __init__(self, cuda: bool) -> None:
        self.cuda = cuda
        self.seconds: dict[str, float] = {}

    def wrap(self, module: Any, name: str, label: str) -> None:
        original: Callable[..., Any] = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            self._sync()
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self._sync()
                self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - start

        setattr(module, name, timed)

    def _sync(self) -> None:
        if self.cuda:
            import torch

            torch.cuda.synchronize()


def run_check(recipe: str, state: Path, report_path: Path, peak_tflops: float) -> dict[str, Any]:
    """Run all stages under ``state``; write the report JSON to ``report_path`` after every stage.

    Returns:
        the report: ``stages`` (seconds, peak memory, status per stage) and ``figures``.
    """
    import torch

    import pipeline.base_model as base_model
    from pipeline.errors import PipelineError
    from pipeline.stages import STAGES, _verification_problem, run_stage

    cuda = torch.cuda.is_available()
    timer = _Timer(cuda)
    # pretrain() builds its token blocks first (CPU: the program stream + tokenizer): time both so
    # tokens/s counts the optimizer loop alone
    timer.wrap(base_model, "pretrain", "pretrain")
    timer.wrap(base_model, "stream_blocks", "pretrain_data")
    timer.wrap(base_model, "_blocks", "pretrain_data")
    report: dict[str, Any] = {
        "recipe": recipe, "state": str(state), "torch": torch.__version__, "cuda": cuda,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu", "peak_tflops": peak_tflops,
        "stages": {}, "figures": {}}
    if cuda:
        report["matmul_tflops_8192"] = round(matmul_tflops(), 1)
        log.info("bf16 8192^3 matmul: %.0f TFLOP/s", report["matmul_tflops_8192"])
    results: dict[str, Any] = {}
    for name in STAGES:
        if cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        entry: dict[str, Any] = {}
        try:
            results[name] = result = run_stage(name, recipe, state)
            entry["status"] = "ok"
            problem = _verification_problem(result)
            if problem:
                entry["status"], entry["problem"] = "verification failed", problem
        except PipelineError as exc:
            entry["status"], entry["problem"] = "failed", str(exc).splitlines()[0]
        entry["seconds"] = round(time.perf_counter() - start, 1)
        if cuda:
            entry["peak_allocated_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
            entry["peak_reserved_gib"] = round(torch.cuda.max_memory_reserved() / 2**30, 2)
        report["stages"][name] = entry
        log.info("stage %s: %s", name, entry)
        report["figures"] = figures(results, timer.seconds, recipe, peak_tflops)
        report_path.write_text(json.dumps(report, indent=2, default=str))
        if entry["status"] == "failed" or (entry["status"] != "ok" and name != "eval_report"):
            break  # the release gate may fail (export still runs); anything else stops the check
    return report


def figures(results: dict[str, Any], seconds: dict[str, float], recipe: str, peak_tflops: float) -> dict[str, Any]:
    """Tokens/s, MFU and the export check from the stage results so far."""
    from pipeline.base_model import BaseModelConfig
    from pipeline.recipes import stage_config
    from pipeline.train import TrainConfig

    out: dict[str, Any] = {}
    base = results.get("base_model")
    if base is None:
        return out
    bcfg = stage_config(BaseModelConfig, "base_model", recipe, {})
    params = int(base["params"] or 0)
    out["params"] = params
    loop = seconds.get("pretrain", 0.0) - seconds.get("pretrain_data", 0.0)
    if base["pretrain_tokens"] and loop > 0:
        tps = base["pretrain_tokens"] / loop
        out["pretrain"] = {
            "tokens": base["pretrain_tokens"], "loop_seconds": round(loop, 1),
            "data_seconds": round(seconds.get("pretrain_data", 0.0), 1), "tokens_per_s": round(tps),
            "mfu": round(mfu(tps, params, bcfg.num_layers, bcfg.hidden_size, bcfg.pretrain_block_size,
                             peak_tflops), 4),
            "final_loss": base["pretrain_losses"][-1] if base["pretrain_losses"] else None}
    adapter = results.get("qlora_adapter")
    if adapter is not None:
        tcfg = stage_config(TrainConfig, "train", recipe, {})
        tps = float(adapter["tokens_per_s"])
        out["qlora"] = {
            "tokens": adapter["tokens"], "steps": adapter["steps"], "tokens_per_s": round(tps),
            "mfu_6n": round(mfu(tps, params, bcfg.num_layers, bcfg.hidden_size, tcfg.max_length, peak_tflops), 4),
            "quantized": adapter["quantized"], "device": adapter["device"],
            "train_loss": adapter["train_loss"], "eval_loss": adapter["eval_loss"]}
    report = results.get("eval_report")
    if report is not None:
        out["eval"] = {"passed": report["passed"], "adapter_pass_at_1": report["adapter"]["pass_at_1"],
                       "base_pass_at_1": report["base"]["pass_at_1"]}
    export = results.get("exported_model")
    if export is not None:
        out["export"] = {"verify": export["verify"], "published": export["published"], "path": export["path"]}
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.gpu_check [--recipe R] [--state DIR] [--report FILE] [--allow-cpu]``.

    Exit status: 0 when every stage ran and the export's round trip passed; 1 otherwise;
    2 without CUDA (unless ``--allow-cpu``).
    """
    parser = argparse.ArgumentParser(prog="python -m tools.gpu_check", description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default="cuda-check", help="recipe name or YAML path (default cuda-check)")
    parser.add_argument("--state", type=Path, default=Path("/tmp/vox-gpu-check"), help="fresh state directory")
    parser.add_argument("--report", type=Path, default=Path("gpu_check.json"), help="report JSON path")
    parser.add_argument("--peak-tflops", type=float, default=H200_BF16_DENSE_TFLOPS,
                        help="peak dense bf16 TFLOP/s for MFU (default: H200 datasheet, 989)")
    parser.add_argument("--allow-cpu", action="store_true", help="run without CUDA (smoke test of the path)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stdout)
    import torch

    if not torch.cuda.is_available() and not args.allow_cpu:
        print("error: no CUDA device (torch.cuda.is_available() is False); --allow-cpu runs the path on CPU")
        return 2
    os.environ.setdefault("VOX_TORCH_THREADS", str(os.cpu_count() or 2))
    args.report.parent.mkdir(parents=True, exist_ok=True)
    report = run_check(args.recipe, args.state, args.report, args.peak_tflops)
    print(summary(report))
    verify = (report["figures"].get("export") or {}).get("verify") or {}
    return 0 if verify.get("passed") else 1


def summary(report: dict[str, Any]) -> str:
    """The report as the lines the shell script prints (and the recipe file records)."""
    lines = [f"device: {report['device']}, torch {report['torch']}"]
    if "matmul_tflops_8192" in report:
        lines.append(f"bf16 8192^3 matmul: {report['matmul_tflops_8192']} TFLOP/s "
                     f"(datasheet peak used for MFU: {report['peak_tflops']:.0f})")
    for name, entry in report["stages"].items():
        mem = f", peak {entry['peak_allocated_gib']} GiB allocated / {entry['peak_reserved_gib']} GiB reserved" \
            if "peak_allocated_gib" in entry else ""
        problem = f" ({entry['problem']})" if "problem" in entry else ""
        lines.append(f"stage {name}: {entry['status']}{problem}, {entry['seconds']} s{mem}")
    fig = report["figures"]
    if "params" in fig:
        lines.append(f"base params: {fig['params'] / 1e6:.1f}M")
    if "pretrain" in fig:
        p = fig["pretrain"]
        lines.append(f"pretrain: {p['tokens_per_s']} tokens/s over {p['tokens']} tokens ({p['loop_seconds']} s loop, "
                     f"{p['data_seconds']} s data), MFU {p['mfu']:.1%}, final loss {p['final_loss']}")
    if "qlora" in fig:
        q = fig["qlora"]
        lines.append(f"qlora: {q['tokens_per_s']} tokens/s over {q['tokens']} tokens ({q['steps']} steps, 4-bit "
                     f"{q['quantized']}, {q['device']}), MFU(6N) {q['mfu_6n']:.1%}, train loss {q['train_loss']}, "
                     f"eval loss {q['eval_loss']}")
    if "eval" in fig:
        e = fig["eval"]
        lines.append(f"eval: adapter pass@1 {e['adapter_pass_at_1']:.3f}, base {e['base_pass_at_1']:.3f}, "
                     f"gate passed {e['passed']}")
    if "export" in fig:
        v = fig["export"]["verify"] or {}
        lines.append(f"export check: passed {v.get('passed')}, max |logit diff| {v.get('max_logit_diff')}, "
                     f"greedy tokens equal {v.get('tokens_equal')}, published {fig['export']['published']}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
