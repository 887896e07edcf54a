"""Verify a written corpus directory against its contract (used by the ``corpus`` asset check
and tests): schema version and columns, manifest counts and hashes, and a clean split."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pipeline.corpus_files import CORPUS_COLUMNS, SCHEMA_VERSION, read_rows, schema_version


def verify_corpus(root: Path) -> list[str]:
    """Problems found in ``root`` (empty when the corpus is sound).

    Checks: ``train.parquet``/``heldout.parquet``/``manifest.json`` exist; each Parquet file has
    the current schema version and exactly the corpus columns; manifest row counts and file
    hashes match; ``split`` values match the file; no ``instance_id`` occurs in both splits; no
    name of a held-out theme occurs in a train row; every row's messages are system/user/assistant
    with the user and assistant turns equal to ``prompt``/``response``.
    """
    from pipeline.mix import leaked_names

    problems: list[str] = []
    manifest_path = root / "manifest.json"
    if not manifest_path.is_file():
        return [f"{manifest_path} is missing"]
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [f"{manifest_path}: unreadable JSON ({exc}); materialize corpus again"]
    if not isinstance(manifest, dict):
        return [f"{manifest_path}: not a JSON object; materialize corpus again"]
    if manifest.get("schema_version") != SCHEMA_VERSION:
        problems.append(f"manifest schema_version {manifest.get('schema_version')!r} != {SCHEMA_VERSION!r}")
    rows: dict[str, list[dict]] = {}
    for split in ("train", "heldout"):
        path = root / f"{split}.parquet"
        if not path.is_file():
            problems.append(f"{path} is missing")
            continue
        try:
            version = schema_version(path)
            rows[split] = read_rows(path)
        except Exception as exc:  # pyarrow raises several unrelated types for bad files
            problems.append(f"{path}: unreadable Parquet ({exc})")
            continue
        if version != SCHEMA_VERSION:
            problems.append(f"{path.name}: schema version {version!r} != {SCHEMA_VERSION!r}")
        cols = tuple(rows[split][0]) if rows[split] else CORPUS_COLUMNS
        if cols != CORPUS_COLUMNS:
            problems.append(f"{path.name}: columns {cols} != {CORPUS_COLUMNS}")
            del rows[split]
            continue
        if manifest.get("rows", {}).get(split) != len(rows[split]):
            said = manifest.get("rows", {}).get(split)
            problems.append(f"{path.name}: {len(rows[split])} rows, manifest says {said}")
        want = manifest.get("files", {}).get(path.name, {}).get("sha256")
        if want != hashlib.sha256(path.read_bytes()).hexdigest():
            problems.append(f"{path.name}: sha256 differs from the manifest")
        for r in rows[split]:
            roles = [m["role"] for m in r["messages"]]
            if r["split"] != split:
                problems.append(f"row {r['id']}: split {r['split']!r} in {path.name}")
            if roles != ["system", "user", "assistant"] or r["messages"][1]["content"] != r["prompt"] \
                    or r["messages"][2]["content"] != r["response"]:
                problems.append(f"row {r['id']}: messages do not match prompt/response")
    if len(rows) == 2:
        shared = {r["instance_id"] for r in rows["train"]} & {r["instance_id"] for r in rows["heldout"]}
        if shared:
            problems.append(f"{len(shared)} instance(s) in both splits, e.g. {sorted(shared)[0]}")
        leaked = leaked_names(rows["train"], manifest.get("heldout_themes", []))
        if leaked:
            problems.append(f"held-out names in train: {', '.join(sorted(leaked))}")
    return problems[:50]
