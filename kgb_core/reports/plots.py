"""The report's plots, as PNG bytes, drawn with matplotlib's Agg backend.

Why matplotlib: its PNGs are static and self-contained (embedded as base64, the HTML opens
offline with no JavaScript and no CDN, and looks the same in any browser or in a mail), it is a
mature, well-kept library that runs headless on a CI machine, and it is an optional extra
(``pip install kernelgenbench[report]``): without it the report still has every table, and says
that the plots need the extra. plotly would give interactive plots, but its HTML carries a
multi-megabyte JavaScript bundle (or loads it from a CDN, which breaks offline viewing).
"""

from __future__ import annotations

import io
import math
from typing import Any

from kgb_core.labels import file_stem
from kgb_core.reports.views import FAST_P_THRESHOLDS, INTERPRETER, EMULATION, ReportData

MISSING_NOTE = ("Plots need matplotlib: install the report extra "
                "(pip install 'kernelgenbench[report]') and write the report again.")
NOT_PERFORMANCE = " (interpreter timings: not performance)"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    # metadata: no Software/date stamp, so the same report gives the same bytes
    fig.savefig(buffer, format="png", dpi=96, bbox_inches="tight", metadata={"Software": None})
    fig.clf()
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buffer.getvalue()


def _suffix(kinds: set[str]) -> str:
    return NOT_PERFORMANCE if kinds & {INTERPRETER, EMULATION} else ""


def fast_p_curve(report: ReportData) -> bytes | None:
    """The exact step function per group, on a log p axis: fast_p(p) falls by 1/tried at each
    correct operator's speedup, and its value near p = 0 is the share correct and timed."""
    curves = [c for c in report.fast_p_curves if c.speedups and c.tried]
    if not curves:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    every = [s for c in curves for s in c.speedups]
    low, high = min(min(every) / 2, 0.1), max(max(every) * 2, 4.0)
    for curve in curves:
        xs, ys = [low], [100.0 * len(curve.speedups) / curve.tried]
        for index, speedup in enumerate(curve.speedups, start=1):
            xs.append(speedup)
            ys.append(100.0 * (len(curve.speedups) - index) / curve.tried)
        xs.append(high)
        ys.append(ys[-1])
        ax.step(xs, ys, where="post", label=curve.group)
    for p in FAST_P_THRESHOLDS[1:]:
        ax.axvline(p, color="0.8", linewidth=0.8, zorder=0)
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ax.set_xlabel("p (speedup over the baseline, log scale); grey lines: p = 0.5, 1, 1.5, 2")
    ax.set_ylabel("fast_p (% of operators tried)")
    ax.set_ylim(0, 105)
    ax.set_title("fast_p curve" + _suffix({c.kind for c in curves}))
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)
    return _png(fig)


def speedup_distribution(report: ReportData) -> bytes | None:
    groups = [r for r in report.ms if r.speedups]
    if not groups:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.55 * len(groups)))
    ax.boxplot([r.speedups for r in groups], vert=False, whis=(0, 100))
    for index, r in enumerate(groups, start=1):
        ax.scatter(r.speedups, [index] * len(r.speedups), s=12, alpha=0.6, zorder=3)
    ax.set_yticks(range(1, len(groups) + 1), [r.group for r in groups], fontsize=8)
    values = [s for r in groups for s in r.speedups]
    if max(values) / min(values) > 20:
        ax.set_xscale("log")
    ax.axvline(1.0, color="0.5", linestyle="--", linewidth=0.8)
    ax.invert_yaxis()  # top to bottom in the order of the tables
    ax.set_xlabel("speedup of the best passing sample over the baseline")
    ax.set_title("Speedup distribution" + _suffix({r.kind for r in groups}))
    return _png(fig)


def correct_bars(report: ReportData) -> bytes | None:
    groups = [r for r in report.ms if r.operators]
    if not groups:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.45 * len(groups)))
    positions = range(len(groups))
    ax.barh([p + 0.2 for p in positions], [100.0 * (r.compile_rate or 0) for r in groups],
            height=0.4, label="compiled %")
    ax.barh([p - 0.2 for p in positions], [r.correct_pct or 0 for r in groups], height=0.4,
            label="correct %")
    ax.set_yticks(list(positions), [r.group for r in groups], fontsize=8)
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.set_xlabel("% of operators tried")
    ax.set_title("Compile rate and correctness per source, method and backend")
    ax.legend(fontsize=8, loc="lower right")
    return _png(fig)


def transfer_heatmaps(report: ReportData) -> list[tuple[str, bytes]]:
    plots = []
    for matrix in report.transfer:
        names = matrix.backends
        if len(names) < 2:
            continue
        plt = _pyplot()
        size = 1.2 + 0.9 * len(names)
        fig, ax = plt.subplots(figsize=(size + 1.5, size))
        values = [[(matrix.cells[a][b]["share"] if matrix.cells[a][b]["share"] is not None
                    else math.nan) for b in names] for a in names]
        image = ax.imshow(values, vmin=0, vmax=1, cmap="viridis")
        labels = [f"{n}\n[{matrix.kinds[n]}]" if matrix.kinds[n] != "hardware" else n
                  for n in names]
        ax.set_xticks(range(len(names)), labels, fontsize=8, rotation=30, ha="right")
        ax.set_yticks(range(len(names)), labels, fontsize=8)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                share = matrix.cells[a][b]["share"]
                ax.text(j, i, "n/a" if share is None else f"{100 * share:.0f}%", ha="center",
                        va="center", color="white" if (share or 0) < 0.6 else "black",
                        fontsize=9)
        ax.set_xlabel("also solved on")
        ax.set_ylabel("solved on")
        ax.set_title(f"Transfer, method {matrix.method}")
        fig.colorbar(image, ax=ax, fraction=0.046)
        plots.append((f"transfer_{file_stem(matrix.method)}", _png(fig)))
    return plots


def cost_bars(report: ReportData) -> bytes | None:
    rows = [r for r in report.cost if r.tokens]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.5 * len(rows)))
    names = [f"{r.method} / {r.backend}" for r in rows]
    positions = range(len(rows))
    ax.barh([p - 0.2 for p in positions], [r.tokens_per_attempted or 0 for r in rows],
            height=0.4, label="tokens / attempted op")
    ax.barh([p + 0.2 for p in positions], [r.tokens_per_solved or 0 for r in rows], height=0.4,
            label="tokens / solved op")
    ax.set_yticks(list(positions), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("tokens")
    ax.set_title("Tokens per attempted and per solved operator")
    ax.legend(fontsize=8, loc="lower right")
    return _png(fig)


def roofline_bars(report: ReportData) -> bytes | None:
    rows = [r for r in report.operators if r.roofline_pct is not None]
    if not rows:
        return None
    rows = sorted(rows, key=lambda r: r.roofline_pct)[-40:]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.28 * len(rows)))
    ax.barh(range(len(rows)), [r.roofline_pct for r in rows])
    ax.set_yticks(range(len(rows)), [f"{r.op} ({r.method}, {r.backend})" for r in rows],
                  fontsize=7)
    ax.axvline(100, color="0.5", linestyle="--", linewidth=0.8)
    ax.set_xlabel("roofline % (calibrated peak time / measured time)")
    ax.set_title("Roofline % per operator (best candidate)")
    return _png(fig)


def make_plots(report: ReportData) -> dict[str, bytes]:
    """Every plot that has data, by name; ImportError when matplotlib is not installed."""
    _pyplot()
    plots: dict[str, bytes] = {}
    for name, draw in (("correct", correct_bars), ("fast_p_curve", fast_p_curve),
                       ("speedups", speedup_distribution), ("cost", cost_bars),
                       ("roofline", roofline_bars)):
        image = draw(report)
        if image is not None:
            plots[name] = image
    plots.update(dict(transfer_heatmaps(report)))
    return plots
