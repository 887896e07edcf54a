"""Dagster-free pipeline stages: system prompt, generators, gate, mix, train, export, evaluate.

One module per stage; each exposes typed functions that `assets/` wires together.
"""

import warnings as _warnings

# peft (0.x) reads `model.is_gradient_checkpointing` when it wraps or loads an adapter, which
# transformers 5 deprecates with a FutureWarning on every load: a line in every eval, export and
# `vox serve --adapter` that names no step of ours and that a user cannot act on (a new-user trial
# read it as part of the job's output). Only that message is silenced.
_warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated", category=FutureWarning)
