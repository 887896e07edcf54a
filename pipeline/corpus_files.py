"""Corpus files: Arrow schemas, atomic Parquet writes, and readers.

Every write goes through :mod:`pipeline.atomic` (a temporary file in the target directory moved into
place with ``os.replace``), so an interrupted materialization never leaves a half-written file. Parquet
output is deterministic: the same rows give byte-identical files (fixed schema, compression,
row-group size; no timestamps).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pipeline import atomic
from pipeline.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa

#: bump when a column is added, removed or changes meaning (stored in Parquet metadata and manifest)
SCHEMA_VERSION: Final = "1.0"

#: columns of ``train.parquet`` / ``heldout.parquet`` (the corpus data contract)
CORPUS_COLUMNS: Final = ("id", "instance_id", "split", "source", "family", "construct", "difficulty",
                         "seed", "prompt", "response", "messages")
#: columns of the generated/gated pair tables (pre-mix: no split/messages, plus theme and repair info)
PAIR_COLUMNS: Final = ("id", "instance_id", "source", "family", "construct", "difficulty", "seed", "theme",
                       "prompt", "response", "broken", "expect_code")
#: columns of the gate's rejection table
REJECTION_COLUMNS: Final = ("id", "source", "family", "construct", "reason", "code", "line", "col", "message")


def corpus_version(train_sha256: str, heldout_sha256: str) -> str:
    """The corpus's one version: 16 hex chars of sha256 over both split files' sha256 hex digests.

    Used for the manifest, the ``corpus`` asset's data version, the training fingerprint and the
    MLflow param (all read it from :func:`pipeline.corpus_io.load_corpus` or the manifest).
    """
    return hashlib.sha256((train_sha256 + heldout_sha256).encode()).hexdigest()[:16]


def _schema(kind: str) -> pa.Schema:
    import pyarrow as pa

    s, i64 = pa.string(), pa.int64()
    by_kind: dict[str, list[tuple[str, pa.DataType]]] = {
        "corpus": [("id", s), ("instance_id", s), ("split", s), ("source", s), ("family", s), ("construct", s),
                   ("difficulty", i64), ("seed", i64), ("prompt", s), ("response", s),
                   ("messages", pa.list_(pa.struct([("role", s), ("content", s)])))],
        "pairs": [("id", s), ("instance_id", s), ("source", s), ("family", s), ("construct", s),
                  ("difficulty", i64), ("seed", i64), ("theme", s), ("prompt", s), ("response", s),
                  ("broken", s), ("expect_code", s)],
        "rejections": [("id", s), ("source", s), ("family", s), ("construct", s), ("reason", s), ("code", s),
                       ("line", i64), ("col", i64), ("message", s)],
    }
    return pa.schema(by_kind[kind], metadata={"vox.schema_version": SCHEMA_VERSION, "vox.table": kind})


def write_parquet(rows: Sequence[dict[str, Any]], path: Path, kind: str) -> str:
    """Write ``rows`` (dicts with the ``kind`` table's columns) to ``path`` atomically.

    Args:
        rows: one dict per row; extra keys are ignored.
        path: the destination ``.parquet`` file.
        kind: ``"corpus"``, ``"pairs"`` or ``"rejections"``.

    Returns:
        The sha256 hex digest of the written file.

    Raises:
        DataError: a row lacks a column or has a value of the wrong type.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema(kind)
    try:
        table = pa.Table.from_pylist([{n: r.get(n) for n in schema.names} for r in rows], schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise DataError(f"{path}: rows do not fit the {kind} schema: {exc}") from exc
    with atomic.staged(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", row_group_size=4096, write_statistics=False)
        digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    return digest


def read_rows(path: Path, columns: Iterable[str] | None = None, kind: str | None = None) -> list[dict[str, Any]]:
    """Rows of a Parquet file as dicts.

    Args:
        path: the Parquet file.
        columns: read only these columns (default: all, or the ``kind`` table's columns).
        kind: when given (``"corpus"``, ``"pairs"``, ``"rejections"``), the file must have that
            table's columns; only those are read.

    Raises:
        DataError: the file is missing (naming the asset that writes it), unreadable, or lacks a
            column of ``kind`` (each message says to materialize that asset again).
    """
    import pyarrow.parquet as pq

    asset = path.parent.name
    if not path.is_file():
        raise DataError(f"{path} is missing: materialize the asset that writes it ({asset}) first")
    try:
        if kind is not None and columns is None:
            names = pq.read_schema(path).names
            missing = [c for c in _schema(kind).names if c not in names]
            if missing:
                raise DataError(f"{path}: not a {kind} table (missing column(s) {', '.join(missing)}); "
                                f"materialize {asset} again")
            columns = _schema(kind).names
        return pq.read_table(path, columns=list(columns) if columns else None).to_pylist()
    except DataError:
        raise
    except Exception as exc:  # pyarrow raises several unrelated types for bad files
        raise DataError(f"{path}: unreadable Parquet ({exc}); materialize {asset} again") from exc


def schema_version(path: Path) -> str | None:
    """The ``vox.schema_version`` stored in a Parquet file's schema metadata, if any."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    value = meta.get(b"vox.schema_version")
    return value.decode() if value else None
