"""A database connection of the SQL catalog ended by the server (``pg_terminate_backend``
on a real PostgreSQL) in the middle of a call: a typed one-line error, the table as it
was, and the next call works again.

The connection is terminated from a second session right before one chosen statement
of the catalog runs (an engine event), so the fault lands inside the call, after the
pool's ping. During a commit's conditional UPDATE or its COMMIT the outcome is unknown:
``CommitStateUnknown``, and the commit engine deletes none of its files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from icewright.catalog import Identifier, SqlCatalog
from icewright.errors import CatalogServiceError, CommitStateUnknown, one_line

pytestmark = pytest.mark.slow

T = Identifier.parse("ns.t")
U = Identifier.parse("ns.u")


@contextmanager
def terminated_before(
    catalog: SqlCatalog, admin: sa.Engine, when: Callable[[str], bool], event: str = "sql"
) -> Iterator[list[int]]:
    """Terminate the catalog's connection (from ``admin``) right before the first
    statement ``when`` accepts (``event="commit"``: right before a COMMIT instead)."""
    killed: list[int] = []

    def kill(conn: sa.Connection) -> None:
        pid = conn.connection.dbapi_connection.info.backend_pid  # type: ignore[union-attr]
        with admin.connect() as other:
            other.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        killed.append(pid)

    def before_sql(conn: sa.Connection, cursor: Any, statement: str, *_: Any) -> None:
        if not killed and event == "sql" and when(statement):
            kill(conn)

    def before_commit(conn: sa.Connection) -> None:
        if not killed and event == "commit":
            kill(conn)

    sa.event.listen(catalog.engine, "before_cursor_execute", before_sql)
    sa.event.listen(catalog.engine, "commit", before_commit)
    try:
        yield killed
    finally:
        sa.event.remove(catalog.engine, "before_cursor_execute", before_sql)
        sa.event.remove(catalog.engine, "commit", before_commit)


def _files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file())


def _is_select(statement: str) -> bool:
    return statement.lstrip().upper().startswith("SELECT")


def test_a_lost_connection_is_typed_and_the_next_call_reconnects(
    postgres_url: str, tmp_path: Path
) -> None:
    from icewright.text.declaration import parse_schema

    catalog = SqlCatalog("lost", postgres_url, str(tmp_path / "wh"))
    admin = sa.create_engine(postgres_url)
    try:
        catalog.create_namespace(("ns",))
        catalog.create_table(T, parse_schema("id long"))
        before = catalog.table_metadata_location(T)

        calls: list[tuple[str, Callable[[], object]]] = [
            ("load", lambda: catalog.load_table(T)),
            ("list", lambda: catalog.list_tables(("ns",))),
            (
                "create",
                lambda: catalog.create_table(Identifier.parse("ns.u"), parse_schema("a int")),
            ),
            ("namespace", lambda: catalog.namespace_exists(("ns",))),
        ]
        for name, call in calls:
            with (
                terminated_before(catalog, admin, _is_select) as killed,
                pytest.raises(CatalogServiceError) as raised,
            ):
                call()
            assert killed, name
            line = one_line(raised.value)
            assert "the database connection was lost" in line and "retry" in line, line
            assert len(line) < 400, line
            call_again = call()  # the same call on the next try: works
            assert call_again is not None or name == "namespace"
            if name == "create":
                catalog.drop_table(U)
        assert catalog.table_metadata_location(T) == before
    finally:
        catalog.close()
        admin.dispose()


@pytest.mark.parametrize("where", ["update", "commit"])
def test_a_connection_lost_in_the_pointer_swap_is_an_unknown_outcome(
    postgres_url: str, tmp_path: Path, where: str
) -> None:
    from icewright.arrow import rows_to_arrow, write_data_files
    from icewright.commit import append
    from icewright.text.declaration import parse_schema

    catalog = SqlCatalog(f"swap_{where}", postgres_url, str(tmp_path / "wh"))
    admin = sa.create_engine(postgres_url)
    try:
        catalog.create_namespace(("ns",))
        table = catalog.create_table(T, parse_schema("id long"))
        data = rows_to_arrow(table.metadata.schema(), [{"id": 1}])
        files = write_data_files(table.io, table.metadata, data)
        before = catalog.table_metadata_location(T)

        def is_update(statement: str) -> bool:
            return statement.lstrip().upper().startswith("UPDATE")

        # "commit": the UPDATE runs, the connection ends before its COMMIT is sent.
        event = "sql" if where == "update" else "commit"
        with (
            terminated_before(catalog, admin, is_update, event) as killed,
            pytest.raises(CommitStateUnknown) as raised,
        ):
            append(table, files, commit_key="k1")
        assert killed
        assert "\n" not in one_line(raised.value)
        # Terminated before the COMMIT: PostgreSQL rolled the UPDATE back; nothing is lost
        # and nothing was deleted (the outcome was unknown to the writer).
        assert catalog.table_metadata_location(T) == before
        location = Path(table.metadata.location.removeprefix("file://"))
        written = _files(location)
        assert all(Path(f.file_path.removeprefix("file://")).exists() for f in files)
        assert any(p.endswith(".metadata.json") and "00001-" in p for p in written), written
        # The next attempt (the same commit key) resolves it and commits once.
        again = append(catalog.load_table(T), files, commit_key="k1")
        assert again.committed
        current = catalog.load_table(T)
        assert [s.snapshot_id for s in current.metadata.snapshots] == [again.snapshot_id]
    finally:
        catalog.close()
        admin.dispose()
