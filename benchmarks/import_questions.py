"""Import 100,000 questions through the whole funnel and print rows per second.

    .venv/bin/python benchmarks/import_questions.py [--rows 100000] [--quick] [--format csv|xlsx|parquet]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python benchmarks/import_questions.py

The file is built here: varied Portuguese questions, with duplicates, non-causal rows,
rows too short and too long, so every step of the funnel has work. Ends with one JSON line.
"""

import argparse
import csv
import io
import json
import random
import time

import _django

STEMS = [
    "Por que {a} aumenta quando {b} diminui em {c}",
    "Se eu {d}, será que {a} melhora em {c}",
    "O que teria acontecido com {a} se {b} não tivesse mudado em {c}",
    "Qual a relação entre {a} e {b} no caso de {c}",
    "Se o governo {d}, o que acontece com {a} em {c}",
]
WORDS_A = [
    "o desemprego",
    "a inflação",
    "a evasão escolar",
    "o salário",
    "a produtividade",
    "a saúde do gato",
]
WORDS_B = ["a taxa de juros", "o investimento", "o preço da ração", "a carga horária", "o número de vagas"]
WORDS_C = ["São Paulo", "Fortaleza", "2020", "universidades públicas", "pequenas empresas", "home office"]
WORDS_D = [
    "estudar à noite",
    "mudar de área",
    "cortar impostos",
    "contratar mais gente",
    "adotar um cachorro",
]
CLASSES = ["associativa", "intervencional", "contrafactual"]


HEADER = ["id", "question", "causal_class", "is_causal", "source", "topic"]


def build_file(rows: int, seed: int = 1, file_format: str = "csv") -> bytes:
    if file_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(HEADER)
        writer.writerows(build_rows(rows, seed))
        return buffer.getvalue().encode("utf-8")
    if file_format == "xlsx":
        import openpyxl

        book = openpyxl.Workbook(write_only=True)
        sheet = book.create_sheet("perguntas")
        sheet.append(HEADER)
        for row in build_rows(rows, seed):
            sheet.append(row)
        binary = io.BytesIO()
        book.save(binary)
        return binary.getvalue()
    import pyarrow as pa
    import pyarrow.parquet as pq

    binary = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([dict(zip(HEADER, row)) for row in build_rows(rows, seed)]), binary)
    return binary.getvalue()


def build_rows(rows: int, seed: int):
    rng = random.Random(seed)
    for n in range(rows):
        roll = rng.random()
        if roll < 0.03:
            question = "Por quê?"  # too short
        elif roll < 0.05:
            question = " ".join(["muito"] * 80) + "?"  # too long
        else:
            stem = rng.choice(STEMS)
            question = stem.format(
                a=rng.choice(WORDS_A), b=rng.choice(WORDS_B), c=rng.choice(WORDS_C), d=rng.choice(WORDS_D)
            )
            question += f" (caso {n if rng.random() > 0.05 else n // 2})?"  # ~5% near-duplicates
        yield [
            f"q{n}",
            question,
            rng.choice(CLASSES),
            "false" if rng.random() < 0.1 else "true",
            rng.choice(["Reddit", "ShareGPT", "WildChat"]),
            rng.choice(["Educação", "Economia", "Animais"]),
        ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, help="100,000 (10,000 with --quick)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--format", choices=["csv", "xlsx", "parquet"], default="csv")
    args = parser.parse_args()
    args.rows = args.rows or (10_000 if args.quick else 100_000)
    _django.setup("import")
    from annotation.importing import questions_import
    from annotation.models import Project

    data = build_file(args.rows, file_format=args.format)
    filename = f"bench.{args.format}"
    project = Project.objects.create(name="bench import", slug=f"bench-import-{int(time.time())}")
    try:
        started, cpu_started = time.perf_counter(), time.process_time()
        batch = questions_import(project=project, data=data, filename=filename)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        again_started = time.perf_counter()
        again = questions_import(project=project, data=data, filename=filename)
        again_seconds = time.perf_counter() - again_started
    finally:
        project.items.all().delete()
        project.imports.all().delete()
        project.delete()
    funnel = batch.funnel
    print(
        f"database: {_django.database_label()}; {args.format} file: {len(data) / 1e6:.1f} MB, {args.rows:,} rows"
    )
    print(
        "funnel: read {read} → causal {causal} → unique {unique} → in length {in_length} → imported {imported}".format(
            **funnel
        )
    )
    # CPU time too: on a shared machine the wall clock measures the neighbours as much as the import.
    print(f"import: {seconds:.2f} s, {args.rows / seconds:,.0f} rows/s; CPU {cpu_seconds:.2f} s")
    print(f"re-import of the same file: {again_seconds:.2f} s, {again.funnel['imported']} imported")
    print(f"peak memory of this process (file, import and re-import): {_django.peak_mb():.0f} MB")
    print(
        json.dumps(
            {
                "benchmark": "import_questions",
                "database": _django.database_label(),
                "format": args.format,
                "rows": args.rows,
                "seconds": round(seconds, 3),
                "cpu_seconds": round(cpu_seconds, 3),
                "rows_per_second": round(args.rows / seconds),
                "imported": funnel["imported"],
                "reimport_seconds": round(again_seconds, 3),
                "reimport_imported": again.funnel["imported"],
                "peak_mb": _django.peak_mb(),
            }
        )
    )


if __name__ == "__main__":
    main()
