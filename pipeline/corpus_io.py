"""The one corpus reader: both splits of ``artifacts_dir("corpus")`` and the corpus's one version.

The corpus stage writes ``train.parquet`` and ``heldout.parquet``; this module validates the
columns training needs, drops nothing silently, and computes the corpus version with
:func:`pipeline.corpus_files.corpus_version` over the files' bytes: the same string is the
``corpus`` asset's Dagster data version, the manifest's ``version``, part of the training
fingerprint and the MLflow ``corpus_version`` param.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import DataError

REQUIRED_COLUMNS = ("id", "split", "family", "prompt", "response", "messages")
SPLITS = ("train", "heldout")


@dataclass(frozen=True)
class Corpus:
    """Both splits as Arrow tables plus a version digest.

    Attributes:
        root: the directory read.
        train: the train split (``pyarrow.Table``).
        heldout: the held-out split (``pyarrow.Table``).
        version: :func:`pipeline.corpus_files.corpus_version` of both Parquet files.
    """

    root: Path
    train: Any
    heldout: Any
    version: str

    def train_rows(self) -> list[dict[str, Any]]:
        """The train split as a list of row dicts."""
        return self.train.to_pylist()

    def heldout_rows(self) -> list[dict[str, Any]]:
        """The held-out split as a list of row dicts."""
        return self.heldout.to_pylist()

    def summary(self) -> dict[str, Any]:
        """Row counts per split and per family (for model cards and metadata)."""
        fams: dict[str, int] = {}
        for fam in self.train.column("family").to_pylist():
            fams[fam] = fams.get(fam, 0) + 1
        return {"version": self.version, "train_rows": self.train.num_rows,
                "heldout_rows": self.heldout.num_rows, "train_families": dict(sorted(fams.items()))}


def load_corpus(root: Path | None = None) -> Corpus:
    """Load and validate ``root/{train,heldout}.parquet`` (default ``artifacts_dir("corpus")``).

    Raises:
        DataError: a file is missing (says to materialize ``corpus``), unreadable, lacks a
            required column, or the train split is empty.
    """
    import pyarrow.parquet as pq

    from pipeline.corpus_files import corpus_version
    from pipeline.paths import artifacts_dir

    root = root or artifacts_dir("corpus")
    tables = {}
    hashes: dict[str, str] = {}
    for split in SPLITS:
        path = root / f"{split}.parquet"
        if not path.is_file():
            raise DataError(f"{path} is missing: materialize the `corpus` asset first")
        try:
            hashes[split] = hashlib.sha256(path.read_bytes()).hexdigest()
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several unrelated types for bad files
            raise DataError(f"{path}: unreadable Parquet: {exc}") from exc
        missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
        if missing:
            raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
        tables[split] = table
    if tables["train"].num_rows == 0:
        raise DataError(f"{root / 'train.parquet'} has no rows")
    return Corpus(root=root, train=tables["train"], heldout=tables["heldout"],
                  version=corpus_version(hashes["train"], hashes["heldout"]))
