# One image for web, worker, beat and the one-shot migration (docker-compose.yml).
# The same install as CI's: the package with the `ml` extra (BERTScore, local models), at the versions of
# constraints.txt; torch's CPU build comes from the PyTorch index named below.
FROM python:3.11-slim

ARG PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CAUSALQA_VAR_DIR=/data HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /app
# Everything the wheel is built from (pyproject.toml's packages, setup.py's site files, MANIFEST.in's data), so the
# installed package serves its pages and translations on its own (the wheel .ci/wheel-install checks).
COPY pyproject.toml setup.py MANIFEST.in README.md LICENSE constraints.txt ./
COPY causalqa_site ./causalqa_site
COPY core ./core
COPY annotation ./annotation
COPY topics ./topics
COPY generation ./generation
COPY evaluation ./evaluation
COPY designs ./designs
COPY templates ./templates
COPY static ./static
COPY locale ./locale
COPY docs ./docs
RUN pip install --no-cache-dir --extra-index-url "$PIP_EXTRA_INDEX_URL" -c constraints.txt '.[ml]'
# The rest of the tree (.dockerignore keeps out .venv, var/, keys, uploads and releases).
COPY . .
RUN mkdir -p /data /data/beat && python manage.py collectstatic --noinput -v0 \
    && useradd --system --home /app causalqa && chown -R causalqa /data
USER causalqa
EXPOSE 8000
CMD ["gunicorn", "causalqa_site.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4"]
