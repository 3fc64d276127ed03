"""Generic persistence for resources with standard attributes.

Every resource table shares the standard columns, tags and the list
semantics of the API (filters, sorting, markers), so that logic is written
once here and each resource module only adds what is particular to it.
"""
from __future__ import annotations

import collections
import datetime as dt
import functools
import uuid
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection, Table

from neutrino import errors
from neutrino.db import pipeline, writes
from neutrino.db import tables as t
from neutrino.db.query import TAG_FILTERS, ListQuery
from neutrino.plugins import joined as joined_mod
from neutrino.plugins.joined import Aggregated, Reads

CHUNK = 500


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, microsecond=0)


def iso(value: dt.datetime | None) -> str | None:
    # isoformat is several times cheaper than strftime; values carry no
    # microseconds (see ``now``), so both give "2026-01-01T00:00:00Z".
    if value is None:
        return None
    if value.microsecond:
        value = value.replace(microsecond=0)
    return value.isoformat() + "Z"


def new_id() -> str:
    return str(uuid.uuid4())


def standard_row(ctx_project: str | None, data: dict[str, Any],
                 revision: int = 1) -> dict[str, Any]:
    """Standard columns of a new row; ``revision`` is what upstream shows on
    create (1 for networks and ports, which upstream bumps once while
    binding them; 0 for subnets and subnet pools)."""
    ts = now()
    # An explicit '' is kept: the ports of routers and floating IPs belong
    # to no project, as upstream shows them.
    project = data.get("project_id")
    if project is None:
        project = data.get("tenant_id") or ctx_project
    return {"id": data.get("id") or new_id(),
            "project_id": project,
            "name": data.get("name") or "", "description": data.get("description") or "",
            "created_at": ts, "updated_at": ts, "revision_number": revision}


def standard_dict(row: Any) -> dict[str, Any]:
    project, created, updated = row.project_id, row.created_at, row.updated_at
    return {"id": row.id, "name": row.name, "description": row.description,
            "project_id": project, "tenant_id": project,
            "created_at": iso(created), "updated_at": iso(updated),
            "revision_number": row.revision_number}


@functools.cache
def _insert_stmt(table: Table, pipelined: bool = False) -> Any:
    stmt = sa.insert(table)
    return stmt.execution_options(**{pipeline.OPTION: True}) if pipelined else stmt


def insert(conn: Connection, table: Table, rows: dict[str, Any] | list[dict[str, Any]],
           pipelined: bool = False) -> None:
    """Insert one row or many through one statement object per table:
    building ``INSERT ... VALUES`` anew costs more than sending it.

    ``pipelined``: the INSERT may travel with the connection's next round
    trip (``db/pipeline.py``), so its error, if any, comes from a later
    statement or the COMMIT; only for INSERTs whose failure is not caught
    on the spot."""
    conn.execute(_insert_stmt(table, pipelined), rows)


@functools.cache
def _advance(table: Table) -> Any:
    """An UPDATE advancing the revision; the values to set (``updated_at``
    at least) come as parameters (one SET per key given)."""
    return sa.update(table).values(revision_number=table.c.revision_number + 1)


@functools.cache
def _bump_stmt(table: Table, conditional: bool) -> Any:
    """The revision's advance of one row, built once per table."""
    stmt = _advance(table).where(table.c.id == sa.bindparam("bump_id"))
    if conditional:
        stmt = stmt.where(table.c.revision_number == sa.bindparam("bump_revision"))
    return stmt


def bump(conn: Connection, table: Table, rid: str, values: dict[str, Any] | None = None,
         expected_revision: int | None = None) -> None:
    """Apply ``values`` and advance the revision, atomically.

    With ``expected_revision`` the update is conditional, which is how
    ``If-Match: revision_number=N`` stays correct under concurrency.
    """
    params = {**(values or {}), "updated_at": now(), "bump_id": rid}
    if expected_revision is not None:
        params["bump_revision"] = expected_revision
    stmt = _bump_stmt(table, expected_revision is not None)
    if conn.execute(stmt, params).rowcount == 0 and expected_revision is not None:
        current = conn.execute(sa.select(table.c.revision_number)
                               .where(table.c.id == rid)).scalar()
        raise errors.RevisionNumberConstraintFailed(expected=expected_revision,
                                                    current=current)


def bump_where(conn: Connection, table: Table, *where: Any,
               values: dict[str, Any] | None = None) -> None:
    """Apply ``values`` to every row of ``table`` matching ``where`` and
    advance their revisions, in one statement."""
    conn.execute(_advance(table).where(*where), {**(values or {}), "updated_at": now()})


def check_revision(conn: Connection, table: Table, rid: str,
                   expected_revision: int | None) -> None:
    if expected_revision is None:
        return
    current = conn.execute(sa.select(table.c.revision_number)
                           .where(table.c.id == rid)).scalar()
    if current is not None and current != expected_revision:
        raise errors.RevisionNumberConstraintFailed(expected=expected_revision,
                                                    current=current)


# A page's table and the least and greatest ids it holds every row between.
Span = tuple[Table, "str | None", "str | None"]


class Page(list):  # type: ignore[type-arg]
    """The rows (or API dicts) of one list request, with what tells their
    child tables' rows apart (a few more may appear since: children of
    unknown parents are ignored):

    - ``id_span``, when set, is ``(table, least, greatest)``: the page holds
      every row of ``table`` with an id between the two (``None``: no
      bound), as an unfiltered page sorted by id, or a whole table, does.
      A child table keyed by a foreign key to ``table`` then has the page's
      rows as a range of that key, read from its index alone;
    - else ``id_query``, when set, is a SELECT of the page's ids, which the
      child tables join: cheaper than an ``IN`` list of every id, whose
      parameters cost more to bind than the query takes;
    - ``groups``, when set, holds some ``Aggregated`` reads' rows of every
      row on the page (and ``Joined`` reads' values), by read and id, known
      without reading them (``RowMemo.page``): ``child_rows`` and
      ``joined.filler`` take them from there.
    """

    def __init__(self, items: Iterable[Any] = (), id_query: Any = None,
                 id_span: Span | None = None) -> None:
        super().__init__(items)
        self.id_query = id_query
        self.id_span = id_span
        self.groups: dict[Any, dict[str, list[Any]]] | None = None


# Parent ids for ``children``: a page of ids, knowing what their page knows.
Ids = Page


def _page_ids(ids: Iterable[Any], page: Any) -> Page:
    """``ids`` (or rows, or dicts) with ``page``'s ``id_query`` and ``id_span``."""
    return Page(ids, getattr(page, "id_query", None), getattr(page, "id_span", None))


def empty_page_of(rows: Sequence[Any]) -> Page:
    """A page for the dicts of these rows, knowing what they know."""
    return _page_ids((), rows)


def row_ids(rows: Sequence[Any]) -> Ids:
    return _page_ids([r.id for r in rows], rows)


def item_ids(items: Sequence[dict[str, Any]]) -> Ids:
    """The ids of API dicts, keeping their page's ``id_query`` and ``id_span``."""
    return _page_ids([i["id"] for i in items], items)


# Below this many parents an IN list is as cheap as a subquery.
SUBQUERY_FROM = 50

# A page of at most this many rows is read again row by row, each with its
# child tables in one SELECT (as a show), instead of one batch per child
# table: a list by name finding one network was 8 statements, now 2.
SHOWN_ALONE = 3


def shown_alone(rows: Sequence[Any], show: Callable[[str], dict[str, Any]]) -> list[dict[str, Any]]:
    """The dicts of a small page's rows, each read by ``show`` (a handler's
    single read with its children); a row deleted since the page's read is
    left out, as a page read a moment later would."""
    out = []
    for row in rows:
        try:
            out.append(show(row.id))
        except errors.NotFound:
            continue
    return out


def chunks(ids: Sequence[str]) -> Iterable[Sequence[str]]:
    for i in range(0, len(ids), CHUNK):
        yield ids[i:i + CHUNK]


def children(conn: Connection, table: Table, key: str, ids: Sequence[str],
             order_by: Sequence[Any] = (), columns: Sequence[str] = ()) -> dict[str, list[Any]]:
    """Rows of a child table grouped by parent id, in one query per chunk."""
    if not ids:  # e.g. an extension's items all read with their row
        return {}
    out: dict[str, list[Any]] = {i: [] for i in ids}
    index = (list(columns).index(key) if columns else list(table.c.keys()).index(key))
    stmt = _children_stmt(table, key, tuple(order_by), tuple(columns))
    for rows in stmt.rows(conn, _page_ids(out, ids)):
        for row in rows:
            found = out.get(row[index])
            if found is not None:  # a parent that appeared since (read committed)
                found.append(row)
    return out


class ByParent:
    """A SELECT of child rows keyed by a parent column, built once: building
    ``IN (<500 literals>)`` anew each time costs more than running it."""

    def __init__(self, stmt: Any, column: Any) -> None:
        self.base, self.column = stmt, column
        self.expanding = stmt.where(column.in_(sa.bindparam("ids", expanding=True)))
        self.spanning = stmt.where(column.between(sa.bindparam("least"), sa.bindparam("most")))
        self.parents = {fk.column.table for fk in column.foreign_keys}

    def rows(self, conn: Connection, ids: Sequence[str]) -> list[list[Any]]:
        """The rows for these parents. For many: a range of the key when
        the page holds every parent in it and the key refers to the page's
        table alone (one index range, no join: cheaper than the join,
        docs/performance.md), else through the page's id query (one
        query, no parameters to bind). For few, or with neither: one query
        per chunk of ids."""
        if len(ids) >= SUBQUERY_FROM:
            span = getattr(ids, "id_span", None)
            if span is not None and span[0] in self.parents:
                _, least, most = span
                if least is None or most is None:
                    return [conn.execute(self.base).all()]
                return [conn.execute(self.spanning, {"least": least, "most": most}).all()]
            query = getattr(ids, "id_query", None)
            if query is not None:
                return [conn.execute(self.base.where(self.column.in_(query))).all()]
        return [conn.execute(self.expanding, {"ids": part}).all() for part in chunks(list(ids))]


_CHILD_STMTS: dict[Any, Any] = {}


def _children_stmt(table: Table, key: str, order_by: tuple[Any, ...],
                   columns: tuple[str, ...]) -> ByParent:
    memo = (table.name, key, tuple(str(o) for o in order_by), columns)
    stmt = _CHILD_STMTS.get(memo)
    if stmt is None:
        selected = [table.c[c] for c in columns] if columns else [table]
        base = sa.select(*selected)
        if order_by:
            base = base.order_by(*order_by)
        stmt = _CHILD_STMTS[memo] = ByParent(base, table.c[key])
    return stmt


def child_rows(conn: Connection, rows: Sequence[Any], ids: Sequence[str],
               agg: Aggregated) -> dict[str, list[Any]]:
    """``agg``'s rows per parent: from the parents' own rows when they were
    read with it (a single row's read), else in one batch (a page). A
    ``probed`` read's rows hold whether the parent has any: only those
    that do are read."""
    known = getattr(rows, "groups", None)
    if known is not None and agg in known:
        return known[agg]
    fields = rows[0]._fields if rows else ()
    if agg.labels[0] in fields:
        index = fields.index(agg.labels[0])
        if not agg.probed:
            return {row.id: agg.decode(row[index]) for row in rows}
        having = [row.id for row in rows if row[index] is not None]
        found = batched(conn, agg, Ids(having)) if having else {}
        return {row.id: found.get(row.id, []) for row in rows}
    return batched(conn, agg, ids)


def batched(conn: Connection, agg: Aggregated, ids: Sequence[str]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {i: [] for i in ids}
    for part in _batch(agg).rows(conn, _page_ids(out, ids)):
        for row in part:
            found = out.get(row[0])
            if found is not None:  # a parent that appeared since (read committed)
                found.append(row)
    if agg.rearranges:  # most groups hold one row, which only a truncation changes
        least = 1 if agg.truncates else 2
        for rid, group in out.items():
            if len(group) >= least:
                out[rid] = agg.arrange(group)
    return out


def aggregate_filler(conn: Connection, rows: Sequence[Any], ids: Sequence[str],
                     joined: Reads) -> Callable[[dict[str, Any], str], None]:
    """``fill(item, id)`` for the ``Aggregated`` reads in ``joined`` that set
    an attribute: from the rows when they were read with them, else one
    batch each, so a page comes out as a single row's read does (a parent
    without rows gets its fill's empty case)."""
    plan = [(agg.fill, child_rows(conn, rows, ids, agg)) for agg in joined
            if isinstance(agg, Aggregated) and agg.fill is not None]

    def fill(item: dict[str, Any], rid: str) -> None:
        for fn, groups in plan:
            fn(item, groups[rid])
    return fill


@functools.cache
def _batch(agg: Aggregated) -> ByParent:
    return ByParent(agg.batch(), agg.table.c[agg.key])


# Tag edits advance the tagged resource's revision (``edit_tags``).
TAGS = Aggregated(t.tags, "resource_id", ("tag",), order_by=("tag",), follows_revision=True)


def load_tags(conn: Connection, ids: Sequence[str],
              rows: Sequence[Any] = ()) -> dict[str, list[str]]:
    """Tags by resource id: from ``rows`` when they were read with them
    (``TAGS`` among a single row's joined reads), else in one batch."""
    grouped = child_rows(conn, rows, ids, TAGS)
    return {rid: [tag for _, tag in rows] for rid, rows in grouped.items()}


def set_tags(conn: Connection, rid: str, tags: Iterable[str]) -> None:
    conn.execute(sa.delete(t.tags).where(t.tags.c.resource_id == rid))
    tag_new(conn, rid, tags)


def tag_new(conn: Connection, rid: str, tags: Iterable[str]) -> None:
    """The tags of a resource made in this transaction (it has none yet):
    inserts alone, so its read-back can be told from them (``fresh``)."""
    rows = [{"resource_id": rid, "tag": tag} for tag in sorted(set(tags))]
    if rows:
        conn.execute(sa.insert(t.tags), rows)


def edit_tags(conn: Connection, table: Table, singular: str, rid: str,
              not_found: Callable[[], Exception], add: list[str] | None = None,
              remove: list[str] | None = None, replace: list[str] | None = None) -> list[str]:
    """The tag API's change to one resource's tags, in the caller's
    transaction: the resource is locked (tag edits read, then rewrite, the
    whole set) and its revision advances when the set changes."""
    get_row(conn, table, rid, not_found, for_update=True)
    current = set(load_tags(conn, [rid])[rid])
    if replace is not None:
        new = set(replace)
    else:
        new = (current | set(add or [])) - set(remove or [])
    if remove and not set(remove) <= current:
        missing = sorted(set(remove) - current)[0]
        raise errors.TagNotFound(tag=missing, resource=singular, resource_id=rid)
    if new != current:
        set_tags(conn, rid, new)
        bump(conn, table, rid)
    return sorted(new)


_DELETE_TAGS = sa.delete(t.tags).where(
    t.tags.c.resource_id.in_(sa.bindparam("ids", expanding=True)))


def delete_tags(conn: Connection, *rids: str) -> None:
    """The tags of these resources, one statement per chunk."""
    for part in chunks(list(rids)):
        conn.execute(_DELETE_TAGS, {"ids": part})


# -- listing -----------------------------------------------------------------

FilterBuilder = Callable[[list[Any]], Any]


def tag_clauses(id_col: Any, filters: dict[str, list[Any]]) -> list[Any]:
    """``tags`` (all), ``tags-any``, ``not-tags`` (not all), ``not-tags-any``."""
    def split(values: list[Any]) -> list[str]:
        return [tag for v in values for tag in str(v).split(",") if tag]

    def having(tags: list[str]) -> Any:
        return (sa.select(t.tags.c.resource_id).where(t.tags.c.tag.in_(tags))
                .group_by(t.tags.c.resource_id)
                .having(sa.func.count(sa.distinct(t.tags.c.tag)) == len(set(tags))))

    def any_of(tags: list[str]) -> Any:
        return sa.select(t.tags.c.resource_id).where(t.tags.c.tag.in_(tags))

    out = []
    if filters.get("tags"):
        out.append(id_col.in_(having(split(filters["tags"]))))
    if filters.get("tags-any"):
        out.append(id_col.in_(any_of(split(filters["tags-any"]))))
    if filters.get("not-tags"):
        out.append(id_col.not_in(having(split(filters["not-tags"]))))
    if filters.get("not-tags-any"):
        out.append(id_col.not_in(any_of(split(filters["not-tags-any"]))))
    return out


def column_clauses(table: Table, filters: dict[str, list[Any]],
                   special: dict[str, FilterBuilder]) -> list[Any]:
    out = []
    for key, values in filters.items():
        if key in TAG_FILTERS:
            continue
        if key in special:
            clause = special[key](values)
            if clause is not None:
                out.append(clause)
            continue
        col_name = "project_id" if key == "tenant_id" else key
        if col_name not in table.c:
            continue
        col = table.c[col_name]
        if isinstance(col.type, sa.DateTime):
            values = [_parse_time(v) for v in values]
        out.append(col.in_(values) if len(values) > 1 else col == values[0])
    out.extend(tag_clauses(table.c.id, filters))
    return out


def _parse_time(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).replace(tzinfo=None)
        except ValueError:
            raise errors.InvalidInput(error_message=f"'{value}' is not a valid time") from None
    return value


def paged_select(conn: Connection, table: Table, clauses: list[Any],
                 query: ListQuery, columns: Sequence[Any] = ()) -> tuple[Page, bool]:
    """Rows after filters, sorting and marker; and whether more follow.
    ``columns``: labelled values computed with each row (``Computed``'s),
    read by the same SELECT.

    The rows come as a ``Page`` whose ``id_query`` selects the same rows
    (see ``Page``) when the limit did not cut them or they are sorted by id
    alone.
    """
    sorts = [(("project_id" if k == "tenant_id" else k), asc) for k, asc in query.sorts]
    if not any(k == "id" for k, _ in sorts):
        sorts.append(("id", sorts[-1][1] if sorts else True))
    if query.page_reverse:
        sorts = [(k, not asc) for k, asc in sorts]
    where = [*clauses, *query.extra]
    if query.marker:
        marker = conn.execute(sa.select(*[table.c[k] for k, _ in sorts])
                              .where(table.c.id == query.marker)).first()
        query.marker_found = marker is not None
        if marker is not None:
            where.append(_after(table, sorts, marker))
    stmt = sa.select(table, *columns).where(*where).order_by(
        *[(table.c[k].asc() if asc else table.c[k].desc()) for k, asc in sorts])
    if query.limit:
        stmt = stmt.limit(query.limit + 1)
    rows = conn.execute(stmt).all()
    more = bool(query.limit) and len(rows) > query.limit
    if more:
        rows = rows[:query.limit]
    if query.page_reverse:
        rows.reverse()
    if not more:
        id_query = sa.select(table.c.id).where(*where)
    elif [k for k, _ in sorts] == ["id"] and rows:
        # Sorted by id alone (the default), a cut page is an id range.
        ids = [r.id for r in rows]
        id_query = sa.select(table.c.id).where(*where, table.c.id >= min(ids),
                                               table.c.id <= max(ids))
    else:
        id_query = None
    return Page(rows, id_query, _span(table, rows, clauses, query, sorts, more)), more


def _span(table: Table, rows: Sequence[Any], clauses: list[Any], query: ListQuery,
          sorts: list[tuple[str, bool]], more: bool) -> Span | None:
    """The ids the page holds every row between (see ``Page``): none when
    something filtered it; its ends when it is a run of the id order; no
    bounds when it is the whole table in another order."""
    if not rows or clauses or query.extra:
        return None
    if [k for k, _ in sorts] == ["id"]:
        least, most = sorted((rows[0].id, rows[-1].id))
        return table, least, most
    if more or query.marker:
        return None
    return table, None, None


def _after(table: Table, sorts: list[tuple[str, bool]], marker: Any) -> Any:
    """Rows strictly after ``marker`` in the (multi-key) sort order."""
    ors = []
    for i, (key, asc) in enumerate(sorts):
        ands = [table.c[k] == getattr(marker, k) for k, _ in sorts[:i]]
        value = getattr(marker, key)
        col = table.c[key]
        if value is None:
            ands.append(col.is_not(None) if asc else sa.false())
        else:
            ands.append(col > value if asc else col < value)
        ors.append(sa.and_(*ands))
    return sa.or_(*ors)


@functools.cache
def _row_stmt(table: Table, lock: bool, joined: tuple[Any, ...]) -> Any:
    """One statement object per table, lock and joins: every request reads
    a row or two this way, and building the SELECT anew costs more than its
    run."""
    if lock:  # the nullable side of an outer join cannot be locked
        return sa.select(table).where(table.c.id == sa.bindparam("rid")).with_for_update()
    return joined_mod.select(table, joined).where(table.c.id == sa.bindparam("rid"))


_FRESH: ContextVar[tuple[Collection[str], writes.Written] | None] = ContextVar(
    "fresh", default=None)


@contextmanager
def fresh(ids: Collection[str], written: writes.Written) -> Iterator[None]:
    """Within the block, rows of ``ids`` (made in this transaction, which
    wrote ``written``) are read without the child tables nothing was
    written to (``joined.known_empty``), and without the database at all
    where the rows the transaction put tell the whole row (``_made_row``)."""
    token = _FRESH.set((ids, written))
    try:
        yield
    finally:
        _FRESH.reset(token)


# (table, id) -> the row this transaction has just locked, for the next lock
# of the same row (``locked_ahead``).
_LOCKED: ContextVar[dict[tuple[Table, str], Any] | None] = ContextVar("locked", default=None)


@contextmanager
def locked_ahead(table: Table, row: Any) -> Iterator[None]:
    """Within the block, the next lock of ``row`` (``get_row`` with
    ``for_update``) takes ``row`` instead of asking the database again: the
    caller locked it in the same transaction just before and wrote nothing
    to it since, so the row is what a second lock would read. Once only: a
    later lock may follow a write to the row."""
    token = _LOCKED.set({(table, row.id): row})
    try:
        yield
    finally:
        _LOCKED.reset(token)


def lock_row(conn: Connection, table: Table, rid: str,
             not_found: Callable[[], Exception]) -> Any:
    """The row, locked for this transaction (``SELECT ... FOR UPDATE``)."""
    return get_row(conn, table, rid, not_found, for_update=True)


def get_row(conn: Connection, table: Table, rid: str, not_found: Callable[[], Exception],
            for_update: bool = False, joined: Reads = ()) -> Any:
    """The row, with the ``joined`` tables' columns unless it is locked."""
    if for_update:
        ahead = _LOCKED.get()
        if ahead:
            row = ahead.pop((table, rid), None)
            if row is not None:
                return row
    made = _FRESH.get()
    if made is not None and rid in made[0] and not for_update:
        joined = joined_mod.known_empty(joined, made[1])
        row = _made_row(table, rid, tuple(joined), made[1])
        if row is not None:
            if writes.checking:
                _check_made(conn, table, rid, tuple(joined), row)
            return row
    stmt = _row_stmt(table, for_update and conn.dialect.name != "sqlite", tuple(joined))
    row = conn.execute(stmt, {"rid": rid}).first()
    if row is None:
        raise not_found()
    if joined and not for_update:
        written = writes.current()
        if written is not None:
            joined_mod.note_seen(row, joined, written)
    return row


@functools.cache
def row_type(fields: tuple[str, ...]) -> Any:
    """A row type with these fields, for rows built rather than read (the
    readers of ``get_row``'s rows use ``_fields``, indexes and ``id``)."""
    return collections.namedtuple("Row", fields)


def _made_row(table: Table, rid: str, joined: tuple[Any, ...], written: writes.Written) -> Any:
    """The row of ``rid`` with its ``joined`` columns as the database would
    answer, from what this transaction put; None when that cannot be told.
    Saves the read-back of a create (its largest statement) where the
    resource has nothing but rows of its own yet."""
    if not written.reliable(table):
        return None
    mine = written.rows_with(table, "id", rid)
    if len(mine) != 1:
        return None
    values = joined_mod.told_values(table, mine[0], [c.key for c in table.c])
    if values is None:
        return None
    for read in joined:
        more = read.fresh_values(mine[0], written)
        if more is None:
            return None
        values += more
    return _made_row_type(table, joined)(*values)


@functools.cache
def selected_fields(table: Table, joined: tuple[Any, ...]) -> tuple[str, ...]:
    """The fields of the rows ``get_row`` reads with ``joined``."""
    return tuple(_row_stmt(table, False, joined).selected_columns.keys())


@functools.cache
def _made_row_type(table: Table, joined: tuple[Any, ...]) -> Any:
    """The row type of the SELECT ``get_row`` would send."""
    return row_type(selected_fields(table, joined))


def _check_made(conn: Connection, table: Table, rid: str, joined: tuple[Any, ...],
                made: Any) -> None:
    """The test suite's check (``writes.checking``): a row told from the
    writes is the row the database holds."""
    read = conn.execute(_row_stmt(table, False, joined), {"rid": rid}).first()
    if read is None or tuple(read._fields) != tuple(made._fields):
        raise AssertionError(f"{table.name} {rid}: fields {made._fields} told, "
                             f"{None if read is None else read._fields} held")
    decoders = {j.labels[0]: j.decode for j in joined
                if isinstance(j, Aggregated) and not j.probed}
    for name, told, held in zip(made._fields, made, read):
        decode = decoders.get(name)
        if (decode(told) != decode(held)) if decode else told != held:
            raise AssertionError(f"{table.name} {rid}: {name} told {told!r}, held {held!r}")
