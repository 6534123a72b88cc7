"""METER's jobs: de-contamination votes on cause–effect pairs, and the questions of verified entries."""

from annotation.models import ItemGroup
from generation.models import LLMCall, ModelEndpoint
from generation.services.work import DISTRACTOR_ROLES, NotApplied, Work, provenance

from . import pipeline as meter
from . import stems as meter_stems


class EntryWork(Work):
    """Calls about METER entries (``params["group_ids"]``) rather than items: the purpose names the entry and
    what is asked of it (``<what>:<entry id>:<model or level>``), so each call stays unique per job."""

    @staticmethod
    def target(call: LLMCall) -> tuple[int, str]:
        _what, group_id, detail = call.purpose.split(":", 2)
        return int(group_id), detail

    def entry(self, call: LLMCall) -> ItemGroup:
        return ItemGroup.objects.get(pk=self.target(call)[0], project=self.project)


class DecontaminationWork(EntryWork):
    """METER's de-contamination: every model of the job is asked, without the context, whether the entry's
    cause causes its effect. Each vote is stored on the entry; a pair stays only if all say no."""

    def extra_endpoints(self) -> list[ModelEndpoint]:
        return list(ModelEndpoint.objects.filter(pk__in=self.job.params.get("endpoint_ids", [])))

    def plan(self):
        endpoint_ids = self.job.params["endpoint_ids"]
        return [
            LLMCall(
                job=self.job,
                purpose=f"decontamination:{group_id}:{endpoint_id}",
                endpoint_id=endpoint_id,
                template_id=self.job.template_id,
            )
            for group_id in self.job.params["group_ids"]
            for endpoint_id in endpoint_ids
        ]

    def variables(self, call):
        entry = self.entry(call)
        return {
            "cause": entry.metadata["cause"],
            "effect": entry.metadata["effect"],
            "language": self.project.language,
        }

    def apply(self, call, parsed):
        meter.decontamination_vote(
            entry=self.entry(call),
            model=call.endpoint.model,
            vote=parsed["causal"],
            call_id=call.pk,
            voters=len(self.job.params["endpoint_ids"]),
        )
        return []


class MeterQuestionWork(EntryWork):
    """METER's generation: for each verified entry, one call per level writes the question from a stem of that
    level, its answer and the four typed distractors with their rationales."""

    def plan(self):
        return [
            LLMCall(
                job=self.job,
                purpose=f"meter:{group_id}:{level}",
                endpoint_id=self.job.endpoint_id,
                template_id=self.job.template_id,
            )
            for group_id in self.job.params["group_ids"]
            for level in meter_stems.LEVELS
        ]

    def stem(self, call, entry) -> str:
        return meter_stems.stem_for(
            entry=entry.external_id or str(entry.pk),
            level=self.target(call)[1],
            language=self.project.language,
            seed=meter.seed_of(self.project),
        )

    def variables(self, call):
        entry, level = self.entry(call), self.target(call)[1]
        return {
            "context": entry.context,
            "cause": entry.metadata["cause"],
            "effect": entry.metadata["effect"],
            "level": level,
            "level_definition": self.definitions.get(level, level),
            "stem": self.stem(call, entry),
            "language": self.project.language,
        }

    def apply(self, call, parsed):
        entry = self.entry(call)
        distractors = {
            role: {"text": parsed[role]["option_text"], "rationale": parsed[role]["reasoning"]}
            for role in DISTRACTOR_ROLES
        }
        try:
            meter.question_create(
                entry=entry,
                level=self.target(call)[1],
                question=parsed["question"],
                answer=parsed["answer"],
                distractors=distractors,
                stem=self.stem(call, entry),
                provenance=provenance(call),
                llm_call_id=call.pk,
            )
        except meter.MeterError as exc:
            raise NotApplied(str(exc)) from exc
        return []
