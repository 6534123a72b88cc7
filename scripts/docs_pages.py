"""Write the documentation pages that come from another source, so the docs never drift from it.

    .venv/bin/python scripts/docs_pages.py           # rewrite docs/metrics.md and docs/performance.md
    .venv/bin/python scripts/docs_pages.py --check   # exit 1 when either is out of date (the tests run it)

- ``docs/metrics.md`` is the in-app help page (``evaluation/templates/evaluation/metrics_help.html``) rendered
  in English: one source for both.
- ``docs/performance.md`` is the table ``benchmarks/_table.py`` makes from the benchmarks' JSON lines
  (``benchmarks/results.jsonl``).
- ``docs/quality-control.md``: its measured table, between two markers, is the one
  ``benchmarks/quality_control.py`` prints, made from that benchmark's latest full-size line there.
"""

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

METRICS_INTRO = """# Metrics and their definitions

<!-- Made by scripts/docs_pages.py from the in-app help page (/evaluation/help/metrics/): edit the template
     evaluation/templates/evaluation/metrics_help.html, then run the script. -->

"""


def metrics_page() -> str:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "causalqa_site.settings")
    import django

    django.setup()
    from django.template import engines
    from django.utils import translation

    source = (ROOT / "evaluation/templates/evaluation/metrics_help.html").read_text(encoding="utf-8")
    content = source.split("{% block content %}", 1)[1].rsplit("{% endblock %}", 1)[0]
    with translation.override("en"):
        html = engines["django"].from_string("{% load i18n %}" + content).render({})
    lead = re.search(r'<p class="lead">(.*?)</p>', html, re.S).group(1).strip()
    parts = [METRICS_INTRO, lead, "\n"]
    for section in re.finditer(r'<section[^>]*id="([^"]+)">\s*<h2>(.*?)</h2>(.*?)</section>', html, re.S):
        anchor, title, table = section.groups()
        table = re.sub(r"\n\s*", "\n", table.strip())
        parts.append(f"\n## {title.strip()} {{#{anchor}}}\n\n{table}\n")
    return "".join(parts)


def performance_page() -> str:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import _table

    return _table.page(_table.load(ROOT / "benchmarks" / "results.jsonl"))


QUALITY_BEGIN = (
    "<!-- Made by scripts/docs_pages.py from the latest full-size run of benchmarks/quality_control.py in "
    "benchmarks/results.jsonl: do not edit. -->\n"
)
QUALITY_END = "<!-- End of the generated table. -->\n"


def quality_control_page() -> str:
    """docs/quality-control.md with its measured table rewritten from the benchmark's recorded JSON line."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import _table
    import quality_control

    text = (ROOT / "docs" / "quality-control.md").read_text(encoding="utf-8")
    before, rest = text.split(QUALITY_BEGIN, 1)
    _old, after = rest.split(QUALITY_END, 1)
    latest = _table.load(ROOT / "benchmarks" / "results.jsonl")
    entry = next((e for k, e in latest.items() if k[0] == "quality_control" and not k[2]), None)
    table = quality_control.table(entry["figures"]) if entry else ["Not measured yet."]
    return before + QUALITY_BEGIN + "\n" + "\n".join(table) + "\n\n" + QUALITY_END + after


PAGES = {
    "docs/metrics.md": metrics_page,
    "docs/performance.md": performance_page,
    "docs/quality-control.md": quality_control_page,
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true", help="only say whether the pages are current")
    args = parser.parse_args()
    stale = []
    for name, make in PAGES.items():
        path = ROOT / name
        text = make()
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}; run .venv/bin/python scripts/docs_pages.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
