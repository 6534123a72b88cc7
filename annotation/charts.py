"""Geometry for small server-side SVG charts. Templates draw them (and escape every label).

``hbar_chart`` lays out horizontal stacked bars with an optional target marker per row;
``column_chart`` lays out one column per point (a day, a round). No chart library, no JS.
"""

import math
from dataclasses import dataclass, field


@dataclass
class Segment:
    key: str
    label: str
    value: float
    x: float
    width: float


@dataclass
class Bar:
    label: str
    y: float
    total: float
    segments: list[Segment] = field(default_factory=list)
    marker_x: float | None = None
    marker: float | None = None
    note: str = ""
    end_x: float = 0.0


def hbar_chart(
    rows: list[dict],
    *,
    series: list[tuple[str, str]],
    width: int = 640,
    label_width: int = 170,
    bar_height: int = 18,
    gap: int = 10,
    max_value: float | None = None,
) -> dict:
    """``rows``: [{"label", "values": {series_key: n}, "marker": n or None, "note": ""}];
    ``series``: [(key, label)] in stacking order. Returns everything the template needs."""
    totals = [sum(row["values"].get(key, 0) for key, _ in series) for row in rows]
    markers = [row.get("marker") or 0 for row in rows]
    scale_max = max_value if max_value else max([*totals, *markers, 1])
    plot_width = width - label_width - 120  # room after the longest bar for its figure
    bars = []
    for index, row in enumerate(rows):
        x = float(label_width)
        bar = Bar(
            label=str(row["label"]),
            y=index * (bar_height + gap),
            total=totals[index],
            note=row.get("note", ""),
        )
        for key, label in series:
            value = row["values"].get(key, 0)
            segment_width = plot_width * value / scale_max
            bar.segments.append(
                Segment(key=key, label=label, value=value, x=round(x, 1), width=round(segment_width, 1))
            )
            x += segment_width
        bar.end_x = round(x + 6, 1)
        if row.get("marker"):
            bar.marker = row["marker"]
            bar.marker_x = round(label_width + plot_width * row["marker"] / scale_max, 1)
            bar.end_x = max(bar.end_x, bar.marker_x + 6)
        bars.append(bar)
    height = max(len(rows), 1) * (bar_height + gap)
    return {
        "width": width,
        "height": height,
        "label_width": label_width,
        "bar_height": bar_height,
        "bars": bars,
        "series": series,
        "scale_max": scale_max,
    }


def column_chart(
    points: list[tuple[str, float]], *, width: int = 640, height: int = 140, gap: int = 4
) -> dict:
    """One column per (label, value) point, scaled to the largest value."""
    scale_max = max([value for _, value in points] + [1])
    plot_height = height - 20
    step = width / max(len(points), 1)
    columns = []
    for index, (label, value) in enumerate(points):
        column_height = plot_height * value / scale_max
        columns.append(
            {
                "label": label,
                "value": value,
                "x": round(index * step + gap / 2, 1),
                "width": round(max(step - gap, 1), 1),
                "y": round(plot_height - column_height, 1),
                "height": round(column_height, 1),
                "text_x": round(index * step + step / 2, 1),
            }
        )
    return {
        "width": width,
        "height": height,
        "plot_height": plot_height,
        "columns": columns,
        "scale_max": scale_max,
    }


# Distinguishable colours for clusters (the residual is grey); colours repeat after ten.
CLUSTER_COLOURS = [
    "#1f6feb",
    "#d1242f",
    "#1a7f37",
    "#9a6700",
    "#8250df",
    "#bf3989",
    "#0a7ea4",
    "#bc4c00",
    "#57606a",
    "#4d2d00",
]
RESIDUAL_COLOUR = "#afb8c1"


def scatter_chart(
    points: list[tuple[float, float, int | None]],
    *,
    groups: dict[int, str],
    width: int = 640,
    height: int = 420,
    margin: int = 10,
    max_points: int = 3000,
) -> dict:
    """``points``: (x, y, group) with x and y in 0…1; ``groups``: group → label, in legend order
    (a group missing from it is drawn grey, as the residual). Above ``max_points``, an even sample is drawn."""
    step = max(1, math.ceil(len(points) / max_points))
    colours = {group: CLUSTER_COLOURS[index % len(CLUSTER_COLOURS)] for index, group in enumerate(groups)}
    dots = [
        {
            "x": round(margin + x * (width - 2 * margin), 1),
            "y": round(margin + (1 - y) * (height - 2 * margin), 1),
            "colour": colours.get(group, RESIDUAL_COLOUR),
            "group": group,
        }
        for x, y, group in points[::step]
    ]
    legend = [{"label": label, "colour": colours[group]} for group, label in groups.items()]
    return {
        "width": width,
        "height": height,
        "dots": dots,
        "legend": legend,
        "shown": len(dots),
        "total": len(points),
        "residual_colour": RESIDUAL_COLOUR,
    }
