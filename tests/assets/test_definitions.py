"""All definitions load (what ``dagster dev -w workspace.yaml`` and ``-m assets.definitions`` see).

Snapshot: when you add an asset or check, add its key to the list below.
"""

from __future__ import annotations

import dagster as dg

ASSET_KEYS = [
    "base_model",
    "corpus",
    "eval_report",
    "exported_model",
    "gate_rejections",
    "gated_pairs",
    "generated_pairs",
    "qlora_adapter",
    "system_prompt",
]

CHECK_KEYS = [
    "corpus:corpus_split_is_clean",
    "eval_report:adapter_beats_base_and_threshold",
    "exported_model:reload_matches_adapter",
    "gated_pairs:gate_pass_rate",
    "system_prompt:system_prompt_is_2026_syntax",
]


def _defs() -> dg.Definitions:
    from assets.definitions import defs

    return defs()


def test_asset_keys_snapshot() -> None:
    graph = _defs().resolve_asset_graph()
    assert sorted(k.to_user_string() for k in graph.get_all_asset_keys()) == ASSET_KEYS
    assert sorted(f"{k.asset_key.to_user_string()}:{k.name}" for k in graph.asset_check_keys) == CHECK_KEYS


def test_corpus_assets_carry_owners_tags_and_descriptions() -> None:
    graph = _defs().resolve_asset_graph()
    for key in ("system_prompt", "generated_pairs", "gated_pairs", "gate_rejections", "corpus"):
        node = graph.get(dg.AssetKey(key))
        assert node.group_name == "corpus" and node.owners == ["team:corpus"]
        assert node.tags.get("stage") == "corpus" and node.description
    assert graph.get(dg.AssetKey("corpus")).parent_keys == {dg.AssetKey("gated_pairs")}
