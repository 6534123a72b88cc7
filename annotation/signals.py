"""Domain events other apps may react to (dependencies point into annotation, never out of it).

``revision_requested`` is sent, after the transaction commits, when a curator decides that an
item needs revision. Keyword arguments: ``item`` and ``decision`` (the CurationDecision, whose
``note`` holds the curator's feedback). The generation app connects a receiver that asks a
model to rewrite the answer; without one, the item waits for a person to edit it.
"""

from django.dispatch import Signal

revision_requested = Signal()
