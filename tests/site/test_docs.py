"""The documentation stays true to its sources: generated pages current, every setting documented."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_pages_are_current():
    result = subprocess.run(
        [sys.executable, "scripts/docs_pages.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_the_quality_control_table_is_the_benchmarks_recorded_output():
    """The measured table of docs/quality-control.md is the one the benchmark prints, from its recorded line."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import _table
    import quality_control

    entry = next(
        (e for k, e in _table.load(ROOT / "benchmarks/results.jsonl").items() if k[0] == "quality_control"),
        None,
    )
    assert entry is not None, "no full-size run of benchmarks/quality_control.py in benchmarks/results.jsonl"
    figures = entry["figures"]
    page = (ROOT / "docs/quality-control.md").read_text(encoding="utf-8")
    assert "\n".join(quality_control.table(figures)) in page
    assert figures["judgments_saved_share"] >= 0.3, figures
    assert figures["accuracy_adaptive"] >= figures["accuracy_fixed3_majority"], figures
    assert figures["accuracy_fixed3_dawid_skene"] >= figures["accuracy_fixed3_majority"], figures
    assert figures["accuracy_fixed3_mace"] >= figures["accuracy_fixed3_majority"], figures


# A variable read by name: the settings' helpers, os.environ and os.getenv.
ENV_READ = re.compile(
    r"""(?:\benv_(?:str|bool|int|list)\(|os\.environ(?:\.get)?[\[(]|os\.getenv\()\s*["']([A-Z][A-Z0-9_]+)["']"""
)


def test_every_environment_variable_of_the_settings_is_documented():
    settings = (ROOT / "causalqa_site/settings.py").read_text(encoding="utf-8")
    names = set(re.findall(r'env_(?:str|bool|int|list)\(\s*"([A-Z0-9_]+)"', settings))
    names |= {"LLM_API_KEY", "PORT", "EMBEDDING_API_KEY"}
    # and whatever the apps read themselves (the launcher's ports, the shipped harness files' model).
    for package in ("causalqa_site", "core", "annotation", "generation", "evaluation", "designs"):
        for path in (ROOT / package).rglob("*.py"):
            names |= set(ENV_READ.findall(path.read_text(encoding="utf-8")))
    page = (ROOT / "docs/configuration.md").read_text(encoding="utf-8")
    missing = sorted(name for name in names if f"`{name}`" not in page)
    assert len(names) > 40
    assert missing == []


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert pages
    assert sorted(page for page in pages if page not in nav) == []


# A count of work sittings or computers ("the third ..."), "this" one, a tracker's number, or an account of how
# the work went ("previously", "we tried", "the ... bug", a work log).
ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
    "fourteenth|fifteenth"
)
SITTINGS = "session|machine"
NARRATION = re.compile(
    rf"\b(?:{ORDINALS})\s+(?:{SITTINGS})\b|\bthis\s+(?:{SITTINGS.split('|')[0]})\b|\bissue \d+\b"
    r"|\bpreviously\b|\bwe (?:tried|found|decided)\b|\bwork ?logs?\b|\bused to (?:be|live|fail)\b|\bthe [a-z-]+ bug\b",
    re.IGNORECASE,
)


def test_nothing_in_the_repository_narrates_its_making():
    tracked = subprocess.run(
        [
            "git",
            "ls-files",
            "*.md",
            "*.py",
            "*.html",
            "*.yaml",
            "*.yml",
            "*.toml",
            "*.txt",
            "Makefile",
            "Dockerfile",
            ".ci/*",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = []
    for name in tracked:
        path = ROOT / name
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if NARRATION.search(line) and name != "tests/site/test_docs.py":
                found.append(f"{name}:{number}: {line.strip()[:100]}")
    assert found == []
