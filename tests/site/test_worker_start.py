"""What a Celery worker does when it starts, before its pool forks: the model client loaded once, and what is
loaded by then frozen out of the garbage collector's passes (as the web workers do in ``causalqa_site.wsgi``)."""

import gc
import sys

from celery.signals import worker_init

from causalqa_site.celery import worker_started


def test_a_starting_worker_loads_the_model_client_and_freezes_what_is_loaded():
    # After Django's own start-up (Celery's Django fixup), which the frozen objects then include.
    assert [receiver() for _key, receiver in worker_init.receivers][-1] is worker_started
    before = gc.get_freeze_count()
    try:
        worker_started()
        assert "openai" in sys.modules
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
