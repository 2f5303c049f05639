"""Plot the recorded benchmark results (docs/benchmark-results/<device>.txt, the output of the benchmark
commands) as the time ratio numr_array / peer per operation; run by Sphinx's plot directive at build time.

Each results file is a benchmark command's output as printed: rows ``<operation>  <time>us  <peer> <r>x,
<peer> <r>x`` (other lines are ignored), e.g. from ``python -m benchmarks --device cpu > cpu.txt``.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib import ticker

RESULTS = Path(__file__).resolve().parents[1] / "benchmark-results"
ROW = re.compile(r"^(?P<name>\S.*?)\s+(?P<time>[\d.]+)\s*us\s+(?P<ratios>\S.*x)\s*$")
RATIO = re.compile(r"(?P<peer>[\w .+-]+?)\s+(?P<ratio>[\d.]+)x")


def parse(text: str) -> list[tuple[str, float, dict[str, float]]]:
    """(operation, numr seconds per call, {peer: numr time / peer time}) for each result row."""
    rows = []
    for line in text.splitlines():
        m = ROW.match(line.rstrip())
        if not m:
            continue
        ratios = {r["peer"].strip(): float(r["ratio"]) for r in RATIO.finditer(m["ratios"])}
        if ratios:
            rows.append((m["name"].strip(), float(m["time"]) * 1e-6, ratios))
    return rows


def plot(device: str) -> None:
    """A horizontal bar chart of the ratios in benchmark-results/<device>.txt (below 1: numr is faster)."""
    rows = parse((RESULTS / f"{device}.txt").read_text())
    if not rows:
        raise ValueError(f"{RESULTS / (device + '.txt')} has no result rows")
    peers = sorted({p for _, _, r in rows for p in r})
    fig, ax = plt.subplots(figsize=(8.5, 0.5 * len(rows) * len(peers) ** 0.5 + 1.6))
    height = 0.8 / len(peers)
    for i, peer in enumerate(peers):
        ys = [k + (i - (len(peers) - 1) / 2) * height for k in range(len(rows))]
        values = [r.get(peer, float("nan")) for _, _, r in rows]
        bars = ax.barh(ys, values, height=height, label=f"vs {peer}")
        ax.bar_label(bars, labels=["" if math.isnan(v) else f"{v:.2f}x" for v in values], padding=2, fontsize="x-small")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    lo = min(v for _, _, r in rows for v in r.values())
    hi = max(v for _, _, r in rows for v in r.values())
    ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100) if lo / 2 <= t <= hi * 2]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlim(lo / 2, hi * 2)
    ax.set_yticks(range(len(rows)), [name for name, _, _ in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time ratio numr_array / peer (log scale; below 1: numr_array is faster)")
    ax.set_title(f"{device}: numr_array against its peers")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=len(peers),
              fontsize="small", frameon=False)
    fig.tight_layout()


def devices() -> list[str]:
    """The devices with recorded results."""
    return sorted(p.stem for p in RESULTS.glob("*.txt"))


if __name__ == "__main__":
    plot(sys.argv[1] if len(sys.argv) > 1 else "cpu")
    plt.show()
