"""The deployment files say what the deployment page promises: one-shot migrations, health checks on
/readyz, beat's schedule in a volume, an image from the pinned install with the ml extra, and a build
context that carries no developer's environment, database or keys."""

import ast
import importlib.metadata
import re
import sys
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
        assert "<" in requirement or requirement.startswith("drf-spectacular-sidecar"), requirement


def project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def packages():
    return [name.rstrip("*") for name in project()["tool"]["setuptools"]["packages"]["find"]["include"]]


def test_every_package_the_app_code_imports_is_declared():
    """An import the code makes that pyproject.toml does not declare works only while another package happens to
    bring it, until an install resolves otherwise. The harness files a release ships run in the harness's own
    environment and are left out."""

    def name(requirement):
        return re.split(r"[<>=\[ ;!~]", requirement, maxsplit=1)[0].lower().replace("_", "-")

    declared = {name(r) for r in project()["project"]["dependencies"]}
    for extra in project()["project"]["optional-dependencies"].values():
        declared |= {name(r) for r in extra}
    distributions = importlib.metadata.packages_distributions()
    ours = set(packages())
    undeclared = set()
    for package in ours:
        for path in (ROOT / package).rglob("*.py"):
            if "shipped" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.split(".")[0]
                    if top in sys.stdlib_module_names or top in ours or top == "__future__":
                        continue
                    owners = {d.lower().replace("_", "-") for d in distributions.get(top, [top])}
                    if not owners & declared:
                        undeclared.add(f"{top} ({path.relative_to(ROOT)})")
    assert sorted(undeclared) == []


def test_the_image_installs_from_everything_the_wheel_is_built_from():
    """The image's install is the wheel's: every package, setup.py's site files and MANIFEST.in's data are copied
    before pip runs, so the installed package does not lean on the working tree copied after it."""
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    before_install = dockerfile.split("RUN pip install", 1)[0]
    copied = set()
    for line in before_install.splitlines():
        if line.startswith("COPY "):
            copied |= set(line.split()[1:-1])
    site_files = re.search(
        r"SITE_FILES = \(([^)]*)\)", (ROOT / "setup.py").read_text(encoding="utf-8")
    ).group(1)
    wanted = set(packages()) | set(re.findall(r'"([^"]+)"', site_files)) | {"setup.py", "MANIFEST.in"}
    assert sorted(wanted - copied) == []


def test_every_package_carries_its_data_files_into_the_wheel():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    for package in packages():
        assert re.search(rf"^recursive-include {package} .*\*\.html.*\*\.mo", manifest, re.M), package
