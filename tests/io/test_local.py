"""LocalFileIO specifics: file: URI forms, atomic writes, temp-file hygiene."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from icewright.errors import FileAlreadyExists, ValidationError
from icewright.io import LocalFileIO
from icewright.io.local import local_path


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("file:/tmp/wh/db/t/metadata/v1.metadata.json", "/tmp/wh/db/t/metadata/v1.metadata.json"),
        ("file:///tmp/wh/t", "/tmp/wh/t"),
        ("file://localhost/tmp/wh/t", "/tmp/wh/t"),
        ("FILE:/tmp/x", "/tmp/x"),
        ("/tmp/plain", "/tmp/plain"),
        ("relative/dir", "relative/dir"),
        ("file:/tmp/with space/a%20b", "/tmp/with space/a%20b"),  # taken literally
    ],
)
def test_local_path_forms(uri: str, expected: str) -> None:
    assert local_path(uri) == expected


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("file://otherhost/tmp/x", "not local"),
        ("file:relative", "absolute path"),
        ("s3://bucket/key", "load_file_io"),
    ],
)
def test_local_path_rejects(uri: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        local_path(uri)


def test_hadoop_style_paths_round_trip(tmp_path: Path) -> None:
    fio = LocalFileIO()
    hadoop = f"file:{tmp_path}/wh/db/t/metadata/v1.metadata.json"
    assert hadoop.startswith("file:/") and not hadoop.startswith("file://")
    fio.create(hadoop, b'{"format-version": 2}')

    plain = str(tmp_path / "wh/db/t/metadata/v1.metadata.json")
    assert Path(plain).read_bytes() == b'{"format-version": 2}'
    assert fio.read(f"file://{plain}") == b'{"format-version": 2}'
    assert fio.read(plain) == b'{"format-version": 2}'
    assert fio.exists(hadoop) and fio.size(hadoop) == 21
    with pytest.raises(FileAlreadyExists):
        fio.create(f"file://{plain}", b"other")

    listed = list(fio.list_prefix(f"file:{tmp_path}/wh"))
    assert [f.path for f in listed] == [hadoop]  # same URI form as the prefix
    assert fio.read(listed[0].path) == b'{"format-version": 2}'

    listed3 = list(fio.list_prefix(f"file://{tmp_path}/wh/"))
    assert [f.path for f in listed3] == [f"file://{plain}"]

    fio.delete(hadoop)
    assert not os.path.exists(plain)


def test_create_and_write_leave_no_temp_files(tmp_path: Path) -> None:
    fio = LocalFileIO()
    target = tmp_path / "m" / "v1.metadata.json"
    fio.create(str(target), b"one")
    with pytest.raises(FileAlreadyExists):
        fio.create(str(target), b"two")
    fio.write(str(tmp_path / "m" / "version-hint.text"), b"1")
    fio.write(str(tmp_path / "m" / "version-hint.text"), b"2")
    assert sorted(os.listdir(tmp_path / "m")) == ["v1.metadata.json", "version-hint.text"]
    assert target.read_bytes() == b"one"


def test_create_refuses_to_replace_a_directory(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileAlreadyExists):
        LocalFileIO().create(str(tmp_path / "taken"), b"x")
    assert (tmp_path / "taken").is_dir()


def test_readers_never_see_a_partial_write(tmp_path: Path) -> None:
    fio = LocalFileIO()
    path = str(tmp_path / "hint")
    size = 1 << 20
    contents = [b"a" * size, b"b" * size]
    fio.write(path, contents[0])
    stop = threading.Event()
    bad: list[int] = []

    def reader() -> None:
        while not stop.is_set():
            data = fio.read(path)
            if data not in contents:
                bad.append(len(data))

    t = threading.Thread(target=reader)
    t.start()
    try:
        for i in range(30):
            fio.write(path, contents[i % 2])
    finally:
        stop.set()
        t.join()
    assert bad == []
    assert fio.read(path) == contents[1]


def test_delete_many_reports_failures(tmp_path: Path) -> None:
    fio = LocalFileIO()
    good = [str(tmp_path / f"f{i}") for i in range(5)]
    for p in good:
        fio.write(p, b"x")
    a_dir = tmp_path / "a-directory"
    a_dir.mkdir()
    failures = fio.delete_many([*good, str(a_dir), "s3://bucket/not-local"])
    assert [p for p, _ in failures] == [str(a_dir), "s3://bucket/not-local"]
    assert isinstance(failures[0][1], IsADirectoryError)
    assert isinstance(failures[1][1], ValidationError)
    assert not any(os.path.exists(p) for p in good)


def test_exists_is_false_for_directories(tmp_path: Path) -> None:
    assert not LocalFileIO().exists(str(tmp_path))
