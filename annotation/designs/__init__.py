"""Project templates: one per benchmark design the platform serves (issue 8).

A design decides the shape of a project's items, its pipeline stages, its annotation form
additions, its agreement breakdown, its export files and its example dataset. Each design lives
in its own module and registers one ``ProjectDesign`` subclass; the rest of the platform asks
``design_for(project)`` and never branches on the design's name.

    from annotation.designs import design_for
    design = design_for(project)
    design.item_warnings(item)        # invariant checks shown to the annotator

The registry is keyed by ``Project.Design`` values.
"""

from .base import ExportFile, ProjectDesign, Stage, design_for, design_item_context, designs, register

# Importing the modules registers them; keep the order of Project.Design (the creation form's order).
from . import causal_qa_pt, meter, causalbench, causalitycheck, explica  # noqa: E402,F401,I001

__all__ = ["ExportFile", "ProjectDesign", "Stage", "design_for", "design_item_context", "designs", "register"]
