"""Two figures of the security audit, re-measured: the XSS crawl and the annotators' race.

    .venv/bin/python benchmarks/security_audit.py                 # SQLite (its own file)
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME .venv/bin/python benchmarks/security_audit.py
    .venv/bin/python benchmarks/security_audit.py --quick         # fewer pages per role, a smaller race

XSS crawl: a project whose every field people write (names, guidelines, questions, contexts, answers, options
and rationales, metadata, topic labels, comments, curator notes, release notes) carries script and attribute
payloads; each role (owner, curator, annotator, a staff administrator) follows every link of every page from
the home page, breadth first, GET only (sign-out excepted), up to --pages per role. A page fails when a payload
appears in it unescaped. Race: --annotators annotators ask for the next item at the same instant (threads, each
on its own connection) for items with an overlap of 3; no item may be handed more than 3 times, nobody twice.
Ends with one JSON line.
"""

import argparse
import json
import re
import sys
import threading
import time
from collections import deque
from pathlib import Path
from urllib.parse import urljoin, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _django  # noqa: E402

SCRIPT = '<script>alert("xss")</script>'
ATTRIBUTE = '"><img src=x onerror=alert(1)>'
PAYLOAD = f"{SCRIPT}{ATTRIBUTE}"
# What must never reach a page raw: the script tag, the injected element.
RAW = ('<script>alert("xss")', "<img src=x onerror=alert(1)>")
SLUG = "audit-xss"
SKIP = re.compile(r"^/(static|logout|accounts/logout|i18n/setlang)|/(download|export)|\.(zip|csv|jsonl)$")


def build():
    from django.contrib.auth import get_user_model

    from annotation.judging import item_edit
    from annotation.models import Item, Membership, Project
    from annotation.queue import assignment_next
    from annotation.services import item_close
    from evaluation.services import release_cut
    from tests.annotation.helpers import judge
    from tests.factories import ItemFactory, OptionFactory
    from topics.models import Topic

    Project.objects.filter(slug=SLUG).delete()
    User = get_user_model()
    User.objects.filter(username__startswith="audit-").delete()
    users = {
        role: User.objects.create_user(f"audit-{role}", password="x", first_name=f"Nome {PAYLOAD}")
        for role in ("owner", "curator", "annotator", "annotator2", "annotator3", "staff")
    }
    users["staff"].is_staff = users["staff"].is_superuser = True
    users["staff"].save()
    project = Project.objects.create(
        name=f"Projeto {PAYLOAD}", slug=SLUG, guidelines=f"# Diretrizes {PAYLOAD}\n\n{PAYLOAD}", overlap=3
    )
    for role, member in (("owner", "owner"), ("curator", "curator"), ("annotator", "annotator")):
        Membership.objects.create(user=users[role], project=project, role=member)
    for name in ("annotator2", "annotator3"):
        Membership.objects.create(user=users[name], project=project, role="annotator")
    topic = Topic.objects.create(project=project, label=f"Tópico {PAYLOAD}")
    items = []
    for n in range(6):
        item = ItemFactory(
            project=project,
            question=f"Pergunta {n} {PAYLOAD}?",
            context=f"Contexto {PAYLOAD}",
            reference_answer=f"Resposta {PAYLOAD}.",
            causal_class="associational",
            metadata={"task": f"T {PAYLOAD}", f"chave {PAYLOAD}": PAYLOAD},
            topic=topic,
        )
        OptionFactory(item=item, text=f"Opção {PAYLOAD}", rationale=f"Razão {PAYLOAD}", position=0)
        items.append(item)
    annotators = [users["annotator"], users["annotator2"], users["annotator3"]]
    for annotator in annotators:
        for _ in range(3):
            assignment = assignment_next(project=project, annotator=annotator)
            if assignment is None:
                break
            if annotator == annotators[0]:
                item_edit(
                    item=assignment.item,
                    user=annotator,
                    part="answer",
                    values=f"Resposta editada {PAYLOAD}.",
                    base_version=assignment.item.version,
                )
            judge(assignment, vote="accept", comment=f"Comentário {PAYLOAD}")
    reviewed = Item.objects.filter(project=project, judgments__isnull=False).distinct()
    for index, item in enumerate(reviewed):
        decision = "approve" if index % 2 == 0 else "revise"
        item_close(item=item, curator=users["curator"], decision=decision, note=f"Nota {PAYLOAD}")
    if Item.objects.filter(project=project, status=Item.Status.APPROVED).exists():
        release_cut(project=project, notes=f"Notas {PAYLOAD}")
    return users


def crawl(user, limit: int) -> dict:
    from django.test import Client

    client = Client()
    client.force_login(user)
    seen, queue = {"/"}, deque(["/"])
    fetched, unescaped, shown, statuses = 0, [], 0, {}
    while queue and fetched < limit:
        path = queue.popleft()
        response = client.get(path)
        fetched += 1
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        if response.status_code in (301, 302) and response.get("Location"):
            target = urljoin(path, response["Location"])
            if urlsplit(target).netloc in ("", "testserver") and target not in seen:
                seen.add(target)
                queue.append(
                    urlsplit(target).path + (f"?{urlsplit(target).query}" if urlsplit(target).query else "")
                )
            continue
        if "html" not in response.get("Content-Type", "") or getattr(response, "streaming", False):
            continue
        body = response.content.decode("utf-8", "replace")
        if any(raw in body for raw in RAW):
            unescaped.append(path)
        shown += "&lt;script&gt;alert(" in body or "&lt;img src=x onerror=alert(1)&gt;" in body
        for link in re.findall(r'(?:href|hx-get)="([^"#]+)', body):
            link = link.replace("&amp;", "&")
            parts = urlsplit(urljoin(path, link))
            if parts.netloc not in ("", "testserver"):
                continue
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            if target in seen or SKIP.search(parts.path):
                continue
            seen.add(target)
            queue.append(target)
    return {
        "fetched": fetched,
        "unescaped": unescaped,
        "shown": shown,
        "statuses": statuses,
        "left": len(queue),
    }


def race(n_annotators: int, n_items: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotation.models import Assignment, Membership, Project
    from annotation.queue import assignment_next
    from tests.factories import ItemFactory

    Project.objects.filter(slug="audit-race").delete()
    get_user_model().objects.filter(username__startswith="audit-race-").delete()
    project = Project.objects.create(name="Race", slug="audit-race", overlap=3)
    items = [ItemFactory(project=project) for _ in range(n_items)]
    users = []
    for number in range(n_annotators):
        user = get_user_model().objects.create_user(f"audit-race-{number}", password="x")
        Membership.objects.create(user=user, project=project, role="annotator")
        users.append(user)
    barrier = threading.Barrier(n_annotators)
    results, errors = {}, []

    def ask(user):
        try:
            barrier.wait(timeout=60)
            assignment = assignment_next(project=Project.objects.get(pk=project.pk), annotator=user)
            results[user.username] = assignment.item_id if assignment else None
        except Exception as exc:  # noqa: BLE001 - counted and reported
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=ask, args=(user,)) for user in users]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    seconds = time.perf_counter() - started
    per_item = {item.pk: Assignment.objects.filter(item=item).count() for item in items}
    handed = [item_id for item_id in results.values() if item_id is not None]
    return {
        "annotators": n_annotators,
        "items": n_items,
        "handed": len(handed),
        "nothing_left": list(results.values()).count(None),
        "max_per_item": max(per_item.values()),
        "over_overlap": sum(1 for count in per_item.values() if count > 3),
        "errors": errors,
        "seconds": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages fetched per role at most")
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.pages = 150
    _django.setup("security-audit")
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]
    started = time.process_time()
    users = build()
    figures = {"database": _django.database_label(), "xss": {}}
    for role in ("owner", "curator", "annotator", "staff"):
        result = crawl(users[role], args.pages)
        figures["xss"][role] = result
        print(
            f"XSS crawl as {role}: {result['fetched']} fetches, {result['shown']} pages showing a payload escaped, "
            f"{len(result['unescaped'])} with a raw payload, statuses {dict(sorted(result['statuses'].items()))}, {result['left']} links left"
        )
        for path in result["unescaped"]:
            print(f"  unescaped: {path}")
    total = sum(result["fetched"] for result in figures["xss"].values())
    bad = sum(len(result["unescaped"]) for result in figures["xss"].values())
    print(f"XSS crawl: {total} fetches, {bad} with a payload unescaped")
    n = 5 if args.quick else args.annotators
    figures["race"] = race(n, n_items=max(1, n // 4))
    r = figures["race"]
    print(
        f"Race: {r['annotators']} annotators at once for {r['items']} items (overlap 3): {r['handed']} handed, "
        f"{r['nothing_left']} told nothing is left, at most {r['max_per_item']} per item, {r['over_overlap']} "
        f"over the overlap, {len(r['errors'])} errors, {r['seconds']} s"
    )
    figures["xss_fetches"], figures["xss_unescaped"] = total, bad
    figures["cpu_seconds"] = round(time.process_time() - started, 1)
    print(
        json.dumps(
            {key: figures[key] for key in ("database", "xss_fetches", "xss_unescaped", "race", "cpu_seconds")}
        )
    )


if __name__ == "__main__":
    main()
