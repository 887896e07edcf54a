"""Corpus mix: dedup, weights, a leak-free split by theme, deterministic atomic Parquet, loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.corpus import CorpusConfig, build, corpus_config, gate, generate
from pipeline.corpus_check import verify_corpus
from pipeline.corpus_files import CORPUS_COLUMNS, SCHEMA_VERSION, schema_version, write_parquet
from pipeline.corpus_io import load_corpus
from pipeline.errors import DataError, RecipeError
from pipeline.generators.themes import THEME_BY_KEY, vocabulary
from pipeline.mix import MixConfig, leaked_names, mix, near_duplicates

SMALL = CorpusConfig(seed=5, pairs=320, size=1000, workers=1)


def _row(i: int, instance: str, prompt: str, response: str, source: str = "organic", theme: str = "library") -> dict:
    return {"id": f"r{i:03d}", "instance_id": instance, "source": source, "family": "functions", "construct": "c",
            "difficulty": 1, "seed": i, "theme": theme, "prompt": prompt, "response": response,
            "broken": None, "expect_code": None}


def _build(tmp: Path, cfg: CorpusConfig = SMALL) -> dict:
    g = generate(cfg, tmp / "gen")
    s = gate(cfg, Path(g["path"]), tmp / "gated", tmp / "rej")
    return build(cfg, Path(s["path"]), tmp / "corpus")


def test_near_duplicates_across_instances_only() -> None:
    body = " ".join(f"let v{i} = {i}" for i in range(40))
    rows = [_row(0, "a", "write it", body), _row(1, "b", "write it", body + " x"),
            _row(2, "a", "write it again", body + " y"), _row(3, "c", "other", "fn f() { }")]
    assert near_duplicates(rows, 0.9, seed=1) == {1}
    assert near_duplicates(rows, 1.0, seed=1) == set()


def test_mix_dedups_weights_and_splits() -> None:
    themes = ["library", "shop", "weather", "bank", "garden", "fleet", "clinic", "school", "music", "kitchen"]
    rows = [_row(i, f"i{i}", f"task {i} for {themes[i % 10]}", f"```vox\nlet n{i} = {i}\n```",
                 source="organic" if i % 4 else "preflight", theme=themes[i % 10]) for i in range(200)]
    rows.append(dict(rows[5], id="dup"))  # exact duplicate of r005
    cfg = MixConfig(seed=1, size=100, weights={"organic": 0.5, "preflight": 0.5}, heldout_fraction=0.2,
                    near_dup_threshold=1.0, max_chars=10_000)
    out = mix(rows, cfg, "SYSTEM")
    assert out.stats["exact_dups"] == 1
    everything = out.train + out.heldout
    assert len(everything) == 100
    assert sum(r["source"] == "preflight" for r in everything) == 50
    assert {r["instance_id"] for r in out.train}.isdisjoint({r["instance_id"] for r in out.heldout})
    assert out.heldout and out.heldout_themes
    assert not leaked_names(out.train, out.heldout_themes)
    assert all(r["messages"][0] == {"role": "system", "content": "SYSTEM"} for r in everything)
    with pytest.raises(DataError):
        mix([], cfg, "S")


def test_corpus_build_is_clean_deterministic_and_loadable(tmp_path: Path) -> None:
    m1 = _build(tmp_path / "one")
    m2 = _build(tmp_path / "two")
    for split in ("train", "heldout"):
        a = (tmp_path / "one/corpus" / f"{split}.parquet").read_bytes()
        assert a == (tmp_path / "two/corpus" / f"{split}.parquet").read_bytes()
        assert schema_version(tmp_path / "one/corpus" / f"{split}.parquet") == SCHEMA_VERSION
    assert m1["content_hash"] == m2["content_hash"] and m1["rows"]["heldout"] > 0
    assert verify_corpus(tmp_path / "one/corpus") == []
    assert m1["plot_png"].startswith(b"\x89PNG")
    data = load_corpus(tmp_path / "one/corpus")
    assert tuple(data.train.column_names) == CORPUS_COLUMNS
    assert data.train.num_rows == m1["rows"]["train"]
    assert set(data.heldout.column("split").to_pylist()) == {"heldout"}
    assert data.version == m1["version"] == m1["content_hash"][:16]  # one corpus version
    # every row derived from one program is on the same side
    sides: dict[str, str] = {}
    for split, table in (("train", data.train), ("heldout", data.heldout)):
        for iid in table.column("instance_id").to_pylist():
            assert sides.setdefault(iid, split) == split


def test_partitions_are_independent_and_together_are_the_whole_corpus(tmp_path: Path) -> None:
    """Each partition generated alone (any order, any subset) gives its share of the rows of one whole
    run; mixing the partitions' gated files writes the same corpus bytes as mixing one file (issue 13.1)."""
    from pipeline.generators import PARTITIONS, generate_pairs, plan

    gplan = plan(SMALL.pairs, SMALL.weights, SMALL.seed, SMALL.paraphrase_rate)
    whole = generate_pairs(gplan)
    parts = {k: generate_pairs(gplan, partition=k) for k in reversed(PARTITIONS)}
    assert sorted((p for rows in parts.values() for p in rows), key=lambda p: p.id) == sorted(whole, key=lambda p: p.id)
    assert {p.source for p in parts["preflight"]} == {"preflight"} and all(parts.values())
    assert all({p.family for p in parts[k]} == {k} for k in PARTITIONS if k != "preflight")
    assert generate_pairs(gplan, partition="web") == parts["web"]  # on its own, again: the same rows
    with pytest.raises(ValueError, match="unknown corpus partition 'webb'"):
        generate_pairs(gplan, partition="webb")
    gated = []
    for key in PARTITIONS:
        g, out = generate(SMALL, tmp_path / "gen" / key, key), tmp_path / "gated" / key
        gated.append(Path(gate(SMALL, Path(g["path"]), out, out, key)["path"]))
    build(SMALL, gated, tmp_path / "parts")
    _build(tmp_path / "one")
    for split in ("train", "heldout"):
        assert (tmp_path / "parts" / f"{split}.parquet").read_bytes() == \
            (tmp_path / "one/corpus" / f"{split}.parquet").read_bytes()


def test_verify_corpus_catches_tampering(tmp_path: Path) -> None:
    _build(tmp_path)
    root = tmp_path / "corpus"
    rows = load_corpus(root).heldout_rows()[:1]
    write_parquet([dict(rows[0], split="train")], root / "train.parquet", "corpus")
    problems = " ".join(verify_corpus(root))
    assert "sha256" in problems and "both splits" in problems


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "t.parquet"
    with pytest.raises(DataError):
        write_parquet([{"id": "a", "difficulty": "not an int"}], target, "corpus")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(DataError, match="materialize"):
        load_corpus(tmp_path)


def test_recipe_sections() -> None:
    cfg = corpus_config("cpu-tiny")
    assert cfg.pairs > 0 and set(cfg.weights) == {"organic", "synthetic_script", "synthetic_web", "preflight"}
    assert corpus_config("cuda-qlora").pairs > cfg.pairs
    with pytest.raises(RecipeError, match="unknown key"):
        corpus_config("cpu-tiny", {"colour": "red"})


@pytest.mark.parametrize("override, message", [
    ({"pairs": -5}, "corpus.pairs must be at least 1, got -5"),
    ({"workers": 0}, "corpus.workers must be at least 1"),
    ({"heldout_fraction": 1.5}, r"corpus.heldout_fraction must be in \[0, 1\), got 1.5"),
    ({"near_dup_threshold": 0.0}, "corpus.near_dup_threshold must be in"),
    ({"weights": [1, 2]}, "corpus.weights must map source names to numbers"),
    ({"weights": {"organic": 1, "nope": 2}}, "corpus.weights: unknown source.*nope"),
    ({"weights": {"organic": 0}}, "corpus.weights must be non-negative and not all zero"),
])
def test_recipe_values_out_of_range_name_the_file_and_key(override: dict, message: str) -> None:
    # caught when the config is built, not as a TypeError or an empty corpus later
    with pytest.raises(RecipeError, match=r"cpu-tiny\.yaml: " + message):
        corpus_config("cpu-tiny", override)


def test_interrupted_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow.parquet as pq

    target = tmp_path / "pairs.parquet"
    write_parquet([], target, "pairs")
    before = target.read_bytes()

    def crash(table: object, where: str, **kw: object) -> None:
        Path(where).write_bytes(b"PAR1 half")
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", crash)
    with pytest.raises(KeyboardInterrupt):
        write_parquet([], target, "pairs")
    assert target.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["pairs.parquet"]


def test_reading_the_wrong_or_a_corrupt_table_names_the_file(tmp_path: Path) -> None:
    from pipeline.corpus_files import read_rows

    corpus_rows = [dict(_row(0, "i0", "p", "r"), split="train", messages=[])]
    wrong = tmp_path / "gated_pairs" / "pairs.parquet"
    write_parquet(corpus_rows, wrong, "corpus")  # a corpus table where pairs are expected
    with pytest.raises(DataError, match=r"pairs\.parquet: not a pairs table \(missing column\(s\) theme"):
        read_rows(wrong, kind="pairs")
    with pytest.raises(DataError, match="not a pairs table"):
        build(SMALL, wrong, tmp_path / "corpus")
    wrong.write_bytes(wrong.read_bytes()[:100])  # truncated
    with pytest.raises(DataError, match=r"unreadable Parquet .*materialize gated_pairs again"):
        read_rows(wrong, kind="pairs")


def test_written_files_follow_the_umask(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        write_parquet([], tmp_path / "t.parquet", "pairs")
    finally:
        os.umask(old)
    assert (tmp_path / "t.parquet").stat().st_mode & 0o777 == 0o644


def test_verify_corpus_reports_corrupt_files_instead_of_raising(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write_parquet([], root / "train.parquet", "corpus")
    (root / "heldout.parquet").write_bytes(b"PAR1 not really")
    (root / "manifest.json").write_text('{"rows": ')
    assert "unreadable JSON" in " ".join(verify_corpus(root))
    (root / "manifest.json").write_text('{"schema_version": "1.0", "rows": {"train": 0, "heldout": 0}}')
    problems = " ".join(verify_corpus(root))
    assert "heldout.parquet: unreadable Parquet" in problems
    write_parquet([_row(0, "i0", "p", "r")], root / "heldout.parquet", "pairs")  # wrong table kind
    assert "columns" in " ".join(verify_corpus(root))


THEMES = ["library", "shop", "weather", "bank", "garden", "fleet", "clinic", "school", "music", "kitchen"]
OPEN = MixConfig(seed=3, size=10_000, weights={"organic": 1.0}, heldout_fraction=0.2, near_dup_threshold=0.9,
                 max_chars=100_000)


def _distinct_rows(n: int) -> list[dict]:
    """``n`` rows of distinct random words (no two are near duplicates), spread over 10 themes."""
    import random

    rows = []
    for i in range(n):
        r = random.Random(i)
        body = " ".join(f"w{r.randrange(10**6)}" for _ in range(60))
        rows.append(_row(i, f"i{i}", f"task {i}", f"```vox\n{body}\n```", theme=THEMES[i % 10]))
    return rows


def test_planted_near_duplicates_are_removed() -> None:
    # near-dup removal switched off in mix() (or its threshold ignored) left these in the corpus
    rows = _distinct_rows(60)
    planted = []
    for k, src in enumerate(rows[:6]):
        words = src["response"].split(" ")
        words[30] = "changed"  # one token of ~62: Jaccard of 3-shingles ~0.9+
        planted.append(dict(src, id=f"z{k}", instance_id=f"planted{k}", response=" ".join(words)))
    out = mix(rows + planted, OPEN, "S")
    kept = {r["id"] for r in out.train + out.heldout}
    assert out.stats["near_dups"] == len(planted) and out.stats["exact_dups"] == 0
    assert not kept & {p["id"] for p in planted}
    assert kept == {r["id"] for r in rows}
    cfg = corpus_config("cpu-tiny")  # the default recipe's threshold catches them too
    assert near_duplicates([*rows[:6], *planted], cfg.near_dup_threshold, cfg.seed) == set(range(6, 12))


def test_train_rows_mentioning_held_out_names_are_dropped() -> None:
    # removing the rule that drops such rows put held-out names into training (split leakage)
    rows = _distinct_rows(60)
    for k, theme in enumerate(THEMES):  # each theme's row names the next theme's words
        other = sorted(vocabulary(THEME_BY_KEY[THEMES[(k + 1) % 10]]))[0]
        rows.append(_row(100 + k, f"leak{k}", f"keep the {other} list", "```vox\nlet n = 1\n```", theme=theme))
    out = mix(rows, OPEN, "S")
    held = set(out.heldout_themes)
    assert held and out.stats["leak_dropped"] >= 1
    assert not leaked_names(out.train, out.heldout_themes)
    train_ids = {r["id"] for r in out.train}
    for k, theme in enumerate(THEMES):
        if theme not in held and THEMES[(k + 1) % 10] in held:
            assert f"r{100 + k:03d}" not in train_ids
