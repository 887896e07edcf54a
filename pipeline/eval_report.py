"""Rendering of an eval report (its JSON form, ``report.json`` / the ``eval_report`` stage result):
the per-family bar chart and the Markdown tables of pass@1 per policy."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def plot_policies(report: Mapping[str, Any], path: Path) -> Path:
    """Bar chart of headline pass@1 per family: base (gate policy), then the adapter under each
    policy, with the gate threshold; saved as PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    adapter, base = report["adapter"], report["base"]
    gate_policy = report.get("gate_policy", "unconstrained")
    fams = list(adapter["per_family"])
    policies: Mapping[str, Any] = report.get("policies") or {"adapter": adapter}
    series = [(f"base ({gate_policy})", base)] + [(f"adapter {name}", ev) for name, ev in policies.items()]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(9, 3.6), dpi=90)
    for j, (label, ev) in enumerate(series):
        ax.bar([i - 0.4 + width * (j + 0.5) for i in range(len(fams))],
               [ev["per_family"].get(f, {}).get("pass@1", 0) for f in fams], width, label=label)
    ax.axhline(report["threshold"], color="grey", linestyle="--", linewidth=1, label="threshold")
    ax.set_xticks(list(range(len(fams))), fams, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("pass@1 (strict + declared)")
    ax.set_title(f"pass@1 base {base['pass_at_1']:.2f} -> adapter {adapter['pass_at_1']:.2f} ({gate_policy})")
    ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def policy_table(report: Mapping[str, Any], key: str = "per_family") -> str:
    """Markdown table: per group (``per_family``/``per_suite``/``per_kind``), headline pass@1 of the
    base (gate policy) and of the adapter under each policy, plus the adapter's raw compile rate
    and "declares what was asked" rate under the gate policy."""
    adapter, base = report["adapter"], report["base"]
    policies: Mapping[str, Any] = report.get("policies") or {report.get("gate_policy", "unconstrained"): adapter}
    evs = list(policies.values())
    head = ("| group | tasks | base | " + " | ".join(policies) + " | raw compile | declared |\n|"
            + "---|" * (len(policies) + 5))
    rows = []
    for group, row in adapter[key].items():
        cells = [f"{ev[key].get(group, {}).get('pass@1', 0):.2f}" for ev in evs]
        declared = "-" if row.get("declared") is None else f"{row['declared']:.2f}"
        rows.append(f"| {group} | {int(row['tasks'])} | {base[key].get(group, {}).get('pass@1', 0):.2f} "
                    f"| {' | '.join(cells)} | {row['raw_pass@1']:.2f} | {declared} |")
    total = " | ".join(f"**{ev['pass_at_1']:.2f}**" for ev in evs)
    declared = "-" if adapter.get("declared_rate") is None else f"{adapter['declared_rate']:.2f}"
    rows.append(f"| all | {report['tasks']} | {base['pass_at_1']:.2f} | {total} | {adapter['raw_pass_at_1']:.2f} "
                f"| {declared} |")
    return head + "\n" + "\n".join(rows)
