"""The stage contract's result: a frozen record every stage returns and writes as ``result.json``.

Every pipeline stage is ``run(config, inputs, out_dir) -> StageResult`` (see
:mod:`pipeline.stages`). The result names the stage, the data version of what it wrote (the
Dagster data version; for the corpus, the same string that keys training runs and MLflow), and a
JSON-able payload. Dagster assets, ``python -m pipeline.stages`` and ``assets/main.py`` read
stage outputs only through :meth:`StageResult.read`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import DataError

RESULT_FILE = "result.json"


@dataclass(frozen=True)
class StageResult:
    """What one stage produced.

    Attributes:
        stage: the stage (= Dagster asset) name, e.g. ``"qlora_adapter"``.
        version: data version of the output (hex digest; ``""`` when the stage has none).
        data: the stage's own result as plain JSON values (e.g. ``dataclasses.asdict(TrainResult)``).
    """

    stage: str
    version: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``data.get(key, default)``."""
        return self.data.get(key, default)

    def write(self, out_dir: Path) -> Path:
        """Write ``out_dir/result.json`` atomically (:func:`pipeline.atomic.write_json`)."""
        from pipeline import atomic

        out_dir.mkdir(parents=True, exist_ok=True)
        return atomic.write_json(out_dir / RESULT_FILE, {"stage": self.stage, "version": self.version,
                                                         "data": self.data}, default=str)

    @classmethod
    def read(cls, out_dir: Path, stage: str | None = None) -> StageResult:
        """The result last written to ``out_dir`` (by ``stage``, default the folder's name).

        Raises:
            DataError: no result yet, or an unreadable or foreign one (says which asset to materialize).
        """
        stage = stage or out_dir.name
        path = out_dir / RESULT_FILE
        if not path.is_file():
            raise DataError(f"{path} is missing: materialize the `{stage}` asset first")
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise DataError(f"{path}: unreadable ({exc}); materialize `{stage}` again") from exc
        if not isinstance(raw, dict) or raw.get("stage") != stage or not isinstance(raw.get("data"), dict):
            raise DataError(f"{path}: not a `{stage}` result (written by an older version?); "
                            f"materialize `{stage}` again")
        return cls(stage=stage, version=str(raw.get("version", "")), data=raw["data"])
