"""The replay over time as an SVG: load, capacity and queue per minute (no plotting library).

Top panel: requests in flight (the minute's mean), the pool's serving slots (machines serving x
slots per machine) and the oracle's slots. Bottom panel: the longest queue in each minute.
`render_png` draws the same with matplotlib, which is an optional extra (`pip install
'inference-infra[plot]'`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 960, 540
LEFT, RIGHT, TOP, GAP, BOTTOM = 70, 20, 50, 50, 40
SERIES = (
    ("in_flight", "requests in flight", "#1f77b4", ""),
    ("capacity", "pool slots", "#d62728", ""),
    ("oracle", "oracle slots", "#7f7f7f", "6,4"),
)


def _series(result_json: dict[str, Any]) -> dict[str, list[float]]:
    slots = result_json["service"]["slots_per_machine"]
    rows = result_json["timeline"]
    return {
        "minute": [r["minute"] for r in rows],
        "in_flight": [r["in_flight_mean"] for r in rows],
        "capacity": [r["machines_serving"] * slots for r in rows],
        "oracle": [r["oracle_machines"] * slots for r in rows],
        "queue": [r["queue_max"] for r in rows],
    }


def _ticks(top: float) -> list[float]:
    """About five round ticks from 0 to top."""
    if top <= 0:
        return [0.0]
    raw = top / 5
    magnitude = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(top // step) + 1)]


def render_svg(result_json: dict[str, Any]) -> str:
    """The SVG document for a replay's `as_json()`."""
    data = _series(result_json)
    minutes = data["minute"] or [0]
    span = max(1, minutes[-1] + 1)
    plot_w = WIDTH - LEFT - RIGHT
    top_h = (HEIGHT - TOP - GAP - BOTTOM) * 0.65
    low_h = HEIGHT - TOP - GAP - BOTTOM - top_h
    top_max = max([1.0, *data["in_flight"], *data["capacity"], *data["oracle"]]) * 1.05
    queue_max = max([1.0, *data["queue"]]) * 1.05

    def x(minute: float) -> float:
        return LEFT + plot_w * minute / span

    def y_top(v: float) -> float:
        return TOP + top_h * (1 - v / top_max)

    def y_low(v: float) -> float:
        return TOP + top_h + GAP + low_h * (1 - v / queue_max)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
    ]
    cost = result_json["cost"]
    ttft = result_json["ttft"]
    title = (
        f"{result_json['pool']}: {result_json['model']} on {result_json['machine']} - elastic "
        f"${cost['elastic_usd']:.2f}, static ${cost['static_usd']:.2f}, oracle ${cost['oracle_usd']:.2f}; "
        f"{ttft['over_target_share']:.1%} over the {ttft['target_seconds'] * 1000:g} ms TTFT target"
    )
    out.append(f'<text x="{LEFT}" y="22" font-size="14">{escape(title)}</text>')
    source = result_json["trace"]["source"] or "trace"
    out.append(f'<text x="{LEFT}" y="40" fill="#555">{escape(source)}</text>')
    for panel_top, height, peak, label, scale in (
        (TOP, top_h, top_max, "requests", y_top),
        (TOP + top_h + GAP, low_h, queue_max, "queue", y_low),
    ):
        out.append(
            f'<rect x="{LEFT}" y="{panel_top:.1f}" width="{plot_w}" height="{height:.1f}" '
            'fill="none" stroke="#999"/>'
        )
        for tick in _ticks(peak / 1.05):
            ty = scale(tick)
            out.append(f'<line x1="{LEFT - 4}" y1="{ty:.1f}" x2="{LEFT}" y2="{ty:.1f}" stroke="#999"/>')
            out.append(f'<text x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end">{tick:g}</text>')
        out.append(
            f'<text x="16" y="{panel_top + height / 2:.1f}" transform="rotate(-90 16 '
            f'{panel_top + height / 2:.1f})" text-anchor="middle">{label}</text>'
        )
    for tick in _ticks(span):
        tx = x(tick)
        base = HEIGHT - BOTTOM
        out.append(f'<line x1="{tx:.1f}" y1="{base}" x2="{tx:.1f}" y2="{base + 4}" stroke="#999"/>')
        out.append(f'<text x="{tx:.1f}" y="{base + 16}" text-anchor="middle">{tick:g}</text>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 6}" text-anchor="middle">minute</text>')
    for key, label, colour, dash in SERIES:
        points = _steps(data["minute"], data[key], x, y_top)
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"{dashes}>'
            f"<title>{escape(label)}</title></polyline>"
        )
    out.append(
        f'<polyline points="{_steps(data["minute"], data["queue"], x, y_low)}" fill="none" '
        'stroke="#ff7f0e" stroke-width="1.5"><title>longest queue</title></polyline>'
    )
    legend = [*((label, colour, dash) for _, label, colour, dash in SERIES), ("longest queue", "#ff7f0e", "")]
    lx = LEFT + 10
    for label, colour, dash in legend:
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<line x1="{lx}" y1="{TOP + 12}" x2="{lx + 24}" y2="{TOP + 12}" stroke="{colour}" '
            f'stroke-width="2"{dashes}/>'
        )
        out.append(f'<text x="{lx + 28}" y="{TOP + 16}">{escape(label)}</text>')
        lx += 40 + 7 * len(label)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _steps(minutes: list[float], values: list[float], x: Any, y: Any) -> str:
    """A step line: each minute's value held across the minute."""
    points: list[str] = []
    for minute, value in zip(minutes, values, strict=True):
        points.append(f"{x(minute):.1f},{y(value):.1f}")
        points.append(f"{x(minute + 1):.1f},{y(value):.1f}")
    return " ".join(points)


def render_png(result_json: dict[str, Any], path: Path) -> None:
    """Write the same plot as PNG with matplotlib (the optional `plot` extra); ImportError without it."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    data = _series(result_json)
    fig, (top, low) = plt.subplots(
        2, 1, figsize=(WIDTH / 100, HEIGHT / 100), sharex=True, gridspec_kw={"height_ratios": [2, 1]}
    )
    for key, label, colour, dash in SERIES:
        top.step(
            data["minute"],
            data[key],
            where="post",
            label=label,
            color=colour,
            linestyle="--" if dash else "-",
        )
    top.set_ylabel("requests")
    top.legend(loc="upper right")
    low.step(data["minute"], data["queue"], where="post", color="#ff7f0e", label="longest queue")
    low.set_ylabel("queue")
    low.set_xlabel("minute")
    top.set_title(f"{result_json['pool']}: {result_json['model']} on {result_json['machine']}")
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def render_frontier_svg(tuning_json: dict[str, Any]) -> str:
    """`--tune --plot x.svg`: every frontier run as cost (x) against the share of requests missed (y),
    the SLO's allowed share as a dashed line, the chosen run, the robust pick (when there is one) and the
    pool's own settings marked."""
    frontier = tuning_json["frontier"]
    marks = [("chosen", tuning_json["best"], "#2ca02c"), ("pool's own", tuning_json["start"], "#d62728")]
    robust = (tuning_json.get("robust") or {}).get("point")
    if robust is not None:
        marks.insert(1, ("robust pick", robust, "#9467bd"))
    everything = [*frontier, *(m[1] for m in marks)]
    cost_max = max([1e-9, *(p["cost_usd"] for p in everything)]) * 1.05
    miss_max = max([tuning_json["allowed_miss_share"] * 2, *(p["miss_share"] for p in everything)]) * 1.05
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(cost: float) -> float:
        return LEFT + plot_w * cost / cost_max

    def y(miss: float) -> float:
        return TOP + plot_h * (1 - miss / miss_max)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<text x="{LEFT}" y="24" font-size="15">{escape(tuning_json["pool"])}: cost against requests'
        f" missed, {len(frontier)} frontier runs of {tuning_json['runs']}</text>",
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" stroke="#000"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#000"/>',
        f'<text x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 8}">cost, USD</text>',
        f'<text x="12" y="{TOP + plot_h / 2:.0f}" transform="rotate(-90 12 {TOP + plot_h / 2:.0f})">'
        "share of requests missing the TTFT target</text>",
    ]
    allowed = y(tuning_json["allowed_miss_share"])
    out.append(
        f'<line x1="{LEFT}" y1="{allowed:.1f}" x2="{LEFT + plot_w}" y2="{allowed:.1f}" stroke="#7f7f7f" '
        'stroke-dasharray="6,4"><title>allowed share</title></line>'
    )
    points = " ".join(f"{x(p['cost_usd']):.1f},{y(p['miss_share']):.1f}" for p in frontier)
    out.append(
        f'<polyline points="{points}" fill="none" stroke="#1f77b4" stroke-width="2">'
        "<title>frontier</title></polyline>"
    )
    for label, p, colour in marks:
        out.append(
            f'<circle cx="{x(p["cost_usd"]):.1f}" cy="{y(p["miss_share"]):.1f}" r="6" fill="{colour}">'
            f"<title>{escape(label)}</title></circle>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
