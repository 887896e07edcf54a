"""Name-copying probe of a causal LM (pipeline.copy_probe): NLL of name tokens on repeat vs first occurrence.

Usage: ``.venv/bin/python bench/copying.py [MODEL_DIR ...] [--docs N]`` (default: the state's base model
and latest export). Prints one line per model; a model that copies names from its context has a repeat
NLL far below its first-occurrence NLL (see the module docstring of pipeline.copy_probe for figures).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from pipeline import paths
    from pipeline.copy_probe import PROBE_DOCS, probe_copying

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path, help="model directories (default: base + latest export)")
    parser.add_argument("--docs", type=int, default=PROBE_DOCS, help=f"documents to score (default {PROBE_DOCS})")
    args = parser.parse_args(argv)
    models = list(args.models)
    if not models:
        base = paths.artifacts_dir("base_model", create=False) / "model"
        export = paths.latest_export(require_passed=False)
        models = [m for m in (base, export) if m is not None and (m / "config.json").is_file()]
    if not models:
        print("no model: pass a model directory, or run `make run` first", file=sys.stderr)
        return 2
    for path in models:
        if not (path / "config.json").is_file():
            print(f"{path}: no config.json (not a model directory)", file=sys.stderr)
            return 2
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path).eval()
        start = time.perf_counter()
        probe = probe_copying(model, tok, docs=args.docs)
        print(f"{path}: {probe.summary()}; gain {probe.gain:.2f} nats over {probe.repeat_tokens} repeat / "
              f"{probe.first_tokens} first tokens, {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
