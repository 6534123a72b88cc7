"""The packaged local model loads offline and gives sensible, repeatable embeddings."""

import json
import subprocess
import sys

import numpy as np
import pytest
from django.conf import settings

pytestmark = pytest.mark.ml


def test_embeddings_are_unit_length_repeatable_and_put_similar_questions_together():
    pytest.importorskip("sentence_transformers", reason="the ml extra is not installed")
    from generation.local_models import embed

    texts = [
        "Por que o desemprego aumenta durante uma crise econômica?",
        "Por que o desemprego cresce quando a economia entra em crise?",
        "Qual ração é melhor para um gato castrado?",
    ]
    vectors = embed(texts)
    assert vectors.shape[0] == 3 and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2
    assert np.allclose(embed(texts), vectors, atol=1e-6)


# Run in a process of its own, as a worker's: a test process's heap carries what every earlier test left.
FORWARD_PASSES = """
import json, resource, torch
from generation.local_models import keep_freed_blocks, token_model

applied = keep_freed_blocks()
model = token_model().model
ids = torch.full((16, 160), 2000, dtype=torch.long)
mask = torch.ones_like(ids)
faults = []
with torch.inference_mode():
    for _pass in range(3):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        model(input_ids=ids, attention_mask=mask)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps({"applied": applied, "faults": faults}))
"""


def test_a_repeated_forward_pass_reuses_its_memory_instead_of_faulting_it_in_again():
    """The process keeps what a batch frees (``keep_freed_blocks``): the second pass over a batch of the same
    shape takes its activations from the heap, not from fresh pages."""
    pytest.importorskip("torch", reason="the ml extra is not installed")
    pytest.importorskip("resource")
    done = subprocess.run(
        [sys.executable, "-c", FORWARD_PASSES],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    if not measured["applied"]:
        pytest.skip("not glibc: the allocator is left as it is")
    assert min(measured["faults"][1:]) < 1_000, measured["faults"]


@pytest.mark.parametrize(
    ("vendor", "flags", "native"),
    [
        ("GenuineIntel", "fpu avx2 avx512f avx512_bf16 avx512_fp16 amx_bf16 amx_tile amx_int8", True),
        ("GenuineIntel", "fpu avx2 avx512f avx512_bf16 avx512_fp16 avx_vnni", False),  # float32 was faster
        ("AuthenticAMD", "fpu avx2 avx512f avx512_bf16 avx512_vnni", True),
        ("AuthenticAMD", "fpu sse4_2 avx2 fma", False),
    ],
    ids=["Intel with AMX", "Intel with AVX-512 BF16 only", "AMD with AVX-512 BF16", "neither"],
)
def test_bfloat16_is_chosen_only_where_it_ran_faster_than_float32(tmp_path, vendor, flags, native):
    from generation.local_models import native_bfloat16

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        f"processor\t: 0\nvendor_id\t: {vendor}\nmodel name\t: a processor\nflags\t\t: {flags}\n\n"
        f"processor\t: 1\nvendor_id\t: {vendor}\n"
    )
    assert native_bfloat16(str(cpuinfo)) is native
    assert native_bfloat16(str(tmp_path / "missing")) is False
