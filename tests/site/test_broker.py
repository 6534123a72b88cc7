"""The embedded default's broker and result store on the filesystem write each file whole (core.broker).

kombu's own filesystem transport creates a message's file before writing it; a worker polling the folder in
between read an empty message and stopped ("Unrecoverable error: JSONDecodeError"). With the second test's
1,000 messages of 100 KB sent by one process while another takes them, kombu's transport read an empty message
in each of 7 runs here (``TRANSPORT = "filesystem"``); this one in none."""

import contextlib
import json
import multiprocessing
import os
import subprocess
import sys
from queue import Empty

from kombu import Connection

from causalqa_site.celery import app
from core import broker

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRANSPORT = "core.broker:Transport"


def folders(root) -> dict:
    for sub in ("processed", "control"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    return {
        "data_folder_in": str(root),
        "data_folder_out": str(root),
        "processed_folder": os.path.join(root, "processed"),
        "control_folder": os.path.join(root, "control"),
        "store_processed": False,
    }


def send(root: str, count: int, size: int) -> None:
    sys.path.insert(0, ROOT)
    with Connection(transport=TRANSPORT, transport_options=folders(root)) as connection:
        queue = connection.SimpleQueue("perguntas")
        for number in range(count):
            queue.put({"n": number, "texto": "ç" * size})


def test_a_message_is_invisible_until_it_is_whole(tmp_path, monkeypatch):
    """Paused between writing and renaming: what a polling worker would take then is nothing, not an empty file."""
    taken_while_writing = []
    replace = os.replace

    with Connection(transport=TRANSPORT, transport_options=folders(tmp_path)) as connection:
        queue = connection.SimpleQueue("perguntas")
        channel = queue.channel

        def pausing_replace(partial, path):
            with open(partial, "rb") as file:
                assert json.loads(file.read())  # written in full before it is renamed
            with contextlib.suppress(Empty):
                taken_while_writing.append(channel._get("perguntas"))
            replace(partial, path)

        monkeypatch.setattr(broker.os, "replace", pausing_replace)
        queue.put({"pergunta": "Por que a chuva causou a enchente?"})
        message = queue.get(timeout=1)
        assert message.payload == {"pergunta": "Por que a chuva causou a enchente?"}
    assert taken_while_writing == []


def test_messages_sent_by_another_process_while_a_worker_polls_all_arrive_whole(tmp_path):
    count, size = 1_000, 50_000  # 100 KB each in UTF-8
    sender = multiprocessing.get_context("spawn").Process(target=send, args=(str(tmp_path), count, size))
    received = set()
    with Connection(transport=TRANSPORT, transport_options=folders(tmp_path)) as connection:
        queue = connection.SimpleQueue("perguntas")
        sender.start()
        try:
            while len(received) < count:
                message = queue.get(timeout=30)
                assert message.payload["texto"] == "ç" * size
                received.add(message.payload["n"])
                message.ack()
        finally:
            sender.join(timeout=30)
    assert received == set(range(count))
    assert [name for name in os.listdir(tmp_path) if name.startswith(".partial")] == []


def test_a_result_file_is_replaced_whole(tmp_path, monkeypatch):
    backend = broker.ResultFiles(url=f"file://{tmp_path}", app=app)
    backend.set(b"celery-task-meta-1", b'{"status": "PENDING"}')
    replace = os.replace

    def checking_replace(partial, path):
        assert backend.get(b"celery-task-meta-1") == b'{"status": "PENDING"}'  # the old one, until the rename
        replace(partial, path)

    monkeypatch.setattr(broker.os, "replace", checking_replace)
    backend.set(b"celery-task-meta-1", b'{"status": "SUCCESS", "result": "pronto"}')
    assert backend.get(b"celery-task-meta-1") == b'{"status": "SUCCESS", "result": "pronto"}'
    assert sorted(os.listdir(tmp_path)) == ["celery-task-meta-1"]


def test_the_embedded_default_uses_them():
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env["DJANGO_SETTINGS_MODULE"] = "causalqa_site.settings"
    code = (
        "import django; django.setup()\n"
        "from causalqa_site.celery import app\n"
        "with app.connection_for_write() as c: print(type(c.transport).__module__, type(app.backend).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["core.broker", "ResultFiles"]
