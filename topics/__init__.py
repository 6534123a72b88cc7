"""Topic modelling of a project's questions: embeddings, clusters, their words, near-duplicates, class balance.

``clustering`` and ``ctfidf`` are free of Django; ``embeddings`` stores vectors; ``run`` is the job;
``balance`` proposes generation jobs for classes short of their targets.
"""
