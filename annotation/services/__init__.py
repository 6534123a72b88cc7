"""An item's life, the one set of writes every door shares (the pages, the API, model tasks, commands, the
designs): created (``item_create``, ``items_create``, ``items_create_fast`` for imports), revised
(``item_revise``, ``items_revise``), sent to its next review round (``item_start_round``) and closed with
a curator's decision (``item_close``, ``items_close``). Who may edit it is ``permissions.may_edit_item``.

Each batch form shares its rules with the one-item form (one function computes the values, both call it),
and tests/annotation/test_item_lifecycle.py holds them equal.
"""

from .closing import STATUS_AFTER, DecisionRefused, item_close, items_close
from .creation import (
    A_MODEL,
    COPY_COLUMNS,
    ITEM_COLUMNS,
    ITEM_CONSTANTS,
    NOBODY,
    NewItem,
    item_create,
    item_row,
    item_state,
    items_create,
    items_create_fast,
)
from .revisions import (
    EDITABLE_FIELDS,
    NEW_ROUND,
    OPTION_FIELDS,
    Author,
    EditConflict,
    ItemChange,
    UndoRefused,
    answer_fields,
    first_revision,
    item_revise,
    item_snapshot,
    item_start_round,
    item_undo,
    items_revise,
)

__all__ = [
    "A_MODEL",
    "NOBODY",
    "EDITABLE_FIELDS",
    "COPY_COLUMNS",
    "ITEM_COLUMNS",
    "ITEM_CONSTANTS",
    "NEW_ROUND",
    "OPTION_FIELDS",
    "STATUS_AFTER",
    "Author",
    "DecisionRefused",
    "EditConflict",
    "ItemChange",
    "NewItem",
    "answer_fields",
    "first_revision",
    "item_close",
    "item_create",
    "item_revise",
    "item_row",
    "item_state",
    "item_snapshot",
    "item_start_round",
    "items_close",
    "items_create",
    "items_create_fast",
    "items_revise",
    "item_undo",
    "UndoRefused",
]
