"""Reactions of the generation app to annotation events."""

import logging

from django.dispatch import receiver

from annotation.signals import revision_requested

from .services import job_request_revision

logger = logging.getLogger(__name__)


@receiver(revision_requested, dispatch_uid="generation.revise_with_a_model")
def revise_with_a_model(sender, item, decision=None, **kwargs):
    """A curator asked for a revision: a model rewrites the answer, if the project has one to use."""
    try:
        job = job_request_revision(item=item, decision=decision)
    except Exception:  # noqa: BLE001 - the curator's decision stands whatever happens here
        logger.exception("could not start a revision job for item %s", item.pk)
        return
    if job is None:
        logger.info("item %s waits for a person to revise it (no model endpoint for revisions)", item.pk)
