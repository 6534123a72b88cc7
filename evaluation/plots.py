"""Plots as inline SVG built on the server: no chart library, no script. Every text is escaped here."""

from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# Landis–Koch bands under the points, lightest for "slight".
BANDS = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.0)]
SERIES_STYLE = [("#1f6feb", "circle"), ("#9a6700", "square"), ("#1a7f37", "diamond")]


@dataclass(frozen=True)
class Point:
    series: str
    value: float | None
    low: float | None = None
    high: float | None = None


def forest_plot(rows: list[tuple[str, list[Point]]], *, title: str, series: list[str]) -> SafeString:
    """One line per row; each series a marker with its interval as a whisker, on a −1…1 (or tighter) axis."""
    values = [v for _label, points in rows for p in points for v in (p.value, p.low) if v is not None]
    x_min = -1.0 if values and min(values) < -0.2 else -0.2
    label_width, plot_width, right = 230, 420, 20
    line_height, top = 14, 26
    height = top + max(len(rows), 1) * (line_height * max(len(series), 1) + 10) + 34
    width = label_width + plot_width + right

    def x(value: float) -> float:
        return label_width + (max(x_min, min(1.0, value)) - x_min) / (1.0 - x_min) * plot_width

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    for index, (low, high) in enumerate(BANDS):
        shade = 0.04 + 0.03 * index
        parts.append(
            f'<rect x="{x(low):.1f}" y="{top - 6}" width="{x(high) - x(low):.1f}" height="{height - top - 22}" '
            f'fill="#1f6feb" fill-opacity="{shade:.2f}"/>'
        )
    for tick in _ticks(x_min):
        parts.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top - 6}" y2="{height - 28}" '
                     f'stroke="#c4cbd3" stroke-width="{1.2 if tick == 0 else 0.6}"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 14}" font-size="11" text-anchor="middle" '
                     f'fill="#5f6b7a">{tick:g}</text>')
    y = top
    for label, points in rows:
        parts.append(f'<text x="{label_width - 8}" y="{y + 4 + (len(series) - 1) * line_height / 2:.1f}" '
                     f'font-size="12" text-anchor="end" fill="#1d2330">{escape(_short(label))}</text>')
        for point in points:
            color, shape = SERIES_STYLE[series.index(point.series) % len(SERIES_STYLE)]
            if point.value is None:
                parts.append(f'<text x="{x(x_min) + 4:.1f}" y="{y + 4}" font-size="10" fill="#5f6b7a">'
                             f'{escape(point.series)}: —</text>')
            else:
                if point.low is not None and point.high is not None:
                    parts.append(f'<line x1="{x(point.low):.1f}" x2="{x(point.high):.1f}" y1="{y}" y2="{y}" '
                                 f'stroke="{color}" stroke-width="2"/>')
                parts.append(_marker(shape, x(point.value), y, color, f"{point.series}: {point.value:.3f}"))
            y += line_height
        y += 10
    legend_x = label_width
    for name in series:
        color, shape = SERIES_STYLE[series.index(name) % len(SERIES_STYLE)]
        parts.append(_marker(shape, legend_x + 5, 10, color, name))
        parts.append(f'<text x="{legend_x + 14}" y="14" font-size="11" fill="#1d2330">{escape(name)}</text>')
        legend_x += 14 + 7 * len(name) + 18
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every interpolated text above is escaped


def bar_chart(rows: list[tuple[str, list[tuple[str, int]]]], *, title: str, series: list[str]) -> SafeString:
    """Stacked horizontal bars: one bar per row, one colour per series (counts per class per split)."""
    colors = ["#1f6feb", "#d4a72c", "#1a7f37", "#8250df", "#cf222e"]
    label_width, plot_width = 150, 420
    total_max = max((sum(n for _s, n in parts) for _label, parts in rows), default=0) or 1
    height = 28 + len(rows) * 24
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {label_width + plot_width + 60} {height}" '
        f'width="{label_width + plot_width + 60}" height="{height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    legend_x = label_width
    for index, name in enumerate(series):
        out.append(f'<rect x="{legend_x}" y="4" width="10" height="10" fill="{colors[index % len(colors)]}"/>')
        out.append(f'<text x="{legend_x + 14}" y="13" font-size="11">{escape(name)}</text>')
        legend_x += 14 + 7 * len(name) + 18
    y = 24
    for label, parts in rows:
        out.append(f'<text x="{label_width - 8}" y="{y + 12}" font-size="12" text-anchor="end">'
                   f"{escape(_short(label))}</text>")
        x = float(label_width)
        for name, n in parts:
            w = n / total_max * plot_width
            color = colors[series.index(name) % len(colors)]
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="16" fill="{color}">'
                       f"<title>{escape(name)}: {n}</title></rect>")
            x += w
        total = sum(n for _s, n in parts)
        out.append(f'<text x="{x + 4:.1f}" y="{y + 12}" font-size="11" fill="#5f6b7a">{total}</text>')
        y += 24
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every interpolated text above is escaped


def _marker(shape: str, cx: float, cy: float, color: str, tooltip: str) -> str:
    tip = f"<title>{escape(tooltip)}</title>"
    if shape == "square":
        return f'<rect x="{cx - 4:.1f}" y="{cy - 4}" width="8" height="8" fill="{color}">{tip}</rect>'
    if shape == "diamond":
        return (f'<polygon points="{cx:.1f},{cy - 5} {cx + 5:.1f},{cy} {cx:.1f},{cy + 5} {cx - 5:.1f},{cy}" '
                f'fill="{color}">{tip}</polygon>')
    return f'<circle cx="{cx:.1f}" cy="{cy}" r="4.5" fill="{color}">{tip}</circle>'


def _ticks(x_min: float) -> list[float]:
    return [-1.0, -0.5, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0] if x_min <= -1 else [-0.2, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def _short(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
