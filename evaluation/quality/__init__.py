"""Quality control of annotations: label aggregation with annotator models, gold questions, adaptive overlap."""
