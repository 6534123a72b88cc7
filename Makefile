# Two commands a newcomer needs: `make run` and `make test`. Each does its own set-up.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# Extras: `dev` (tests), `ml` (torch CPU build, local BERTScore model) and `eval` (lm-evaluation-harness and
# Inspect, which a release exports to) by default, so every stage works.
# A lighter install without the local-model parts: make run EXTRAS=dev (pages then say what needs `ml`).
EXTRAS ?= dev,ml,eval
comma  := ,
STAMP  := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
PORT   ?= 8000
SHELL  := /bin/bash

.PHONY: run test lint setup migrate messages bench clean docs wheel-test constraints

$(VENV)/.installed-%: pyproject.toml
	@echo "==> [1/4] installing into $(VENV) (extras: $(EXTRAS))"
	@echo "    the first time this downloads about 2.4 GB with the ml extra (torch's CPU build) and takes"
	@echo "    10-15 minutes on a small 2-core machine; EXTRAS=dev is lighter. Later runs skip this step."
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	@start=$$(date +%s); \
	$(PY) -m pip install --disable-pip-version-check --progress-bar on -e '.[$(EXTRAS)]' \
	  | grep --line-buffered -E '^(Collecting|Downloading|Installing|Successfully)'; \
	test "$${PIPESTATUS[0]}" = 0 || { echo "    the install failed: see the messages above"; exit 1; }; \
	echo "    installed in $$(( $$(date +%s) - start )) s"
	@touch $@

setup: $(STAMP)

migrate: setup
	@echo "==> [2/4] migrating the database"
	@$(PY) manage.py migrate --noinput -v0

## Serve the site on embedded defaults (SQLite, filesystem broker, demo data) with a worker.
run: migrate
	@echo "==> [3/4] loading the demo (the first time only)"
	@$(PY) manage.py load_demo
	@echo "==> [4/4] starting the web server, a worker, beat and the demo model"
	@PORT=$(PORT) $(PY) -m causalqa_site.launcher

## The whole test suite. Uses DATABASE_URL / REDIS_URL when set.
test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

## ruff's lint rules and formatting (configured in pyproject.toml), as CI checks them.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

## The documentation site (docs/, mkdocs.yml) into site/, strictly: a broken link or a page left out fails.
docs: setup
	@$(PY) -c "import material, mkdocs" 2>/dev/null || $(PY) -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS),docs]'
	$(PY) scripts/docs_pages.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

## The install itself: the wheel into a clean environment, no extra; check, migrate, a worker (.ci/wheel-install).
wheel-test:
	bash .ci/wheel-install

## Refresh constraints.txt (the versions every pinned install uses) from the test environment.
constraints: setup
	@{ sed -n '1,2p' constraints.txt; $(PY) -m pip freeze --exclude-editable | grep -vi '^causalqa'; } > constraints.txt.new
	@mv constraints.txt.new constraints.txt

## Recompile the translations after editing locale/*/LC_MESSAGES/django.po.
messages: setup
	$(PY) manage.py makemessages -l pt_BR --ignore '.venv/*' --ignore 'var/*' --ignore 'benchmarks/*' --ignore 'tests/*' --ignore 'build/*' --ignore 'dist/*'
	$(PY) manage.py compilemessages --ignore '.venv/*'

## Every benchmark in benchmarks/ (see benchmarks/__init__.py): quick sizes, or the table's with FULL=1.
bench: setup
	$(PY) benchmarks/_all.py $(if $(FULL),--full,)

clean:
	rm -rf var/db.sqlite3* var/celery var/media var/test-db.sqlite3*
