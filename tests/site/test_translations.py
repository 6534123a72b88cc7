"""Every interface string has a Brazilian Portuguese translation, the compiled catalogues are current, and making
the messages again (``make messages``) changes no translation: each app's strings are in its own catalogue."""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIPPED = {".venv", ".git", "node_modules", "var", "test-artifacts", "site", "build", "dist"}
CATALOGUES = sorted(
    path
    for path in ROOT.glob("**/locale/pt_BR/LC_MESSAGES/django.po")
    if not SKIPPED & set(path.relative_to(ROOT).parts) and "tests" not in path.relative_to(ROOT).parts
)


@pytest.mark.parametrize("po_path", CATALOGUES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_string_is_translated_and_compiled(po_path):
    po = polib.pofile(str(po_path))
    untranslated = [entry.msgid for entry in po if not entry.translated() and not entry.obsolete]
    assert untranslated == [], f"untranslated in {po_path}: {untranslated[:10]}"
    mo_path = po_path.with_suffix(".mo")
    assert mo_path.exists(), f"run `make messages` to compile {po_path}"
    compiled = {
        (entry.msgctxt, entry.msgid): entry.msgstr or entry.msgstr_plural
        for entry in polib.mofile(str(mo_path))
    }
    current = {
        (entry.msgctxt, entry.msgid): entry.msgstr or entry.msgstr_plural
        for entry in po
        if entry.translated()
    }
    assert {key: compiled.get(key) for key in current} == current, f"{mo_path} is stale: run `make messages`"


def catalogue_entries(po_path: Path) -> dict:
    """(context, msgid) -> (translation, fuzzy, obsolete) of every entry."""
    return {
        (entry.msgctxt, entry.msgid): (
            entry.msgstr or tuple(sorted(entry.msgstr_plural.items())),
            entry.fuzzy,
            entry.obsolete,
        )
        for entry in polib.pofile(str(po_path))
    }


def makemessages_command() -> list[str]:
    """The Makefile's ``messages`` step that extracts the strings, as the Makefile runs it."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    line = next(line for line in makefile.splitlines() if "manage.py makemessages" in line)
    return [sys.executable if word == "$(PY)" else word for word in shlex.split(line.strip())]


def test_making_the_messages_again_changes_no_translation(tmp_path):
    if shutil.which("xgettext") is None or shutil.which("msgmerge") is None:
        pytest.skip("GNU gettext (xgettext, msgmerge) is not installed")
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=lambda folder, names: [name for name in names if name in SKIPPED])
    environment = {**os.environ, "CAUSALQA_VAR_DIR": str(tmp_path / "var")}
    done = subprocess.run(
        makemessages_command(), cwd=tree, env=environment, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    made = sorted(
        path.relative_to(tree)
        for path in tree.glob("**/locale/pt_BR/LC_MESSAGES/django.po")
        if "tests" not in path.relative_to(tree).parts
    )
    assert made == [path.relative_to(ROOT) for path in CATALOGUES], "a catalogue appeared or went"
    for path in made:
        before, after = catalogue_entries(ROOT / path), catalogue_entries(tree / path)
        gone = sorted(key[1] for key in before.keys() - after.keys())
        new = sorted(key[1] for key in after.keys() - before.keys())
        changed = sorted(key[1] for key in before.keys() & after.keys() if before[key] != after[key])
        assert (gone, new, changed) == ([], [], []), f"`make messages` changes {path}: gone, new, changed"
