"""What lets an import stream its file in chunks with flat memory: the keys already seen, as sorted arrays of
digests instead of dicts of strings, and a spool of the rows waiting for the funnel's last step.

A dict of string keys costs several times each key's characters per entry, so its memory would grow with the
file well past the file's own size; the same keys as fixed-size digests in a sorted numpy array cost their
bytes alone, and a chunk is looked up in one ``searchsorted``. The digest is the whole SHA-1 of the text key (the key *is* its hex), so two rows match
exactly when their keys match; an external id is looked up by the SHA-1 of its text.
"""

import hashlib
import pickle
import tempfile
from collections.abc import Iterator

import numpy as np

# The first 12 bytes of the SHA-1: two different texts among n share them with a probability of ~n²/2⁹⁷,
# negligible for any file an import takes; 12 bytes instead of 40 characters keep the keys small.
DIGEST = "S12"
# Sorted runs merge up to this many keys: a lookup searches a handful of runs, and a merge never copies more.
MERGED_RUN_KEYS = 256_000


def id_digest(value: str) -> bytes:
    return hashlib.sha1(value.encode("utf-8")).digest()


def digests(values: list[bytes]) -> np.ndarray:
    return np.array(values, dtype=DIGEST) if values else np.empty(0, dtype=DIGEST)


class KeyIndex:
    """Digest → a number (a line of the file, or an item's id), the first one given for each digest.

    Kept as a few sorted runs (merged while small), so adding a chunk never copies the whole index."""

    def __init__(self, value_type=np.int64):
        self.value_type = value_type
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []

    def __len__(self) -> int:
        return sum(len(keys) for keys, _values in self.runs)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """The number of each of ``keys``, or -1 where the key is not in the index."""
        found = np.full(len(keys), -1, dtype=np.int64)
        if not len(keys):
            return found
        for run_keys, run_values in self.runs:
            positions = np.minimum(np.searchsorted(run_keys, keys), len(run_keys) - 1)
            hit = (run_keys[positions] == keys) & (found < 0)
            found[hit] = run_values[positions[hit]]
        return found

    def add(self, keys: np.ndarray, values) -> None:
        """Add keys not in the index yet; a key repeated in ``keys`` keeps its first value."""
        if not len(keys):
            return
        keys, first = np.unique(keys, return_index=True)  # a stable sort: the first of equal keys
        values = np.asarray(values, dtype=self.value_type)[first]
        runs = self.runs
        while runs and len(runs[-1][0]) <= len(keys) * 2 and len(runs[-1][0]) + len(keys) <= MERGED_RUN_KEYS:
            run_keys, run_values = runs.pop()
            positions = np.searchsorted(run_keys, keys)
            keys = np.insert(run_keys, positions, keys)
            values = np.insert(run_values, positions, values)
        runs.append((keys, values))

    def add_new(self, keys: np.ndarray, values) -> None:
        """Add the keys not in the index yet (the numbers already there stay)."""
        new = self.lookup(keys) < 0
        self.add(keys[new], np.asarray(values)[new])


class Spool:
    """Chunks kept in order, each a small head (arrays) and a body (the rows): in memory while they are small,
    in a temporary file once they pass ``memory_bytes``, so a file of any size keeps flat memory. Read back
    in order as often as needed, heads alone or with their bodies."""

    def __init__(self, memory_bytes: int):
        self.memory_bytes = memory_bytes
        self.size = 0
        self.chunks: list[tuple] = []
        self.offsets: list[tuple[int, int]] = []  # in the file: where each head and body starts
        self.file = None

    def append(self, head, body, size: int) -> None:
        self.size += size
        if self.file is None and self.size <= self.memory_bytes:
            self.chunks.append((head, body))
            return
        if self.file is None:
            self.file = tempfile.TemporaryFile(prefix="import-spool-")  # noqa: SIM115 - closed by close()
            for kept_head, kept_body in self.chunks:
                self._write(kept_head, kept_body)
            self.chunks = []
        self._write(head, body)

    def _write(self, head, body) -> None:
        start = self.file.tell()
        pickle.dump(head, self.file, protocol=pickle.HIGHEST_PROTOCOL)
        self.offsets.append((start, self.file.tell()))
        pickle.dump(body, self.file, protocol=pickle.HIGHEST_PROTOCOL)

    def heads(self) -> Iterator:
        if self.file is None:
            yield from (head for head, _body in self.chunks)
            return
        self.file.flush()
        for start, _body_start in self.offsets:
            self.file.seek(start)
            yield pickle.load(self.file)

    def __iter__(self) -> Iterator[tuple]:
        """(head, body) of each chunk; a body is read only when asked for: ``body()``."""
        if self.file is None:
            for head, body in self.chunks:
                yield head, (lambda body=body: body)
            return
        self.file.flush()
        for start, body_start in self.offsets:
            self.file.seek(start)
            head = pickle.load(self.file)

            def body(body_start=body_start):
                self.file.seek(body_start)
                return pickle.load(self.file)

            yield head, body

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
        self.chunks = []
        self.offsets = []
