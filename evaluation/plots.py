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
        parts.append(
            f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top - 6}" y2="{height - 28}" '
            f'stroke="#c4cbd3" stroke-width="{1.2 if tick == 0 else 0.6}"/>'
        )
        parts.append(
            f'<text x="{x(tick):.1f}" y="{height - 14}" font-size="11" text-anchor="middle" '
            f'fill="#5f6b7a">{tick:g}</text>'
        )
    y = top
    for label, points in rows:
        parts.append(
            f'<text x="{label_width - 8}" y="{y + 4 + (len(series) - 1) * line_height / 2:.1f}" '
            f'font-size="12" text-anchor="end" fill="#1d2330">{escape(_short(label))}</text>'
        )
        for point in points:
            color, shape = SERIES_STYLE[series.index(point.series) % len(SERIES_STYLE)]
            if point.value is None:
                parts.append(
                    f'<text x="{x(x_min) + 4:.1f}" y="{y + 4}" font-size="10" fill="#5f6b7a">'
                    f"{escape(point.series)}: —</text>"
                )
            else:
                if point.low is not None and point.high is not None:
                    parts.append(
                        f'<line x1="{x(point.low):.1f}" x2="{x(point.high):.1f}" y1="{y}" y2="{y}" '
                        f'stroke="{color}" stroke-width="2"/>'
                    )
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
    colors = PALETTE
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
        out.append(
            f'<rect x="{legend_x}" y="4" width="10" height="10" fill="{colors[index % len(colors)]}"/>'
        )
        out.append(f'<text x="{legend_x + 14}" y="13" font-size="11">{escape(name)}</text>')
        legend_x += 14 + 7 * len(name) + 18
    y = 24
    for label, parts in rows:
        out.append(
            f'<text x="{label_width - 8}" y="{y + 12}" font-size="12" text-anchor="end">'
            f"{escape(_short(label))}</text>"
        )
        x = float(label_width)
        for name, n in parts:
            w = n / total_max * plot_width
            color = colors[series.index(name) % len(colors)]
            out.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="16" fill="{color}">'
                f"<title>{escape(name)}: {n}</title></rect>"
            )
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
        return (
            f'<polygon points="{cx:.1f},{cy - 5} {cx + 5:.1f},{cy} {cx:.1f},{cy + 5} {cx - 5:.1f},{cy}" '
            f'fill="{color}">{tip}</polygon>'
        )
    return f'<circle cx="{cx:.1f}" cy="{cy}" r="4.5" fill="{color}">{tip}</circle>'


def _ticks(x_min: float) -> list[float]:
    return [-1.0, -0.5, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0] if x_min <= -1 else [-0.2, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def _short(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


PALETTE = ["#1f6feb", "#d4a72c", "#1a7f37", "#8250df", "#cf222e", "#0598bc", "#bf8700", "#57606a"]


def grouped_bars(
    groups: list[tuple[str, list[tuple[str, float | None]]]],
    *,
    title: str,
    series: list[str],
    max_value: float | None = None,
    digits: int = 2,
    intervals: dict[tuple[str, str], tuple[float, float] | None] | None = None,
    shown=None,
) -> SafeString:
    """Horizontal bars in groups (a class), one bar per series (model · condition), the value at its end; with
    ``intervals`` ({(group, series): (low, high)}), each bar's 95% interval as an error bar. ``shown`` names a
    group or series for the reader (keys stay the keys)."""
    intervals = intervals or {}
    shown = shown or str
    values = [v for _label, bars in groups for _s, v in bars if v is not None]
    top = max_value or (max(values) if values else 1.0) or 1.0
    label_width, plot_width, bar, gap = 170, 400, 11, 12
    width = label_width + plot_width + 60
    legend, legend_height = _legend([shown(name) for name in series], x0=10, width=width - 10)
    top_margin = 8 + legend_height
    height = top_margin + sum(len(bars) * (bar + 2) + gap for _label, bars in groups) + 22
    out = [_svg_open(width, height, title), *legend]
    y = top_margin
    for label, bars in groups:
        block = len(bars) * (bar + 2)
        out.append(
            f'<text x="{label_width - 8}" y="{y + block / 2 + 4:.1f}" font-size="12" text-anchor="end">'
            f"{escape(_short(shown(label), 26))}</text>"
        )
        for name, value in bars:
            color = PALETTE[series.index(name) % len(PALETTE)] if name in series else PALETTE[-1]
            if value is None:
                out.append(
                    f'<text x="{label_width + 4}" y="{y + bar - 2}" font-size="10" fill="#5f6b7a">—</text>'
                )
            else:
                w = max(0.0, min(1.0, value / top)) * plot_width
                interval = intervals.get((label, name))
                tip = f"{escape(shown(name))}: {value:.{digits}f}"
                if interval:
                    tip += f" (95% CI {interval[0]:.{digits}f}–{interval[1]:.{digits}f})"
                out.append(
                    f'<rect x="{label_width}" y="{y}" width="{w:.1f}" height="{bar}" fill="{color}">'
                    f"<title>{tip}</title></rect>"
                )
                end = label_width + w
                if interval:
                    x_low = label_width + max(0.0, min(1.0, interval[0] / top)) * plot_width
                    x_high = label_width + max(0.0, min(1.0, interval[1] / top)) * plot_width
                    middle = y + bar / 2
                    out.append(
                        f'<g class="error-bar" stroke="#1d2330" stroke-width="1.2">'
                        f'<line x1="{x_low:.1f}" x2="{x_high:.1f}" y1="{middle:.1f}" y2="{middle:.1f}"/>'
                        f'<line x1="{x_low:.1f}" x2="{x_low:.1f}" y1="{y + 1}" y2="{y + bar - 1}"/>'
                        f'<line x1="{x_high:.1f}" x2="{x_high:.1f}" y1="{y + 1}" y2="{y + bar - 1}"/></g>'
                    )
                    end = max(end, x_high)
                out.append(
                    f'<text x="{end + 4:.1f}" y="{y + bar - 2}" font-size="10" fill="#5f6b7a">'
                    f"{value:.{digits}f}</text>"
                )
            y += bar + 2
        y += gap
    axis_y = height - 16
    out.append(
        f'<line x1="{label_width}" x2="{label_width + plot_width}" y1="{axis_y}" y2="{axis_y}" stroke="#c4cbd3"/>'
    )
    for fraction in (0, 0.25, 0.5, 0.75, 1):
        x = label_width + fraction * plot_width
        out.append(
            f'<text x="{x:.1f}" y="{height - 4}" font-size="10" text-anchor="middle" fill="#5f6b7a">'
            f"{fraction * top:g}</text>"
        )
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every interpolated text above is escaped


def heatmap(
    rows: list[str],
    columns: list[str],
    values: dict[tuple[str, str], float | None],
    *,
    title: str,
    caption: str = "",
) -> SafeString:
    """A grid of cells shaded by a value in 0…1 (accuracy per task × variant), the value written in each."""
    label_width, cell_w, cell_h, top = 150, 74, 26, 48
    width, height = label_width + cell_w * max(len(columns), 1) + 10, top + cell_h * max(len(rows), 1) + 10
    caption = caption or title
    width = max(width, 16 + 7.5 * len(caption))
    out = [
        _svg_open(width, height, title),
        f'<text x="4" y="14" font-size="12" font-weight="600" fill="#1d2330">{escape(caption)}</text>',
    ]
    for j, column in enumerate(columns):
        out.append(
            f'<text x="{label_width + j * cell_w + cell_w / 2:.1f}" y="{top - 8}" font-size="11" '
            f'text-anchor="middle">{escape(_short(column, 11))}</text>'
        )
    for i, row in enumerate(rows):
        y = top + i * cell_h
        out.append(
            f'<text x="{label_width - 8}" y="{y + cell_h / 2 + 4:.1f}" font-size="12" text-anchor="end">'
            f"{escape(_short(row, 22))}</text>"
        )
        for j, column in enumerate(columns):
            value = values.get((row, column))
            x = label_width + j * cell_w
            if value is None:
                out.append(
                    f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="#f3f4f6"/>'
                )
                continue
            ink = "#ffffff" if value > 0.6 else "#1d2330"
            out.append(
                f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="#1f6feb" '
                f'fill-opacity="{0.08 + 0.87 * max(0.0, min(1.0, value)):.2f}">'
                f"<title>{escape(row)} × {escape(column)}: {value:.3f}</title></rect>"
            )
            out.append(
                f'<text x="{x + cell_w / 2 - 1:.1f}" y="{y + cell_h / 2 + 3:.1f}" font-size="11" '
                f'text-anchor="middle" fill="{ink}">{value:.2f}</text>'
            )
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every interpolated text above is escaped


def _legend(series: list[str], *, x0: float, width: float) -> tuple[list[str], int]:
    """Colour keys with the series' whole names, flowing into as many lines as they need."""
    parts, x, y = [], x0, 4
    for index, name in enumerate(series):
        text = _short(name, 60)
        needed = 14 + 6.2 * len(text) + 16
        if x > x0 and x + needed > x0 + width:
            x, y = x0, y + 16
        parts.append(
            f'<rect x="{x:.1f}" y="{y}" width="10" height="10" fill="{PALETTE[index % len(PALETTE)]}"/>'
        )
        parts.append(f'<text x="{x + 14:.1f}" y="{y + 9}" font-size="11">{escape(text)}</text>')
        x += needed
    return parts, (y + 16 if series else 0)


def _svg_open(width: float, height: float, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
    )
