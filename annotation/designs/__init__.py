"""Project templates: one per benchmark design the platform serves.

A design decides the shape of a project's items, its pipeline stages, its annotation form
additions, its agreement breakdown, its export files and its example dataset. Each design lives
in its own package under ``designs/`` (a Django app) and registers one ``ProjectDesign`` subclass when
its app is ready; the rest of the platform asks
``design_for(project)`` and never branches on the design's name.

    from annotation.designs import design_for
    design = design_for(project)
    design.item_warnings(item)        # invariant checks shown to the annotator

The registry is keyed by each design's key (``Project.design``), in the order of ``INSTALLED_APPS``.
"""

from .base import (
    ExportFile,
    ProjectDesign,
    Stage,
    design_for,
    design_item_context,
    designs,
    register,
    unseen_before_judging,
)

__all__ = [
    "ExportFile",
    "ProjectDesign",
    "Stage",
    "design_for",
    "design_item_context",
    "designs",
    "register",
    "unseen_before_judging",
]
