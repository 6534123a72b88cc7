"""The lm-evaluation-harness folder of a release: task YAMLs, ``utils.py``, ``causalqa_scoring.py`` and the data.

For each way of asking (``docs.Variant``) there is one task per causal class and a group of them, so
``lm_eval --tasks <prefix>_<variant>`` prints the accuracy (or BERTScore) of every class and, weighted by the
classes' sizes, of the whole split, as the platform's report does; and one group per breakdown of the report
the release has values for (question type, task, variant…), ``<prefix>_<variant>_by_<breakdown>``.
"""

import re

import yaml

from .docs import HarnessDocs, Variant, field_key

FUNCTION = "!function "


def task_prefix(release) -> str:
    return field_key(f"{release.project.slug}_{release.tag}")


def _yaml(data: dict) -> str:
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000)
    # yaml cannot write lm-eval's ``!function`` tag itself: the value is written as text, then unquoted
    return re.sub(r"""(['"])!function ([\w.]+)\1""", r"!function \2", text)


def _metrics(docs: HarnessDocs, variant: Variant) -> list[dict]:
    if variant.output == "multiple_choice":
        names = ["acc", "acc_norm"]
    elif docs.answer_format == "open":
        names = ["bertscore_f1", "bertscore_precision", "bertscore_recall"]
    else:
        names = ["acc", "unreadable"]
    return [
        {"metric": name, "aggregation": "mean", "higher_is_better": name != "unreadable"} for name in names
    ]


def _base(docs: HarnessDocs, variant: Variant) -> dict:
    base = {
        "custom_dataset": f"{FUNCTION}utils.load_docs",
        "test_split": "test",
        "output_type": variant.output,
    }
    if variant.output == "multiple_choice":
        base.update(
            doc_to_text="{{choice_prompt}}",
            doc_to_choice="{{letters}}" if docs.answer_format == "multiple_choice" else "{{choices}}",
            doc_to_target="gold",
        )
    else:
        scorer = {"multiple_choice": "score_choice", "yes_no": "score_yes_no", "open": "score_open"}[
            docs.answer_format
        ]
        target = {
            "multiple_choice": "{{gold_letters | join(',')}}",
            "yes_no": "{{gold_answer}}",
            "open": "{{reference}}",
        }[docs.answer_format]
        base.update(
            description=f"{{{{system_{variant.key}}}}}",
            doc_to_text=f"{{{{prompt_{variant.key}}}}}",
            doc_to_target=target,
            process_results=f"{FUNCTION}utils.{scorer}",
            generation_kwargs={"until": [], "max_gen_toks": 1024, "do_sample": False, "temperature": 0.0},
        )
    base["metric_list"] = _metrics(docs, variant)
    base["metadata"] = {"version": 1.0, "condition": variant.condition}
    return base


def lm_eval_files(release, docs: HarnessDocs) -> dict[str, bytes]:
    """path inside the folder → bytes: ``_<variant>.yaml`` (what a variant's tasks share), a YAML per task and
    per group, and ``tasks.json`` listing the groups (for the card and the tests)."""
    prefix = task_prefix(release)
    files: dict[str, str] = {}
    groups = []
    for variant in docs.variants:
        files[f"_{variant.key}.yaml"] = _yaml(_base(docs, variant))
        for breakdown in ["causal_class", *docs.breakdowns]:
            values = sorted(docs.test_values.get(breakdown, ()))
            if not values:
                continue
            suffix = "" if breakdown == "causal_class" else f"_by_{breakdown}"
            group = f"{prefix}_{variant.key}{suffix}"
            tasks, seen = [], set()
            for value in values:
                name = f"{prefix}_{variant.key}{'_' + breakdown if suffix else ''}_{field_key(value)}"
                while name in seen:
                    name += "_"
                seen.add(name)
                tasks.append(name)
                files[f"{name}.yaml"] = _yaml(
                    {
                        "include": f"_{variant.key}.yaml",
                        "task": name,
                        "dataset_kwargs": {"split_by": breakdown, "value": value},
                    }
                )
            metrics = [metric["metric"] for metric in _metrics(docs, variant)]
            files[f"{group}.yaml"] = _yaml(
                {
                    "group": group,
                    "task": tasks,
                    "aggregate_metric_list": [
                        {"metric": metric, "aggregation": "mean", "weight_by_size": True}
                        for metric in metrics
                    ],
                    "metadata": {"version": 1.0},
                }
            )
            groups.append(
                {
                    "group": group,
                    "variant": variant.key,
                    "condition": variant.condition,
                    "output_type": variant.output,
                    "breakdown": breakdown,
                    "tasks": dict(zip(values, tasks)),
                }
            )
    return {name: text.encode("utf-8") for name, text in files.items()} | {"_groups": groups}
