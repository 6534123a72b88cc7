"""REST endpoints of the annotator's and the curator's work: the same actions as the item pages, through the
same services (``annotation.judging``, ``annotation.queue``, ``annotation.services``, ``annotation.item_actions``).

Annotators: take the next item, write its answer or skip it, judge it and change the judgment while the round
is open, edit a part of the item they hold, undo a saved edit. Curators: decide one item, or many at once.

Errors: bad input is a 400 naming the field; an action the item's state no longer allows (a round that moved
on, a decided item, a later edit in the way) is a 409 saying why.
"""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.schema import ErrorOutputSerializer
from core.api.strict import StrictApiMixin, StrictInputSerializer

from . import queue
from .api_permissions import ProjectRole
from .item_actions import bulk_perform
from .judging import (
    EDIT_PARTS,
    AssignmentClosed,
    JudgmentLocked,
    answer_rewrite,
    answer_submit,
    item_edit,
    judgment_change,
    judgment_rules,
    judgment_submit,
)
from .models import Assignment, BulkRun, CurationDecision, Item, Judgment, Option
from .permissions import (
    Role,
    get_assignment_for_user,
    get_item_for_editing,
    get_item_for_user,
    get_project_for_user,
)
from .serializers import ItemOutputSerializer, ItemWithJudgmentsOutputSerializer, JudgmentOutputSerializer
from .services import Author, DecisionRefused, EditConflict, UndoRefused, item_close, item_undo

# --- input ---------------------------------------------------------------------------------------------

ID = {"min_value": 1, "max_value": 2**63 - 1}  # past the database's integers is a 400, not a server error


class Text(serializers.CharField):
    """A string, and only a string: a number where text is expected is refused, not turned into text."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class WholeNumber(serializers.IntegerField):
    """A JSON integer, and only that: "3", 3.0 or true are refused."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class NextInputSerializer(StrictInputSerializer):
    kind = serializers.ChoiceField(
        choices=queue.KINDS, required=False, help_text="review or answer (default: any)"
    )


class AnswerInputSerializer(StrictInputSerializer):
    answer = Text(max_length=20000, allow_blank=True, trim_whitespace=False)
    version = WholeNumber(
        min_value=1, max_value=2**31 - 1, help_text="the item's version the answer was written on"
    )


class SkipInputSerializer(StrictInputSerializer):
    reason = Text(max_length=1000, allow_blank=True)


class JudgmentInputSerializer(StrictInputSerializer):
    ratings = serializers.DictField(child=serializers.JSONField(), required=False, default=dict)
    vote = Text(required=False, allow_blank=True, max_length=32)
    causal_class = Text(required=False, allow_blank=True, max_length=64)
    comment = Text(required=False, allow_blank=True, max_length=5000, default="")


class OptionInputSerializer(StrictInputSerializer):
    text = Text(max_length=5000, allow_blank=True)
    role = serializers.ChoiceField(choices=Option.Role.choices)
    rationale = Text(max_length=5000, allow_blank=True, required=False, default="")


class EditInputSerializer(StrictInputSerializer):
    part = serializers.ChoiceField(choices=list(EDIT_PARTS))
    value = Text(max_length=20000, allow_blank=True, required=False)
    options = OptionInputSerializer(many=True, required=False)
    version = WholeNumber(
        min_value=1, max_value=2**31 - 1, help_text="the item's version the edit started from"
    )

    def validate(self, data):
        if data["part"] == "options" and "options" not in data:
            raise serializers.ValidationError({"options": ["An edit of the options gives the options."]})
        if data["part"] != "options" and "value" not in data:
            raise serializers.ValidationError({"value": ["An edit of a text part gives its value."]})
        return data


class DecisionInputSerializer(StrictInputSerializer):
    decision = serializers.ChoiceField(choices=CurationDecision.Decision.choices)
    note = Text(max_length=5000, allow_blank=True, required=False, default="")


class BulkDecisionInputSerializer(DecisionInputSerializer):
    item_ids = serializers.ListField(child=WholeNumber(**ID), min_length=1, max_length=2000)


# --- output --------------------------------------------------------------------------------------------

REFUSED = {409: ErrorOutputSerializer}  # the item's state no longer allows the action; ``detail`` says why


class ItemStatusOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()


class BulkDecisionOutputSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What was done, in words.")
    items = ItemStatusOutputSerializer(many=True)


class BulkRunOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField(help_text="Where the run's status is read.")

    class Meta:
        model = BulkRun
        fields = [
            "id",
            "url",
            "action",
            "status",
            "total",
            "done",
            "message",
            "error",
            "created_at",
            "finished_at",
        ]

    def get_url(self, run) -> str:
        path = reverse("api-bulk-decision-run", args=[run.project.slug, run.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class BulkDecisionAcceptedOutputSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What happens, in words.")
    run = BulkRunOutputSerializer()


class AssignmentOutputSerializer(serializers.ModelSerializer):
    kind = serializers.SerializerMethodField()
    asks = serializers.SerializerMethodField()
    item = serializers.SerializerMethodField()

    class Meta:
        model = Assignment
        fields = ["id", "kind", "round", "status", "skip_reason", "asks", "item"]

    def get_kind(self, assignment) -> str:
        return queue.ANSWER if assignment.round == 0 else queue.REVIEW

    def get_asks(self, assignment) -> dict:
        """What a judgment of this item asks (empty for an answer): criteria, class labels, whether a vote."""
        if assignment.round == 0:
            return {}
        rules = judgment_rules(assignment.item)
        return {"criteria": rules.criteria, "labels": rules.labels, "vote": rules.asks_vote}

    def get_item(self, assignment) -> dict:
        return ItemOutputSerializer(
            assignment.item, context=self.context
        ).data  # judged fields hidden until judged


def _context(request, item) -> dict:
    judged = Judgment.objects.filter(item=item, annotator=request.user).exists()
    return {"request": request, "judged_item_ids": {item.pk} if judged else set()}


def _assignment_data(request, assignment) -> dict:
    return AssignmentOutputSerializer(assignment, context=_context(request, assignment.item)).data


def _refused(error: Exception) -> Response:
    return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)


def _invalid(error: DjangoValidationError) -> Response:
    if hasattr(error, "message_dict"):
        return Response(error.message_dict, status=status.HTTP_400_BAD_REQUEST)
    return Response({"detail": error.messages}, status=status.HTTP_400_BAD_REQUEST)


def _asked(assignment, data) -> dict:
    """A vote or class the item's design does not ask for is refused here, naming it, never dropped silently."""
    rules = judgment_rules(assignment.item)
    errors = {}
    if not rules.asks_vote and data.get("vote"):
        errors["vote"] = ["This judgment asks for no vote."]
    if not rules.labels and data.get("causal_class"):
        errors["causal_class"] = ["This judgment asks for no causal class."]
    return errors


class AnnotatorWorkApi(StrictApiMixin, APIView):
    """The project and the caller's role in it are checked before the body is read (an outsider gets 404)."""

    permission_classes = [IsAuthenticated, ProjectRole]
    required_roles = {method: Role.ANNOTATOR for method in ("GET", "HEAD", "POST", "PUT")}


class CuratorWorkApi(AnnotatorWorkApi):
    required_roles = {method: Role.CURATOR for method in ("GET", "HEAD", "POST", "PUT")}


# --- annotators ----------------------------------------------------------------------------------------


class AssignmentNextApi(AnnotatorWorkApi):
    """The caller's current assignment in the project, or the next one the queue hands out (204: none waits)."""

    body_serializer_classes = {"POST": NextInputSerializer}

    @extend_schema(operation_id="assignments_next", responses={200: AssignmentOutputSerializer, 204: None})
    def post(self, request, slug):
        project = get_project_for_user(request.user, slug)
        data = self.validated_body()
        assignment = queue.assignment_next(project=project, annotator=request.user, kind=data.get("kind"))
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        assignment = get_assignment_for_user(request.user, project, assignment.pk)
        return Response(_assignment_data(request, assignment))


class AssignmentDetailApi(AnnotatorWorkApi):
    @extend_schema(operation_id="assignments_retrieve", responses=AssignmentOutputSerializer)
    def get(self, request, slug, assignment_id):
        project = get_project_for_user(request.user, slug)
        assignment = get_assignment_for_user(request.user, project, assignment_id)
        return Response(_assignment_data(request, assignment))


class AssignmentAnswerApi(AnnotatorWorkApi):
    """Write the answer of a question waiting for one; the question then goes to review. On an answer already
    written: rewrite it (reopen), while nobody has judged it yet and its round is open."""

    body_serializer_classes = {"POST": AnswerInputSerializer}

    @extend_schema(operation_id="assignments_answer", responses={200: ItemOutputSerializer, **REFUSED})
    def post(self, request, slug, assignment_id):
        project = get_project_for_user(request.user, slug)
        assignment = get_assignment_for_user(request.user, project, assignment_id)
        data = self.validated_body()
        try:
            write = answer_rewrite if assignment.status == Assignment.Status.SUBMITTED else answer_submit
            item = write(assignment=assignment, answer=data["answer"], expected_version=data["version"])
        except DjangoValidationError as error:
            return _invalid(error)
        except AssignmentClosed as closed:
            return _refused(closed)
        except EditConflict as conflict:
            return Response(
                {"detail": "Someone else saved an answer meanwhile.", "version": conflict.current.version},
                status=status.HTTP_409_CONFLICT,
            )
        return Response(_item_out(request, project, item))


class AssignmentSkipApi(AnnotatorWorkApi):
    body_serializer_classes = {"POST": SkipInputSerializer}

    @extend_schema(operation_id="assignments_skip", responses=AssignmentOutputSerializer)
    def post(self, request, slug, assignment_id):
        project = get_project_for_user(request.user, slug)
        assignment = get_assignment_for_user(request.user, project, assignment_id)
        try:
            assignment = queue.assignment_skip(assignment=assignment, reason=self.validated_body()["reason"])
        except DjangoValidationError as error:
            return _invalid(error)
        assignment = get_assignment_for_user(request.user, project, assignment.pk)
        return Response(_assignment_data(request, assignment))


class AssignmentUnskipApi(AnnotatorWorkApi):
    """Undo a skip: the question is the caller's again, unless someone else took or answered it (409)."""

    @extend_schema(
        operation_id="assignments_unskip",
        request=None,
        responses={200: AssignmentOutputSerializer, **REFUSED},
    )
    def post(self, request, slug, assignment_id):
        project = get_project_for_user(request.user, slug)
        assignment = get_assignment_for_user(request.user, project, assignment_id)
        try:
            queue.assignment_unskip(assignment=assignment)
        except queue.SkipUndoRefused as refused:
            return _refused(refused)
        assignment = get_assignment_for_user(request.user, project, assignment.pk)
        return Response(_assignment_data(request, assignment))


class AssignmentJudgmentApi(AnnotatorWorkApi):
    """POST: judge the item (ratings by criterion key, vote, causal class, comment, as ``asks`` says).
    PUT: change the judgment while its round is open (the earlier version is kept)."""

    body_serializer_classes = {"POST": JudgmentInputSerializer, "PUT": JudgmentInputSerializer}

    def _judge(self, request, slug, assignment_id, *, change: bool):
        project = get_project_for_user(request.user, slug)
        assignment = get_assignment_for_user(request.user, project, assignment_id)
        data = self.validated_body()
        unasked = _asked(assignment, data)
        if unasked:
            return Response(unasked, status=status.HTTP_400_BAD_REQUEST)
        values = {
            "ratings": data.get("ratings") or {},
            "vote": data.get("vote", ""),
            "causal_class": data.get("causal_class", ""),
            "comment": data.get("comment", ""),
        }
        try:
            if change:
                judgment = Judgment.objects.filter(assignment=assignment).first()
                if judgment is None:
                    return Response({"detail": "No judgment to change."}, status=status.HTTP_404_NOT_FOUND)
                judgment = judgment_change(judgment=judgment, **values)
            else:
                judgment = judgment_submit(assignment=assignment, **values)
        except DjangoValidationError as error:
            return _invalid(error)
        except (AssignmentClosed, JudgmentLocked) as closed:
            return _refused(closed)
        return Response(
            JudgmentOutputSerializer(judgment).data,
            status=status.HTTP_200_OK if change else status.HTTP_201_CREATED,
        )

    @extend_schema(operation_id="assignments_judge", responses={201: JudgmentOutputSerializer, **REFUSED})
    def post(self, request, slug, assignment_id):
        return self._judge(request, slug, assignment_id, change=False)

    @extend_schema(
        operation_id="assignments_judgment_change", responses={200: JudgmentOutputSerializer, **REFUSED}
    )
    def put(self, request, slug, assignment_id):
        return self._judge(request, slug, assignment_id, change=True)


def _item_out(request, project, item) -> dict:
    item = get_item_for_user(request.user, project, item.pk)
    item.project = project
    return ItemOutputSerializer(item, context=_context(request, item)).data


class ItemEditApi(AnnotatorWorkApi):
    """Save one part of the item (question, context, answer or options) edited from ``version``; a concurrent
    change of the same part is a 409 with the version saved meanwhile."""

    body_serializer_classes = {"POST": EditInputSerializer}

    @extend_schema(operation_id="items_edit", responses={200: ItemOutputSerializer, **REFUSED})
    def post(self, request, slug, item_id):
        project = get_project_for_user(request.user, slug)
        item = get_item_for_editing(request.user, project, item_id)
        data = self.validated_body()
        part = data["part"]
        values = [dict(option) for option in data["options"]] if part == "options" else data["value"].strip()
        try:
            saved = item_edit(
                item=item, user=request.user, part=part, values=values, base_version=data["version"]
            )
        except EditConflict as conflict:
            return Response(
                {"detail": "Someone else changed this part meanwhile.", "version": conflict.current.version},
                status=status.HTTP_409_CONFLICT,
            )
        except (DjangoValidationError, ValueError) as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_item_out(request, project, saved))


class ItemUndoApi(AnnotatorWorkApi):
    """Undo one revision of the item: a new revision puts back what it changed (``services.item_undo``)."""

    @extend_schema(
        operation_id="items_revision_undo", request=None, responses={200: ItemOutputSerializer, **REFUSED}
    )
    def post(self, request, slug, item_id, number):
        project = get_project_for_user(request.user, slug)
        item = get_item_for_editing(request.user, project, item_id)
        try:
            undone = item_undo(item=item, number=number, author=Author(user=request.user))
        except UndoRefused as refused:
            return _refused(refused)
        return Response(_item_out(request, project, undone))


# --- curators ------------------------------------------------------------------------------------------


class ItemDecisionApi(CuratorWorkApi):
    """Decide the item's current round: approve, reject, or revise (a note saying what is required)."""

    body_serializer_classes = {"POST": DecisionInputSerializer}

    @extend_schema(operation_id="items_decide", responses={201: ItemWithJudgmentsOutputSerializer, **REFUSED})
    def post(self, request, slug, item_id):
        project = get_project_for_user(request.user, slug, Role.CURATOR)
        item = get_item_for_user(request.user, project, item_id)
        data = self.validated_body()
        try:
            item_close(item=item, curator=request.user, decision=data["decision"], note=data["note"])
        except DjangoValidationError as error:
            return _invalid(error)
        except DecisionRefused as refused:
            return _refused(refused)
        item = get_item_for_user(request.user, project, item_id)
        return Response(ItemWithJudgmentsOutputSerializer(item).data, status=status.HTTP_201_CREATED)


class BulkDecisionApi(CuratorWorkApi):
    """Decide many items at once, as the items page's bulk action does (``item_actions``): the items of
    ``item_ids`` in review and undecided are taken; the answer lists each item's status afterwards."""

    body_serializer_classes = {"POST": BulkDecisionInputSerializer}

    @extend_schema(
        operation_id="items_decide_bulk",
        responses={200: BulkDecisionOutputSerializer, 202: BulkDecisionAcceptedOutputSerializer},
    )
    def post(self, request, slug):
        project = get_project_for_user(request.user, slug, Role.CURATOR)
        data = self.validated_body()
        chosen: QuerySet[Item] = Item.objects.filter(project=project, pk__in=data["item_ids"])
        unknown = sorted(set(data["item_ids"]) - set(chosen.values_list("pk", flat=True)))
        if unknown:
            return Response(
                {"item_ids": [f"No such item in the project: {', '.join(map(str, unknown))}."]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            outcome = bulk_perform(
                project=project,
                user=request.user,
                action_key=data["decision"],
                chosen=chosen,
                values={"note": data["note"]},
            )
        except DjangoValidationError as error:
            return _invalid(error)
        if outcome.run is not None:  # many items: a worker decides them; the run's address follows it
            run = BulkRunOutputSerializer(outcome.run, context={"request": request}).data
            detail = f"A worker decides the {outcome.run.total} items; follow the run at its url."
            return Response({"detail": detail, "run": run}, status=status.HTTP_202_ACCEPTED)
        statuses = dict(chosen.values_list("pk", "status"))
        return Response(
            {
                "detail": str(outcome.message),
                "items": [{"id": pk, "status": statuses[pk]} for pk in sorted(statuses)],
            }
        )


class BulkDecisionRunApi(CuratorWorkApi):
    """A bulk decision a worker does: its status and how many of its items are done."""

    @extend_schema(operation_id="items_decide_bulk_run", responses=BulkRunOutputSerializer)
    def get(self, request, slug, bulk_run_id):
        project = get_project_for_user(request.user, slug, Role.CURATOR)
        run = BulkRun.objects.filter(project=project, pk=bulk_run_id).first()
        if run is None:
            raise NotFound("No such bulk decision in the project.")
        return Response(BulkRunOutputSerializer(run, context={"request": request}).data)
