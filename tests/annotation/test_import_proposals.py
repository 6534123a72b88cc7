"""The mapping step proposes from the names and from the values, and shows every value before it is stored: a
file shaped like the published Causal_QA.PT spreadsheet goes in with the default proposal and gives Table 3; a
sheet with Portuguese headers written as words is understood; a yes/no who-answered column never becomes models
named "True" and "False"."""

import io

import openpyxl
import pytest

from annotation.importing import ImportRejected, questions_import
from annotation.importing.mapping import propose
from annotation.importing.preview import import_file_preview
from annotation.models import Item
from annotation.selectors import answer_counts, origin_counts
from tests.factories import ItemFactory

pytestmark = pytest.mark.django_db

LABELS = ["associational", "interventional", "counterfactual"]
MODELS = ("gemma-3-27b", "gpt-5-mini")


def xlsx(header, rows) -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(list(header))
    for row in rows:
        sheet.append(list(row))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def df_metrics() -> tuple[bytes, dict]:
    """One row per (question, model): the question repeats once per model; ``respondido_pelo_llama`` True when
    the reference answer was written by the model, False by a person; one question has no class; per-model
    answer and metric columns. Returns the file and Table 3 as counted by hand."""
    header = (
        "Question",
        "annot_pearl_class",
        "groundtruth",
        "respondido_pelo_llama",
        "source",
        "model",
        "resposta_class_agnostic",
        "resposta_class_informed",
        "bertscore_f1_agnostic",
        "bertscore_f1_informed",
        "gerada_pelo_gpt5",
    )
    rows, table = [], {label: {"human": 0, "model": 0, "natural": 0, "generated": 0} for label in LABELS}
    for index in range(30):
        label = LABELS[index % 3]
        by_model = index % 5 in (1, 3)
        if index == 29:
            label = None  # as published: one row without a class
        else:
            table[label]["model" if by_model else "human"] += 1
            table[label]["generated" if index % 4 == 0 else "natural"] += 1
        for model in MODELS:
            rows.append(
                (
                    f"Por que o fenômeno número {index} acontece na cidade quando chove?",
                    label,
                    f"Porque a causa número {index} age sobre o efeito observado na cidade, segundo os dados.",
                    by_model,
                    "reddit" if index % 2 else "forum",
                    model,
                    f"Resposta de {model} sem a classe à pergunta {index}, com alguma explicação.",
                    f"Resposta de {model} com a classe à pergunta {index}, com outra explicação.",
                    0.5 + index / 100,
                    0.6 + index / 100,
                    index % 4 == 0,
                )
            )
    return xlsx(header, rows), table


def test_the_published_spreadsheet_goes_in_with_the_default_proposal_and_gives_table_3(project):
    data, expected = df_metrics()

    batch = questions_import(project=project, data=data, filename="df_metrics.xlsx")

    assert batch.mapping["columns"]["causal_class"] == "annot_pearl_class"
    assert batch.mapping["columns"]["answer_by"] == "respondido_pelo_llama"
    assert batch.mapping["values"]["answer_by"] == {"true": "llama", "false": "person"}
    counts, origins = answer_counts(project), origin_counts(project)
    for label in LABELS:
        for key in ("human", "model"):
            assert counts[label][key] == expected[label][key], (label, key)
        for key in ("natural", "generated"):
            assert origins[label][key] == expected[label][key], (label, key)
    assert batch.mapping["columns"]["origin"] == "gerada_pelo_gpt5"
    generated = Item.objects.filter(origin=Item.Origin.GENERATED)
    assert {item.metadata["generation"]["model"] for item in generated} == {"gpt5"}
    models = set(
        Item.objects.filter(answer_by=Item.AnswerBy.MODEL).values_list("answer_provenance__model", flat=True)
    )
    assert models == {"llama"}  # never "True" or "False"
    # Every column is mapped, kept as metadata, or listed as ignored.
    listed = (
        set(batch.mapping["columns"].values()) | set(batch.mapping["kept"]) | set(batch.mapping["ignored"])
    )
    assert listed == {cell.value for cell in openpyxl.load_workbook(io.BytesIO(data)).active[1]}


def df_metrics_with_origin_in_source() -> tuple[bytes, dict]:
    """As published: no column of its own says where a question came from; ``source`` names the forum a natural
    question was found on (reddit, sharegpt, wildchat) or the model that wrote it (gpt5), whose questions a model
    answered. Returns the file and Table 3 as counted by hand."""
    header = ("Question", "annot_pearl_class", "groundtruth", "respondido_pelo_llama", "source", "model")
    rows, table = [], {label: {"human": 0, "model": 0, "natural": 0, "generated": 0} for label in LABELS}
    for index in range(40):
        label = LABELS[index % 3]
        generated = index % 4 == 0
        by_model = generated or index % 7 == 1
        if index == 39:
            label = None
        else:
            table[label]["model" if by_model else "human"] += 1
            table[label]["generated" if generated else "natural"] += 1
        source = "gpt5" if generated else ("reddit", "sharegpt", "wildchat")[index % 3]
        for model in MODELS:
            rows.append(
                (
                    f"Por que o fenômeno número {index} acontece na cidade quando chove?",
                    label,
                    f"Porque a causa número {index} age sobre o efeito observado na cidade, segundo os dados.",
                    by_model,
                    source,
                    model,
                )
            )
    return xlsx(header, rows), table


def test_a_source_naming_the_model_that_wrote_a_question_gives_table_3_with_the_default_proposal(project):
    data, expected = df_metrics_with_origin_in_source()

    preview = import_file_preview(project=project, data=data, filename="df_metrics.xlsx")
    by_field = {entry["field"]: entry for entry in preview["value_previews"]}
    origins = {entry["value"]: entry["becomes"] for entry in by_field["origin"]["values"]}
    assert origins == {
        "gpt5": "generated by gpt5",
        "reddit": "a natural question",
        "sharegpt": "a natural question",
        "wildchat": "a natural question",
    }
    batch = questions_import(project=project, data=data, filename="df_metrics.xlsx")

    assert batch.mapping["columns"]["origin"] == batch.mapping["columns"]["source"] == "source"
    counts, by_origin = answer_counts(project), origin_counts(project)
    for label in LABELS:
        for key in ("human", "model"):
            assert counts[label][key] == expected[label][key], (label, key)
        for key in ("natural", "generated"):
            assert by_origin[label][key] == expected[label][key], (label, key)
    generated = Item.objects.filter(origin=Item.Origin.GENERATED)
    assert {item.metadata["generation"]["model"] for item in generated} == {"gpt5"}
    assert set(generated.values_list("source", flat=True)) == {"gpt5"}


def test_the_source_column_read_as_origin_is_remembered_for_the_next_import(project):
    from annotation.importing.mapping import remembered

    data, _expected = df_metrics_with_origin_in_source()
    questions_import(project=project, data=data, filename="df_metrics.xlsx")
    project.refresh_from_db()

    again = propose(["Question", "source", "groundtruth"], remembered(project))
    assert again.columns["origin"] == again.columns["source"] == "source"


PORTUGUESE = (
    "Texto da Pergunta (usuário)",
    "Tipo Pearl",
    "Resp. de referência",
    "Quem respondeu?",
    "Fonte/Origem",
    "ID#",
    "Tema",
)


FIELDS_OF_PORTUGUESE = ("question", "causal_class", "answer", "answer_by", "source", "id", "topic")


def test_portuguese_headers_written_as_words_are_understood():
    mapping = propose(list(PORTUGUESE))
    assert mapping.columns == {
        "question": "Texto da Pergunta (usuário)",
        "causal_class": "Tipo Pearl",
        "answer": "Resp. de referência",
        "answer_by": "Quem respondeu?",
        "source": "Fonte/Origem",
        "topic": "Tema",
        "id": "ID#",
    }


@pytest.mark.parametrize(
    "true, false", [(True, False), ("True", "False"), ("sim", "não"), ("1", "0"), (1, 0)]
)
def test_portuguese_headers_with_their_values_are_all_proposed_whatever_the_yes_no_spelling(true, false):
    sample = [
        dict(
            zip(
                PORTUGUESE,
                (
                    f"Por que o caso número {n} acontece quando chove na cidade?",
                    ("Associativa", "Intervencional", "Contrafactual")[n % 3],
                    f"Porque a causa número {n} age sobre o efeito observado na cidade.",
                    true if n % 2 else false,
                    ("reddit", "wildchat")[n % 2],
                    n + 1,
                    "clima",
                ),
            )
        )
        for n in range(12)
    ]
    mapping = propose(list(PORTUGUESE), sample=sample, labels=LABELS)

    assert mapping.columns == dict(zip(FIELDS_OF_PORTUGUESE, PORTUGUESE))
    assert (
        "answer_by" not in mapping.values
    )  # "who answered?" says not which value is a person: the page asks


@pytest.mark.parametrize(
    "header, true, false",
    [
        ("resposta_do_gpt", "sim", "não"),
        ("escrita_por_humano", "1", "0"),
        ("answered_by_llm", "True", "False"),
    ],
)
def test_a_yes_no_column_naming_a_model_or_a_person_is_proposed_as_who_answered(header, true, false):
    sample = [
        {
            "q": f"Por que acontece o caso número {n}, afinal?",
            "cls": "Associativa",
            "ref": "Porque sim.",
            header: v,
        }
        for n, v in enumerate([true, false, true, false])
    ]
    mapping = propose(["q", "cls", "ref", header], sample=sample, labels=LABELS)

    assert mapping.columns["answer_by"] == header
    assert mapping.columns["causal_class"] == "cls"  # its values are class labels
    assert mapping.columns["question"] == "q"  # long text ending in "?"
    meanings = mapping.values["answer_by"]
    if header.startswith("escrita_por_humano"):
        assert (meanings["1"], meanings["0"]) == ("person", "model")
    else:
        assert meanings[true.casefold().replace("ã", "a")] in ("gpt", "llm", "model")
        assert meanings[false.casefold().replace("ã", "a")] == "person"


def test_a_yes_no_column_named_like_an_answer_is_who_answered_not_the_answer():
    sample = [
        {
            "Pergunta": f"Por que o caso número {n} acontece quando chove?",
            "Resposta do GPT?": ("sim", "não")[n % 2],
            "Explicação": f"Porque a causa número {n} age sobre o efeito observado, segundo os dados da cidade.",
        }
        for n in range(6)
    ]
    mapping = propose(list(sample[0]), sample=sample, labels=LABELS)

    assert mapping.columns["answer_by"] == "Resposta do GPT?"
    assert mapping.values["answer_by"] == {"sim": "gpt", "nao": "person"}
    assert mapping.columns["answer"] == "Explicação"


def test_an_integer_column_of_unique_values_is_proposed_as_the_id():
    sample = [{"num": n + 10, "texto_livre": f"Por que o caso {n} acontece quando chove?"} for n in range(5)]
    mapping = propose(["num", "texto_livre"], sample=sample, labels=LABELS)
    assert mapping.columns["id"] == "num"
    assert mapping.columns["question"] == "texto_livre"


def test_a_true_false_column_mapped_by_hand_without_a_translation_is_refused_not_made_model_names(project):
    data = xlsx(
        ("pergunta", "resposta", "coluna_x"),
        [("Por que chove tanto no verão?", "Porque o ar quente sobe.", True)],
    )
    with pytest.raises(ImportRejected) as excinfo:
        questions_import(
            project=project,
            data=data,
            filename="x.xlsx",
            mapping={"columns": {"question": "pergunta", "answer": "resposta", "answer_by": "coluna_x"}},
        )
    error = excinfo.value.errors[0]
    assert (error.line, error.field) == (2, "answer_by")
    assert "yes/no value: say which value means a person" in error.reason
    assert not Item.objects.exists()


def test_the_preview_shows_each_value_and_what_it_becomes_and_lists_new_model_names(project):
    data, _table = df_metrics()
    preview = import_file_preview(project=project, data=data, filename="df_metrics.xlsx")

    by_field = {entry["field"]: entry for entry in preview["value_previews"]}
    answerers = {entry["value"]: entry["becomes"] for entry in by_field["answer_by"]["values"]}
    assert answerers == {"True": "a model: llama", "False": "a person"}
    classes = {entry["value"]: entry["becomes"] for entry in by_field["causal_class"]["values"]}
    assert classes["associational"] == "associational"
    assert preview["new_models"] == ["llama"]
    assert "model" in preview["ignored"] or "model" in [f["column"] for f in preview["fields"]]


def test_the_preview_page_asks_which_value_means_a_person(project, curator, client_for):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    data, _table = df_metrics()
    page = client_for(curator).post(
        reverse("annotation:import_preview", args=[project.slug]),
        {
            "file": SimpleUploadedFile("df_metrics.xlsx", data),
            "mapping_shown": "on",
            "column_question": "Question",
            "column_answer": "groundtruth",
            "column_answer_by": "respondido_pelo_llama",
            "values": "",
        },
        HTTP_ACCEPT_LANGUAGE="pt-br",
    )
    html = page.content.decode()
    assert 'id="mapping-values-answer_by"' in html
    assert "diga qual valor significa uma pessoa" in html


def test_where_questions_came_from_is_in_table_3_on_the_page_and_the_api(project, curator, client_for):
    from django.urls import reverse

    data, expected = df_metrics()
    questions_import(project=project, data=data, filename="df_metrics.xlsx")
    client = client_for(curator)

    page = client.get(reverse("annotation:project_detail", args=[project.slug])).content.decode()
    assert "Questions generated by models" in page
    api = client.get(f"/api/v1/projects/{project.slug}/").json()
    assert api["origin_counts"]["associational"] == {
        "natural": expected["associational"]["natural"],
        "generated": expected["associational"]["generated"],
    }


def test_the_release_card_gives_where_the_questions_came_from(project):
    from tests.evaluation.runs import release_of

    for index in range(6):
        ItemFactory(
            project=project,
            status=Item.Status.APPROVED,
            causal_class=LABELS[index % 3],
            question=f"Por que o caso {index} acontece quando chove?",
            reference_answer=f"Porque a causa {index} age.",
            answer_by=Item.AnswerBy.HUMAN,
            origin=Item.Origin.GENERATED if index < 2 else Item.Origin.NATURAL,
        )
    release = release_of(project, ratios=(0, 0, 1))
    release.refresh_from_db()
    card = release.card
    lines = card.splitlines()
    at = next(index for index, line in enumerate(lines) if "Human-answered" in line)
    assert "Natural questions" in lines[at] and "Generated questions" in lines[at]
    total = next(line for line in lines[at:] if line.startswith("| **Total**"))
    assert total.replace(" ", "") == "|**Total**|6|6|0|4|2|"


def test_the_command_prints_the_mapping_and_the_value_translations_it_used(project, tmp_path, capsys):
    from django.core.management import call_command

    data, _expected = df_metrics()
    path = tmp_path / "df_metrics.xlsx"
    path.write_bytes(data)
    call_command("import_questions", str(path), project=project.slug)

    said = capsys.readouterr().out
    assert "columns used: question=Question, causal_class=annot_pearl_class, answer=groundtruth" in said
    assert "answer_by=respondido_pelo_llama, origin=gerada_pelo_gpt5" in said
    assert "values used: answer_by:false=person, true=llama" in said
    assert "values used: origin:false=natural, true=gpt5" in said


def test_the_page_says_what_went_wrong_in_portuguese_naming_its_own_controls_never_a_flag(
    project, curator, client_for
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from annotation.models import ImportBatch
    from annotation.tasks import import_questions_task

    client = client_for(curator)
    files = {
        "sem_pergunta.csv": b"codigo,nota\n1,2\n3,4\n",
        "quem.csv": "pergunta,resposta,coluna_x\nPor que chove tanto no verão?,Porque o ar quente sobe.,sim\n".encode(),
    }
    pages = {}
    for name, data in files.items():
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("annotation.importing.service.import_enqueue", lambda batch_id: None)
            form = {"file": SimpleUploadedFile(name, data)}
            if name == "quem.csv":
                form |= {
                    "mapping_shown": "on",
                    "column_question": "pergunta",
                    "column_answer": "resposta",
                    "column_answer_by": "coluna_x",
                    "values": "",
                }
            client.post(
                reverse("annotation:import_list", args=[project.slug]), form, HTTP_ACCEPT_LANGUAGE="pt-br"
            )
        batch = ImportBatch.objects.latest("pk")
        import_questions_task(batch.pk)
        pages[name] = client.get(
            reverse("annotation:import_detail", args=[project.slug, batch.pk]), HTTP_ACCEPT_LANGUAGE="pt-br"
        ).content.decode()
    for name, page in pages.items():
        assert "--columns" not in page and "--values" not in page, name
        assert 'id="back-to-mapping"' in page, name
    assert "Colunas do arquivo" in pages["sem_pergunta.csv"]
    assert "diga qual valor significa uma pessoa" in pages["quem.csv"]
