"""What annotation asks of the annotator models (annotation.label_models), answered from this package."""


class LabelModelsProvider:
    def round_confidence(self, *, item, project):
        from .selectors import round_confidence

        return round_confidence(item=item, project=project)

    def item_estimates(self, *, project, items):
        from .selectors import item_estimates

        return item_estimates(project=project, items=items)

    def project_summary(self, *, project):
        from .selectors import quality_summary

        return quality_summary(project)
