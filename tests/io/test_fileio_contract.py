"""The FileIO contract, checked on local disk and on S3 (moto's server)."""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icewright.errors import FileAlreadyExists, NoSuchFile
from tests.io.support import Backend


def test_write_read_exists_size_delete_round_trip(backend: Backend) -> None:
    path = backend.path("a/b/c.bin")
    assert not backend.io.exists(path)
    backend.io.write(path, b"hello world")
    assert backend.io.exists(path)
    assert backend.io.read(path) == b"hello world"
    assert backend.io.size(path) == 11

    backend.io.write(path, b"bye")  # overwrite
    assert backend.io.read(path) == b"bye"
    assert backend.io.size(path) == 3

    backend.io.delete(path)
    assert not backend.io.exists(path)
    backend.io.delete(path)  # deleting a missing file is not an error


def test_empty_file(backend: Backend) -> None:
    path = backend.path("empty")
    backend.io.write(path, b"")
    assert backend.io.exists(path)
    assert backend.io.read(path) == b""
    assert backend.io.size(path) == 0


def test_missing_file_raises_no_such_file_naming_the_path(backend: Backend) -> None:
    path = backend.path("nope/missing.avro")
    with pytest.raises(NoSuchFile, match=r"missing\.avro"):
        backend.io.read(path)
    with pytest.raises(NoSuchFile, match=r"missing\.avro"):
        backend.io.open_input(path)
    with pytest.raises(NoSuchFile, match=r"missing\.avro"):
        backend.io.size(path)
    # NoSuchFile is also the builtin FileNotFoundError, for generic callers.
    with pytest.raises(FileNotFoundError):
        backend.io.read(path)


def test_first_existing_is_the_first_candidate_there(backend: Backend) -> None:
    spellings = (".metadata.json", ".gz.metadata.json", ".metadata.json.gz")
    plain, gz, gz_last = (backend.path(f"metadata/v7{ext}") for ext in spellings)
    candidates = [plain, gz, gz_last]
    assert backend.io.first_existing(candidates) is None
    backend.io.write(backend.path("metadata/v70.metadata.json"), b"another version")
    assert backend.io.first_existing(candidates) is None
    backend.io.write(gz_last, b"3")
    assert backend.io.first_existing(candidates) == gz_last
    backend.io.write(gz, b"2")
    assert backend.io.first_existing(candidates) == gz
    assert backend.io.first_existing([gz_last, gz]) == gz_last
    assert backend.io.first_existing([backend.path("elsewhere/v7.metadata.json"), gz]) == gz
    assert backend.io.first_existing([]) is None


def test_create_if_absent(backend: Backend) -> None:
    path = backend.path("metadata/v1.metadata.json")
    backend.io.create(path, b"first")
    with pytest.raises(FileAlreadyExists, match=r"v1\.metadata\.json"):
        backend.io.create(path, b"second")
    assert backend.io.read(path) == b"first"
    # write still overwrites unconditionally
    backend.io.write(path, b"third")
    assert backend.io.read(path) == b"third"


def test_create_after_delete_succeeds(backend: Backend) -> None:
    path = backend.path("x")
    backend.io.create(path, b"1")
    backend.io.delete(path)
    backend.io.create(path, b"2")
    assert backend.io.read(path) == b"2"


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    # Switching threads often makes check-then-act gaps show up (this is how a
    # non-atomic If-None-Match in moto's threaded server was found).
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


@pytest.mark.usefixtures("fast_thread_switching")
def test_racing_creators_exactly_one_wins(backend: Backend) -> None:
    threads = 8
    for round_no in range(4):
        path = backend.path(f"metadata/v{round_no}.metadata.json")
        barrier = threading.Barrier(threads)
        outcomes: dict[int, str] = {}

        def creator(
            i: int,
            path: str = path,
            barrier: threading.Barrier = barrier,
            outcomes: dict[int, str] = outcomes,
        ) -> None:
            content = f"writer-{i}-".encode() * 1000
            barrier.wait()
            try:
                backend.io.create(path, content)
                outcomes[i] = "won"
            except FileAlreadyExists:
                outcomes[i] = "lost"
            except Exception as e:  # recorded, so the assertion below shows it
                outcomes[i] = f"error: {e!r}"

        workers = [threading.Thread(target=creator, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

        winners = [i for i, o in outcomes.items() if o == "won"]
        assert len(outcomes) == threads
        assert sorted(set(outcomes.values())) == ["lost", "won"], outcomes
        assert len(winners) == 1, outcomes
        assert backend.io.read(path) == f"writer-{winners[0]}-".encode() * 1000


def test_list_prefix_is_recursive_and_directory_scoped(backend: Backend) -> None:
    files = {
        "data/p=1/a.parquet": b"a",
        "data/p=1/b.parquet": b"bb",
        "data/p=2/deep/c.parquet": b"ccc",
        "data2/not-me.parquet": b"dddd",
        "metadata/v1.metadata.json": b"{}",
    }
    for rel, content in files.items():
        backend.io.write(backend.path(rel), content)

    listed = {f.path: f for f in backend.io.list_prefix(backend.path("data"))}
    assert set(listed) == {
        backend.path("data/p=1/a.parquet"),
        backend.path("data/p=1/b.parquet"),
        backend.path("data/p=2/deep/c.parquet"),
    }
    for path, info in listed.items():
        assert info.size == backend.io.size(path)
        assert backend.io.read(path) == files[path[len(backend.root) + 1 :]]
        assert info.modified_ms > 1_600_000_000_000  # milliseconds, not seconds

    everything = {f.path for f in backend.io.list_prefix(backend.root + "/")}
    assert everything == {backend.path(rel) for rel in files}
    assert list(backend.io.list_prefix(backend.path("nothing-here"))) == []


def test_delete_many(backend: Backend) -> None:
    paths = [backend.path(f"d/{i:03d}.bin") for i in range(25)]
    for p in paths:
        backend.io.write(p, b"x")
    missing = backend.path("d/never-existed.bin")
    failures = backend.io.delete_many([*paths[:20], missing])
    assert failures == []
    remaining = sorted(f.path for f in backend.io.list_prefix(backend.path("d")))
    assert remaining == paths[20:]
    assert backend.io.delete_many([]) == []


def test_open_input_is_seekable(backend: Backend) -> None:
    path = backend.path("blob.bin")
    data = bytes(range(256)) * 40
    backend.io.write(path, data)
    with backend.io.open_input(path) as f:
        assert f.seekable()
        f.seek(-8, io.SEEK_END)
        assert f.read() == data[-8:]
        f.seek(100)
        assert f.read(10) == data[100:110]
        assert f.tell() == 110
        f.seek(0)
        assert f.read() == data


def _parquet_bytes() -> tuple[pa.Table, bytes]:
    table = pa.table({"id": pa.array(range(1000), pa.int64()), "s": [f"v{i}" for i in range(1000)]})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return table, sink.getvalue().to_pybytes()


def test_parquet_through_open_input(backend: Backend) -> None:
    table, blob = _parquet_bytes()
    path = backend.path("data/f.parquet")
    backend.io.write(path, blob)
    with backend.io.open_input(path) as f:
        assert pq.read_table(f).equals(table)


def test_pyarrow_filesystem_reads_what_fileio_wrote(backend: Backend) -> None:
    table, blob = _parquet_bytes()
    path = backend.path("data/g.parquet")
    backend.io.write(path, blob)
    fs, normalize = backend.io.to_pyarrow_filesystem()
    assert fs.get_file_info(normalize(path)).size == len(blob)
    assert pq.read_table(normalize(path), filesystem=fs).equals(table)


def test_fileio_reads_what_pyarrow_filesystem_wrote(backend: Backend) -> None:
    table, _ = _parquet_bytes()
    path = backend.path("data/h.parquet")
    fs, normalize = backend.io.to_pyarrow_filesystem()
    if backend.name == "local":
        fs.create_dir(normalize(backend.path("data")), recursive=True)
    pq.write_table(table, normalize(path), filesystem=fs)
    assert backend.io.exists(path)
    assert pq.read_table(io.BytesIO(backend.io.read(path))).equals(table)


def test_properties_are_a_read_only_copy(backend: Backend) -> None:
    props = backend.io.properties
    with pytest.raises(TypeError):
        props["x"] = "y"  # type: ignore[index]
