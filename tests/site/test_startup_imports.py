"""Starting Django loads no heavy library: every process (web worker, Celery worker, management command,
test process) starts it, and few of them need scikit-learn or a model SDK.

With scikit-learn (and the pandas and scipy it pulls in), the openai SDK and pyarrow imported by the
apps at start-up, ``django.setup()`` took 1.8 s and 294 MB; the modules that use them import them inside the
functions that need them. Each check runs in a fresh interpreter, since this test process has loaded
everything already.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

# Top-level packages that no process may pay for unless it uses them.
HEAVY = (
    "sklearn",
    "scipy",
    "pandas",
    "pyarrow",
    "openai",
    "httpx",
    "pydantic",
    "torch",
    "transformers",
    "sentence_transformers",
    "bert_score",
    "krippendorff",
    "statsmodels",
)

SETUP = "import django; django.setup()"
# What a web worker has loaded after its first request: the URLs, hence every view module, and the WSGI app.
WORKER = (
    SETUP + "; from django.urls import get_resolver; get_resolver().url_patterns"
    "; from django.core.wsgi import get_wsgi_application; get_wsgi_application()"
)


def loaded_after(code: str) -> list[str]:
    script = f"import json, sys; {code}; print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "causalqa_site.settings", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", [SETUP, WORKER], ids=["django.setup", "web worker"])
def test_startup_loads_no_heavy_library(code):
    loaded = set(loaded_after(code))
    assert sorted(loaded & set(HEAVY)) == []


def test_the_check_sees_a_heavy_import():
    """The subprocess check itself works: a module imported at start-up is listed."""
    assert "pyarrow" in loaded_after(SETUP + "; import pyarrow")
