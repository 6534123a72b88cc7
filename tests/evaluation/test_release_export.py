"""Exports load with the `datasets` package, are checksummed, and are safe to open in a spreadsheet."""

import csv
import hashlib
import io
import json
import threading
import zipfile

import pyarrow.parquet as pq
import pytest
from django.urls import reverse

from annotation.models import Item
from evaluation.releases.export import export_release
from evaluation.releases.harnesses import harness_files
from evaluation.services import release_cut
from tests.evaluation.helpers import approved_items, with_options

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(project):
    items = approved_items(
        project,
        {"associational": 20, "interventional": 10, "counterfactual": 10},
        groups_of=2,
        answer_by_model_every=4,
    )
    with_options(items[0])
    Item.objects.filter(pk=items[1].pk).update(
        question='=HYPERLINK("http://evil")', reference_answer="-1 + 2", metadata={"stage": "@draft", "n": 3}
    )
    return release_cut(project=project)


@pytest.fixture
def offline_datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    import datasets

    datasets.disable_progress_bars()
    return datasets


@pytest.mark.parametrize("formats", [("jsonl", "csv", "parquet"), ("jsonl",), ("csv",)])
def test_the_exported_folder_loads_with_datasets_as_three_splits(
    release, tmp_path, offline_datasets, formats
):
    out = tmp_path / "export"
    export_release(release, out, formats)
    loaded = offline_datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    assert set(loaded) == {"train", "dev", "test"}
    assert {split: len(rows) for split, rows in loaded.items()} == release.counts["splits"]
    first = release.items.get(split="train", position=0).data
    row = loaded["train"][0]
    assert row["id"] == first["id"] and row["causal_class"] == first["causal_class"]
    if formats[0] != "csv":
        assert row["options"] == first["options"] and row["position_in_group"] == first["position_in_group"]


def test_csv_cells_that_would_run_as_formulas_are_neutralised(release, tmp_path):
    export_release(release, tmp_path, ("csv", "jsonl"))
    rows = [
        row
        for split in ("train", "dev", "test")
        for row in csv.DictReader(io.StringIO((tmp_path / f"data/{split}.csv").read_text(encoding="utf-8")))
    ]
    tricky = next(row for row in rows if "HYPERLINK" in row["question"])
    assert tricky["question"] == '\'=HYPERLINK("http://evil")' and tricky["answer"] == "'-1 + 2"
    assert json.loads(tricky["metadata"]) == {
        "n": 3,
        "stage": "@draft",
    }  # inside JSON text, nothing starts a cell
    lines = [
        json.loads(line)
        for split in ("train", "dev", "test")
        for line in (tmp_path / f"data/{split}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert any(record["question"] == '=HYPERLINK("http://evil")' for record in lines)  # JSONL keeps the text


def test_whole_columns_are_neutralised_exactly_like_single_cells():
    import pyarrow as pa

    from core.spreadsheet import neutralise_formula
    from evaluation.releases.export import neutralise_column

    cells = [
        "=1+1",
        "+3",
        "-2",
        "@SUM(A1)",
        "\tx",
        "\ry",
        "a=b",
        "",
        "'quoted",
        "^caret",
        "]",
        "\\back",
        "ação",
    ]
    assert neutralise_column(pa.array(cells)).to_pylist() == [neutralise_formula(cell) for cell in cells]
    safe = ["a=b", "", None, "ação", "'quoted"]  # no cell to change: the column comes back as it was
    assert neutralise_column(pa.array(safe)).to_pylist() == safe
    assert neutralise_column(pa.array([None, "=1", None])).to_pylist() == [None, "'=1", None]


def test_checksums_txt_lists_every_file(release, tmp_path):
    export_release(release, tmp_path)
    listed = dict(line.split("  ", 1)[::-1] for line in (tmp_path / "checksums.txt").read_text().splitlines())
    data_files = {
        f"data/{split}.{fmt}" for split in ("train", "dev", "test") for fmt in ("jsonl", "csv", "parquet")
    }
    harness_tasks = {
        harness_file.path
        for harness in ("lm-eval", "inspect")
        for harness_file in harness_files(release, harness)
    }
    assert "lm-eval/utils.py" in harness_tasks and "inspect/task.py" in harness_tasks
    assert set(listed) == {"README.md"} | data_files | harness_tasks
    for name, digest in listed.items():
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest


def test_parquet_files_keep_the_types(release, tmp_path):
    export_release(release, tmp_path, ("parquet",))
    table = pq.read_table(tmp_path / "data/train.parquet")
    assert str(table.schema.field("options").type).startswith("list<element: struct<letter: string")
    assert str(table.schema.field("review_rounds").type) == "int32"


def test_the_release_page_downloads_a_streamed_zip_that_matches_the_export(
    release, client_for, annotator, tmp_path
):
    url = reverse("evaluation:release_download", args=[release.project.slug, release.version])
    response = client_for(annotator).get(url + "?format=jsonl&format=parquet")
    assert response.status_code == 200 and response.streaming
    assert response["Content-Disposition"] == 'attachment; filename="causal-qa-v1.zip"'
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = archive.namelist()
    assert names[0] == "causal-qa-v1/README.md" and names[-1] == "causal-qa-v1/checksums.txt"
    assert "causal-qa-v1/data/dev.parquet" in names and not any(name.endswith(".csv") for name in names)
    export_release(release, tmp_path, ("jsonl", "parquet"))
    for name in ("README.md", "data/train.jsonl", "checksums.txt"):
        assert archive.read(f"causal-qa-v1/{name}") == (tmp_path / name).read_bytes()


def test_a_zip_read_a_little_at_a_time_or_left_midway_or_failing_in_its_thread_ends_cleanly(
    release, tmp_path, monkeypatch
):
    """The zip is compressed in a thread: read one small piece at a time through tiny queues, it is still the
    export; a client gone after the first piece, or an error in the thread (raised to the reader), leaves no
    thread and no spooled file open."""
    from evaluation.releases import export

    monkeypatch.setattr(export, "COPY_BLOCK", 256)
    monkeypatch.setattr(export, "BATCH", 7)
    monkeypatch.setattr(export._Zipper, "QUEUED_JOBS", 1)
    monkeypatch.setattr(export._Zipper, "QUEUED_CHUNKS", 1)
    threads = threading.active_count()
    pieces = list(export.zip_stream(release))
    assert len(pieces) > 20
    archive = zipfile.ZipFile(io.BytesIO(b"".join(pieces)))
    export_release(release, tmp_path)
    root = f"{release.project.slug}-{release.tag}"
    for path in [path for path in tmp_path.rglob("*") if path.is_file()]:
        assert archive.read(f"{root}/{path.relative_to(tmp_path)}") == path.read_bytes()
    assert threading.active_count() == threads

    opened = []
    real_temporary_file = export.tempfile.TemporaryFile
    monkeypatch.setattr(
        export.tempfile, "TemporaryFile", lambda: opened.append(real_temporary_file()) or opened[-1]
    )
    stream = export.zip_stream(release)
    assert next(stream).startswith(b"PK")
    next(stream)  # the splits have started: their spooled files are open
    stream.close()
    assert threading.active_count() == threads
    assert opened and all(spool.closed for spool in opened)

    def broken_copy(*args):
        raise OSError("the disk went away")

    monkeypatch.setattr(export._Zipper, "_copy", broken_copy)
    with pytest.raises(OSError, match="the disk went away"):
        b"".join(export.zip_stream(release))
    assert threading.active_count() == threads
    assert all(spool.closed for spool in opened)


def test_an_unknown_download_format_is_not_found(release, client_for, annotator):
    url = reverse("evaluation:release_download", args=[release.project.slug, release.version])
    assert client_for(annotator).get(url + "?format=xlsx").status_code == 404
