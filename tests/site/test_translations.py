"""Every interface string has a Brazilian Portuguese translation, and the compiled catalogues are current."""

from pathlib import Path

import polib
import pytest

ROOT = Path(__file__).resolve().parents[2]
CATALOGUES = sorted(
    path for path in ROOT.glob("*/locale/pt_BR/LC_MESSAGES/django.po") if ".venv" not in path.parts
)
CATALOGUES += [ROOT / "locale/pt_BR/LC_MESSAGES/django.po"]


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
