FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CAUSALQA_VAR_DIR=/data
WORKDIR /app
COPY pyproject.toml README.md ./
COPY causalqa_site ./causalqa_site
COPY annotation ./annotation
COPY generation ./generation
COPY evaluation ./evaluation
COPY designs ./designs
RUN pip install --no-cache-dir .
COPY . .
RUN mkdir -p /data && python manage.py collectstatic --noinput -v0
EXPOSE 8000
CMD ["gunicorn", "causalqa_site.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4"]
