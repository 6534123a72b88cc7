"""A release's zip, made once and kept: a release never changes, so its download need not be compressed again
for every client.

The worker makes the zip of every format right after the cut (``release_archive_store``), while downloads
already stream; a download then sends the kept file (``stored_archive``). The file's name is a digest of what
the zip holds: the release's checksum (every frozen record), the formats, the card as rendered now (the
project's name and description are in it) and ``LAYOUT``. A download whose zip would differ (a subset of
formats, a project renamed since) finds no file of that name and streams as before, so what is sent is always
byte for byte what the stream would send. The files live outside the media folder (a debug server serves that
to anyone) and go with their release.
"""

import hashlib
import logging
import os
import shutil
import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction

from .card import FORMATS
from .export import readme_bytes, zip_stream

logger = logging.getLogger(__name__)

# Raised when the export's files change shape in a new version of this code: zips kept before are then not
# sent again (their names no longer match), and ``manage.py release_archive`` makes them anew.
LAYOUT = 2  # 2: the harness task folders (lm-eval/, inspect/)


def archive_folder(release_id: int) -> Path:
    return Path(settings.RELEASE_ARCHIVE_DIR) / str(release_id)


def archive_path(release, formats: tuple[str, ...], readme: bytes) -> Path:
    """Where the zip of ``release`` in ``formats`` with this card is kept (whether or not it is there)."""
    key = hashlib.sha256(f"{LAYOUT}\0{release.checksum}\0{','.join(formats)}\0".encode() + readme)
    return archive_folder(release.pk) / f"{'-'.join(formats)}-{key.hexdigest()[:32]}.zip"


def kept_archive(release, formats: tuple[str, ...] = FORMATS) -> Path | None:
    """The path of the kept zip of ``release`` in ``formats``, or None when there is none for what a download
    would send now."""
    path = archive_path(release, formats, readme_bytes(release, formats))
    return path if path.is_file() else None


def stored_archive(release, formats: tuple[str, ...] = FORMATS):
    """The kept zip of ``release`` in ``formats``, open for reading, or None when there is none for what a
    download would send now."""
    try:
        return open(archive_path(release, formats, readme_bytes(release, formats)), "rb")  # noqa: SIM115
    except OSError:
        return None


def release_archive_store(*, release, formats: tuple[str, ...] = FORMATS) -> Path:
    """Make the zip of a ready ``release`` and keep it, in place of an earlier one in the same formats (made
    before a rename). Written under a temporary name, flushed to the disk and renamed: a download never reads
    a part, nor a file a crash left half-written. Returns its path."""
    readme = readme_bytes(release, formats)
    target = archive_path(release, formats, readme)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".partial-{uuid.uuid4().hex}")
    try:
        with open(partial, "wb") as file:
            for chunk in zip_stream(release, formats, readme=readme):
                file.write(chunk)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    for earlier in target.parent.glob(f"{'-'.join(formats)}-*.zip"):
        if earlier != target:
            earlier.unlink(missing_ok=True)
    return target


def release_archive_keep(*, release, only_if_missing: bool = False) -> None:
    """Keep the zip of a ready release, as every cut does (``evaluation.services.release_build_and_keep``).
    Downloads stream the release until its zip is kept; one that cannot be kept (a full disk) leaves them
    streaming and the release ready."""
    if not release.is_ready or (only_if_missing and kept_archive(release)):
        return
    try:
        release_archive_store(release=release)
    except Exception:
        logger.exception("the zip of release %s could not be kept; downloads stream it", release)


def release_archives_remove(release_id: int) -> None:
    """Remove every zip kept for the release ``release_id``."""
    shutil.rmtree(archive_folder(release_id), ignore_errors=True)


def archives_go_with_their_release(sender, instance, **kwargs) -> None:
    """Connected to the release's ``post_delete`` (a release goes only with its project, by cascade, from
    whatever deletes that): once the deletion is committed, its zips go too."""
    release_id = instance.pk
    transaction.on_commit(lambda: release_archives_remove(release_id), robust=True)
