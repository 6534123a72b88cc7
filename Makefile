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

.PHONY: run test lint setup migrate messages bench clean

$(VENV)/.installed-%: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
	@touch $@

setup: $(STAMP)

migrate: setup
	@$(PY) manage.py migrate --noinput -v0

## Serve the site on embedded defaults (SQLite, filesystem broker, demo data) with a worker.
run: migrate
	@$(PY) manage.py load_demo
	@PORT=$(PORT) $(PY) -m causalqa_site.launcher

## The whole test suite. Uses DATABASE_URL / REDIS_URL when set.
test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

## ruff's lint rules and formatting (configured in pyproject.toml), as CI checks them.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

## Recompile the translations after editing locale/*/LC_MESSAGES/django.po.
messages: setup
	$(PY) manage.py makemessages -l pt_BR --ignore '.venv/*' --ignore 'var/*' --ignore 'benchmarks/*' --ignore 'tests/*'
	$(PY) manage.py compilemessages --ignore '.venv/*'

## Every benchmark in benchmarks/ (see benchmarks/__init__.py): quick sizes, or the table's with FULL=1.
bench: setup
	$(PY) benchmarks/_all.py $(if $(FULL),--full,)

clean:
	rm -rf var/db.sqlite3* var/celery var/media var/test-db.sqlite3*
