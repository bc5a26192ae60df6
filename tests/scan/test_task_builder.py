"""The planner's per-file loops: the compiled ones (``_task_builder.pyx``) give what the
Python ones give, field by field, errors included; and the installed package has them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icewright.errors import InvalidMetadata
from icewright.expressions import ALWAYS_TRUE, Expression, equal
from icewright.manifest.data_file import DataFile, EntryStatus, FileContent, ManifestEntry
from icewright.scan import FileScanTask, task_builder
from icewright.scan.task_builder import live_entries, scan_tasks


def test_the_installed_package_has_its_compiled_task_builder() -> None:
    # `uv sync` builds the extension; a silent fall-back to Python would fail here
    assert task_builder.COMPILED


def data_file(i: int, content: FileContent, spec_id: int) -> DataFile:
    return DataFile(
        file_path=f"s3://b/t/data/{i}.parquet",
        file_format="parquet",
        record_count=i,
        file_size_in_bytes=100 + i,
        content=content,
        partition=(i % 3,),
        equality_ids=(1,) if content is FileContent.EQUALITY_DELETES else None,
        spec_id=spec_id,
    )


class OtherEntry(ManifestEntry):
    """Not ManifestEntry itself: the compiled loops read its fields by name."""

    __slots__ = ()


entry_lists = st.lists(
    st.builds(
        lambda kind, i, status, content, spec_id, seq, file_seq, snap: kind(
            status=status,
            snapshot_id=snap,
            sequence_number=seq,
            file_sequence_number=file_seq,
            data_file=data_file(i, content, spec_id),
        ),
        st.sampled_from([ManifestEntry] * 4 + [OtherEntry]),
        st.integers(0, 10_000),
        st.sampled_from(EntryStatus),
        st.sampled_from([FileContent.DATA] * 4 + list(FileContent)),
        st.integers(0, 2),
        st.one_of(st.none(), st.integers(0, 50)) | st.integers(0, 50),
        st.one_of(st.none(), st.integers(0, 50)),
        st.one_of(st.none(), st.integers(1, 2**62)),
    ),
    max_size=30,
)


def outcome(run: Any) -> tuple[str, Any]:
    try:
        return "ok", run()
    except InvalidMetadata as e:
        return "error", str(e)


@given(entries=entry_lists, data_only=st.booleans())
def test_live_entries_in_c_and_in_python_agree(
    entries: list[ManifestEntry], data_only: bool
) -> None:
    def run(compiled: bool) -> tuple[str, Any]:
        return outcome(
            lambda: live_entries(entries, "m.avro", data_only=data_only, compiled=compiled)
        )

    expected = run(False)
    assert run(True) == expected
    if expected[0] == "ok":
        assert [e.status for e in expected[1]].count(EntryStatus.DELETED) == 0
        assert len(expected[1]) == sum(e.status is not EntryStatus.DELETED for e in entries)
    else:
        assert data_only and "data manifest m.avro lists delete file" in expected[1]


def residual_of(f: DataFile) -> Expression:
    return ALWAYS_TRUE if f.partition[0] == 0 else equal("id", f.record_count)


def deletes_of(f: DataFile, seq: int) -> tuple[DataFile, ...]:
    return tuple(
        data_file(seq + k, FileContent.POSITION_DELETES, f.spec_id) for k in range(seq % 3)
    )


@given(
    entries=entry_lists,
    residual=st.sampled_from([ALWAYS_TRUE, equal("id", 1)]),
    per_file=st.booleans(),
    with_deletes=st.booleans(),
)
def test_scan_tasks_in_c_and_in_python_agree(
    entries: list[ManifestEntry], residual: Expression, per_file: bool, with_deletes: bool
) -> None:
    def run(compiled: bool) -> tuple[str, Any]:
        return outcome(
            lambda: scan_tasks(
                entries,
                residual=residual,
                residual_of=residual_of if per_file else None,
                deletes_of=deletes_of if with_deletes else None,
                compiled=compiled,
            )
        )

    expected = run(False)
    got = run(True)
    assert got == expected
    if expected[0] == "error":
        assert "has no data sequence number" in expected[1]
        assert any(e.sequence_number is None for e in entries)
        return
    tasks: list[FileScanTask] = got[1]
    assert [t.data_file for t in tasks] == [e.data_file for e in entries]
    for task, entry in zip(tasks, entries, strict=True):
        assert type(task) is FileScanTask
        assert task.data_sequence_number == entry.sequence_number
        assert task.file_sequence_number == entry.file_sequence_number
        assert task.snapshot_id == entry.snapshot_id
        assert task.spec_id == entry.data_file.spec_id
        assert task.residual == (residual_of(task.data_file) if per_file else residual)
        assert task.delete_files == (
            deletes_of(task.data_file, task.data_sequence_number) if with_deletes else ()
        )
        with pytest.raises(AttributeError):
            task.spec_id = 9  # type: ignore[misc]  # still frozen
