"""Topics move here, rows and tables as they are: the state learns the models (the topic from annotation; the
topic run, stored embeddings and near-duplicate pairs from generation), the database keeps its tables under the
names they were created with, the two apps forget the models (annotation 0007, generation 0002), and each
content type follows so permissions and admin history name the model where it lives."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED = {"topic": "annotation", "topicrun": "generation", "nearduplicate": "generation", "questionembedding": "generation"}


def content_types_here(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model, source in MOVED.items():
        if not ContentType.objects.filter(app_label="topics", model=model).exists():
            ContentType.objects.filter(app_label=source, model=model).update(app_label="topics")


def content_types_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model, source in MOVED.items():
        if not ContentType.objects.filter(app_label=source, model=model).exists():
            ContentType.objects.filter(app_label="topics", model=model).update(app_label=source)


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        # The tables are created and last changed by these apps' histories.
        ("annotation", "0006_importbatch_writing"),
        ("generation", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='TopicRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('owner', models.CharField(blank=True, max_length=200)),
                        ('resumed', models.PositiveIntegerField(default=0, help_text='Times the work was taken over after its worker died.')),
                        ('error', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('heartbeat_at', models.DateTimeField(blank=True, help_text='Last sign of life of the work.', null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('done', models.PositiveIntegerField(default=0)),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='queued', max_length=16)),
                        ('stage', models.CharField(choices=[('waiting', 'Waiting for a worker'), ('embedding', 'Embedding the questions'), ('clustering', 'Clustering'), ('describing', "Finding each topic's words"), ('saving', 'Saving the topics'), ('done', 'Done')], default='waiting', max_length=16)),
                        ('params', models.JSONField(blank=True, default=dict)),
                        ('embedding_model', models.CharField(blank=True, max_length=300)),
                        ('total', models.PositiveIntegerField(default=0, help_text='Questions to embed in this run.')),
                        ('reused', models.PositiveIntegerField(default=0, help_text='Questions whose stored embedding was used.')),
                        ('n_topics', models.PositiveIntegerField(default=0)),
                        ('n_residual', models.PositiveIntegerField(default=0)),
                        ('n_duplicates', models.PositiveIntegerField(default=0)),
                        ('timings', models.JSONField(blank=True, default=dict, help_text='Seconds per stage.')),
                        ('map_points', models.JSONField(blank=True, default=list)),
                        ('proposal', models.JSONField(blank=True, default=dict)),
                        ('applied_at', models.DateTimeField(blank=True, help_text="When its topics became the project's.", null=True)),
                        ('discarded_at', models.DateTimeField(blank=True, null=True)),
                        ('replaced', models.JSONField(blank=True, default=dict)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='topic_runs', to='annotation.project')),
                    ],
                    options={
                        'verbose_name': 'topic run',
                        'verbose_name_plural': 'topic runs',
                        'db_table': 'generation_topicrun',
                        'ordering': ['-created_at', '-pk'],
                    },
                ),
                migrations.CreateModel(
                    name='NearDuplicate',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('similarity', models.FloatField()),
                        ('status', models.CharField(choices=[('open', 'To decide'), ('kept', 'Kept both'), ('merged', 'Merged')], default='open', max_length=8)),
                        ('decided_at', models.DateTimeField(blank=True, null=True)),
                        ('decided_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('first', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.item')),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='near_duplicates', to='annotation.project')),
                        ('second', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.item')),
                    ],
                    options={
                        'verbose_name': 'near duplicate',
                        'verbose_name_plural': 'near duplicates',
                        'db_table': 'generation_nearduplicate',
                        'ordering': ['-similarity', 'pk'],
                        'indexes': [models.Index(fields=['project', 'status'], name='near_duplicate_project_status')],
                        'constraints': [models.UniqueConstraint(fields=('first', 'second'), name='near_duplicate_unique_pair'), models.CheckConstraint(condition=models.Q(('first__lt', models.F('second'))), name='near_duplicate_ordered_pair')],
                    },
                ),
                migrations.CreateModel(
                    name='QuestionEmbedding',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('model_name', models.CharField(max_length=300)),
                        ('text_key', models.CharField(max_length=40)),
                        ('dimensions', models.PositiveIntegerField()),
                        ('vector', models.BinaryField(help_text='float32, little-endian')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('item', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='embeddings', to='annotation.item')),
                    ],
                    options={
                        'verbose_name': 'question embedding',
                        'verbose_name_plural': 'question embeddings',
                        'db_table': 'generation_questionembedding',
                        'constraints': [models.UniqueConstraint(fields=('item', 'model_name'), name='embedding_unique_item_model')],
                    },
                ),
                migrations.CreateModel(
                    name='Topic',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('label', models.CharField(max_length=200)),
                        ('cluster', models.IntegerField(blank=True, help_text='Cluster number; -1 is the residual topic.', null=True)),
                        ('top_words', models.JSONField(blank=True, default=list)),
                        ('seed_words', models.JSONField(blank=True, default=list)),
                        ('size', models.PositiveIntegerField(default=0)),
                        ('is_residual', models.BooleanField(default=False)),
                        ('selected', models.BooleanField(default=False, verbose_name='selected for annotation')),
                        ('class_targets', models.JSONField(blank=True, default=dict, help_text="Empty: the project's targets apply.", verbose_name='target count per causal class in this topic')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='topics', to='annotation.project')),
                    ],
                    options={
                        'verbose_name': 'topic',
                        'verbose_name_plural': 'topics',
                        'db_table': 'annotation_topic',
                        'ordering': ['project', '-size', 'label'],
                        'constraints': [models.UniqueConstraint(fields=('project', 'label'), name='topic_unique_label')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_here, content_types_back),
    ]
