"""Topic runs, stored embeddings and near-duplicate pairs belong to the topics app now (topics 0001): generation
forgets the models, the tables and rows stay."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("generation", "0001_initial"),
        ("topics", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="NearDuplicate"),
                migrations.DeleteModel(name="QuestionEmbedding"),
                migrations.DeleteModel(name="TopicRun"),
            ],
            database_operations=[],
        ),
    ]
