"""The deployment files say what the deployment page promises: one-shot migrations, health checks on
/readyz, beat's schedule in a volume, an image from the pinned install with the ml extra, and a build
context that carries no developer's environment, database or keys."""

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))["services"]


def test_migrations_run_once_before_the_app_starts():
    services = compose()
    assert services["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    for name in ("web", "worker", "beat"):
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert "migrate" not in str(services[name]["command"])


def test_health_checks_read_readyz_and_beat_keeps_its_schedule_in_a_volume():
    services = compose()
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
    assert "inspect ping" in " ".join(services["worker"]["healthcheck"]["test"])
    schedule = next(part for part in services["beat"]["command"] if part.startswith("--schedule="))
    mounts = [volume.split(":")[1] for volume in services["beat"]["volumes"]]
    assert any(schedule.split("=", 1)[1].startswith(mount + "/") for mount in mounts)


def test_the_image_is_the_pinned_install_with_the_ml_extra():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "-c constraints.txt '.[ml]'" in dockerfile
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    for path in (".venv", "var", ".git", "secret_key", "*.sqlite3"):
        assert path in ignored


def test_the_light_install_has_no_torch_and_every_imported_http_package_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    main = " ".join(project["dependencies"])
    for package in ("httpx", "httpcore", "openai", "kombu"):
        assert f"{package}>=" in main or f"{package}[" in main
    dev = " ".join(project["optional-dependencies"]["dev"])
    assert "bert-score" not in dev and "torch" not in dev and "sentence-transformers" not in dev
    assert any(line.startswith("bert-score") for line in project["optional-dependencies"]["ml"])
    for requirement in project["dependencies"]:
        assert "<" in requirement or requirement.startswith(("threadpoolctl", "drf-spectacular-sidecar")), (
            requirement
        )
