"""Dagster-free pipeline stages: system prompt, generators, gate, mix, train, export, evaluate.

One module per stage; each exposes typed functions that `assets/` wires together.
"""

import logging as _logging
import warnings as _warnings

# peft (0.x) reads `model.is_gradient_checkpointing` when it wraps or loads an adapter, which
# transformers 5 deprecates with a FutureWarning on every load: a line in every eval, export and
# `vox serve --adapter` that names no step of ours and that a user cannot act on (a new-user trial
# read it as part of the job's output). Only that message is silenced.
_warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated", category=FutureWarning)

# bitsandbytes' CPU backend tries to load an optimized 4-bit kernel from the Hugging Face hub's
# `kernels` package and logs a warning when it is not installed ("Failed to load CPU
# gemm_4bit_forward from kernels-community ... pip install kernels"), then uses its built-in path.
# That package downloads kernels at run time, which this project never does (no internet); the
# line is noise in every QLoRA run on CPU (a new-user trial quoted it). Only that logger is quietened.
_logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(_logging.ERROR)
