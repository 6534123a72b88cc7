"""Round counters on items (for the queue and the review queue) and the indexes that serve them.

Items that already have assignments (the demo, earlier work) get their counters recounted.
"""

from collections import defaultdict

import django.db.models.fields.json
import django.db.models.functions.comparison
from django.conf import settings
from django.db import migrations, models


def recount_rounds(apps, schema_editor):
    from annotation.agreement import item_agreement

    Item = apps.get_model("annotation", "Item")
    Assignment = apps.get_model("annotation", "Assignment")
    Judgment = apps.get_model("annotation", "Judgment")
    live = defaultdict(int)
    for item_id, round_number in Assignment.objects.filter(status__in=["active", "submitted"]).values_list(
        "item_id", "round"
    ):
        live[item_id, round_number] += 1
    judgments = defaultdict(list)
    for item_id, round_number, ratings, vote, causal_class in Judgment.objects.values_list(
        "item_id", "round", "ratings", "vote", "causal_class"
    ):
        judgments[item_id, round_number].append({"ratings": ratings, "vote": vote, "causal_class": causal_class})
    item_ids = {item_id for item_id, _ in live} | {item_id for item_id, _ in judgments}
    for item in Item.objects.filter(pk__in=item_ids).select_related("project"):
        round_judgments = judgments.get((item.pk, item.round), [])
        item.round_judged = len(round_judgments)
        item.round_assigned = max(live.get((item.pk, item.round), 0), item.round_judged)
        complete = item.status == "in_review" and item.round_judged >= item.project.overlap
        item.round_disagreement = (
            item_agreement(round_judgments, item.project.criteria).disagreement if complete else None
        )
        item.save(update_fields=["round_assigned", "round_judged", "round_disagreement"])


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='item',
            name='round_assigned',
            field=models.PositiveSmallIntegerField(db_default=0, default=0, help_text='Live assignments (active or submitted) in the current round.'),
        ),
        migrations.AddField(
            model_name='item',
            name='round_disagreement',
            field=models.FloatField(blank=True, help_text='0 (all agree) to 1; set when the round has all its judgments.', null=True),
        ),
        migrations.AddField(
            model_name='item',
            name='round_judged',
            field=models.PositiveSmallIntegerField(db_default=0, default=0, help_text='Judgments submitted in the current round.'),
        ),
        migrations.AddIndex(
            model_name='assignment',
            index=models.Index(condition=models.Q(('status', 'active')), fields=['expires_at'], name='assignment_active_expiry'),
        ),
        migrations.AddIndex(
            model_name='item',
            index=models.Index(condition=models.Q(('round_assigned__gt', 0)), fields=['project', 'status', 'round_assigned'], name='item_queue_started'),
        ),
        migrations.AddIndex(
            model_name='item',
            index=models.Index(condition=models.Q(('round_assigned', 0)), fields=['project', 'status', 'created_at', 'id'], name='item_queue_fresh'),
        ),
        migrations.AddIndex(
            model_name='item',
            index=models.Index(models.F('project'), models.F('status'), django.db.models.functions.comparison.Cast(django.db.models.fields.json.KeyTextTransform('expertise', 'metadata'), output_field=models.CharField()), models.F('created_at'), models.F('id'), condition=models.Q(('round_assigned', 0)), name='item_queue_fresh_expertise'),
        ),
        migrations.AddIndex(
            model_name='item',
            index=models.Index(models.F('project'), models.F('status'), models.OrderBy(models.F('round_disagreement'), descending=True), models.F('id'), name='item_review_queue'),
        ),
        migrations.AddConstraint(
            model_name='item',
            constraint=models.CheckConstraint(condition=models.Q(('round_judged__lte', models.F('round_assigned'))), name='item_judged_within_assigned'),
        ),
        migrations.RunPython(recount_rounds, migrations.RunPython.noop),
    ]
