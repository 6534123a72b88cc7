"""The embedded default's Celery broker and result store on the filesystem (no server), each file written whole.

kombu's filesystem transport creates a message's file in the queue folder and then writes into it; a worker
polling that folder may take the file in between. It then read an empty message, and the JSON error stopped it
("Unrecoverable error: JSONDecodeError"), the message lost: a test's run, sent while the worker's embedded beat
sent its periodic sweep, was never started. Celery's file result backend writes results the same way, for
callers polling them. Here both write under a temporary name neither reader looks at (it starts with a dot)
and rename the file into place when it is complete: a rename within one folder is atomic, so a reader finds a
whole file or none.

``settings`` selects them: ``CELERY_BROKER_TRANSPORT = "core.broker:Transport"`` and
``CELERY_RESULT_BACKEND = "core.broker:ResultFiles+file://<folder>"``.
"""

import os
import uuid
from time import monotonic

from celery.backends.filesystem import FilesystemBackend
from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


def write_whole(path: str | bytes, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader never sees a partial file."""
    path = os.fsdecode(path)
    folder, name = os.path.split(path)
    partial = os.path.join(folder, f".partial-{uuid.uuid4().hex}-{name}")
    try:
        with open(partial, "wb") as file:
            file.write(data)
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.unlink(partial)
        raise


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        """Put ``payload`` onto ``queue``: the file kombu names, written whole."""
        filename = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        try:
            write_whole(os.path.join(self.data_folder_out, filename), str_to_bytes(dumps(payload)))
        except OSError as exc:
            raise ChannelError(f"Cannot add file {filename!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel


class ResultFiles(FilesystemBackend):
    def set(self, key, value):
        write_whole(self._filename(key), str_to_bytes(value))
