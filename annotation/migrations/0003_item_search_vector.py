"""Search out of the import's way (annotation.search), on PostgreSQL: a stored Portuguese text vector per item,
filled after an import's commit, under a partial GIN index (an item without its vector costs the index
nothing); a trigger that recomputes it when the text changes; the expression index it replaces dropped. The
metadata index keeps only items that have metadata."""

from django.db import migrations, models

DOCUMENT = "to_tsvector('portuguese'::regconfig, {0}question || ' ' || {0}reference_answer || ' ' || {0}context)"

CREATE = [
    "ALTER TABLE annotation_item ADD COLUMN IF NOT EXISTS search_vector tsvector",
    f"UPDATE annotation_item SET search_vector = {DOCUMENT.format('')}",
    "DROP INDEX IF EXISTS item_search_pt",
    # fastupdate: the catch-up's thousands of vectors per transaction go to the pending list and are merged
    # into the index in bulk, instead of one insertion per word of each item.
    "CREATE INDEX IF NOT EXISTS item_search ON annotation_item USING gin (search_vector) "
    "WITH (fastupdate = on) WHERE search_vector IS NOT NULL",
    # Metadata containment (the items page's metadata filter), partial: an item without metadata (most imports'
    # items) is not in it. The filter spells the same condition (annotation.item_browser.metadata_condition).
    "DROP INDEX IF EXISTS item_metadata",
    "CREATE INDEX IF NOT EXISTS item_metadata ON annotation_item USING gin (metadata) "
    "WHERE metadata <> '{}'::jsonb",
    "CREATE OR REPLACE FUNCTION annotation_item_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$ "
    f"BEGIN NEW.search_vector := {DOCUMENT.format('NEW.')}; RETURN NEW; END $$",
    # Updates only: a BEFORE INSERT row trigger would turn an import's COPY into row-at-a-time inserts.
    "CREATE TRIGGER item_search_vector BEFORE UPDATE OF question, reference_answer, context "
    "ON annotation_item FOR EACH ROW WHEN (OLD.question IS DISTINCT FROM NEW.question "
    "OR OLD.reference_answer IS DISTINCT FROM NEW.reference_answer OR OLD.context IS DISTINCT FROM NEW.context) "
    "EXECUTE FUNCTION annotation_item_search_vector()",
]
DROP = [
    "DROP TRIGGER IF EXISTS item_search_vector ON annotation_item",
    "DROP FUNCTION IF EXISTS annotation_item_search_vector()",
    "DROP INDEX IF EXISTS item_search",
    "ALTER TABLE annotation_item DROP COLUMN IF EXISTS search_vector",
    "DROP INDEX IF EXISTS item_metadata",
    "CREATE INDEX IF NOT EXISTS item_metadata ON annotation_item USING gin (metadata)",
    "CREATE INDEX IF NOT EXISTS item_search_pt ON annotation_item USING gin ("
    "to_tsvector('portuguese'::regconfig, question || ' ' || reference_answer || ' ' || context))",
]


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in CREATE:
            schema_editor.execute(sql)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in DROP:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0002_item_indexes_per_vendor")]

    operations = [
        migrations.AddField(
            model_name="project",
            name="search_pending_from",
            field=models.BigIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(create, drop),
    ]
