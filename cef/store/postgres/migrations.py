"""Versioned schema migrations, applied in one transaction and recorded in ``cef_schema_migrations``.

Each migration is applied once, in order, under an advisory lock so several
processes opening a new database at the same time do not race. A database
migrated by a newer cef (a version this list does not know) is refused.
Append new migrations; never edit one that has shipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cef.errors import StoreError
from cef.store.sql import new_store_meta


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "records, full text (BM25 statistics), vectors, change feed",
        """
        CREATE EXTENSION IF NOT EXISTS vector SCHEMA public;
        CREATE TABLE cef_meta(key text PRIMARY KEY, value text NOT NULL);
        CREATE TABLE cef_relation_types(name text PRIMARY KEY, data text NOT NULL);
        CREATE TABLE cef_nodes(
            rid bigint PRIMARY KEY,
            id text NOT NULL UNIQUE,
            label text NOT NULL,
            scope text,
            data text NOT NULL,
            tsv tsvector NOT NULL,
            ntokens integer NOT NULL,
            embedding public.vector
        );
        CREATE INDEX cef_nodes_label ON cef_nodes(label);
        CREATE INDEX cef_nodes_tsv ON cef_nodes USING gin(tsv);
        CREATE INDEX cef_nodes_props ON cef_nodes USING gin(((data::jsonb) -> 'properties') jsonb_path_ops);
        CREATE TABLE cef_edges(
            rid bigint PRIMARY KEY,
            id text NOT NULL UNIQUE,
            rel text NOT NULL,
            src text NOT NULL,
            dst text NOT NULL,
            weight double precision NOT NULL,
            confidence double precision NOT NULL,
            valid_from double precision,
            valid_to double precision,
            recorded_at double precision NOT NULL,
            scope text,
            props text NOT NULL
        );
        CREATE INDEX cef_edges_src ON cef_edges(src);
        CREATE INDEX cef_edges_dst ON cef_edges(dst);
        CREATE TABLE cef_chunks(
            rid bigint PRIMARY KEY,
            id text NOT NULL UNIQUE,
            node_id text,
            scope text,
            data text NOT NULL,
            tsv tsvector NOT NULL,
            ntokens integer NOT NULL,
            embedding public.vector
        );
        CREATE INDEX cef_chunks_node ON cef_chunks(node_id);
        CREATE INDEX cef_chunks_tsv ON cef_chunks USING gin(tsv);
        CREATE TABLE cef_terms(kind text NOT NULL, term text NOT NULL, df bigint NOT NULL, PRIMARY KEY(kind, term));
        CREATE TABLE cef_text_stats(kind text PRIMARY KEY, docs bigint NOT NULL, tokens bigint NOT NULL);
        INSERT INTO cef_text_stats VALUES ('node', 0, 0), ('chunk', 0, 0);
        CREATE TABLE cef_changes(
            seq bigint PRIMARY KEY,
            kind text NOT NULL,
            op text NOT NULL,
            id text NOT NULL,
            rid_from bigint,
            rid_to bigint
        );
        """,
    ),
)

LATEST = MIGRATIONS[-1].version
#: advisory lock keys (two int4s: cef's namespace, purpose)
LOCK_NAMESPACE = 0x63EF
LOCK_MIGRATE = 1
LOCK_WRITE = 2
LOCK_DDL = 3


def exists(conn: Any, schema: str = "public") -> bool:
    """Whether ``schema`` holds a cef knowledge base (its migrations table)."""
    row = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".cef_schema_migrations',)).fetchone()
    return row is not None and row[0] is not None


def migrate(conn: Any, schema: str = "public") -> list[int]:
    """Create ``schema`` if needed and apply every pending migration in one transaction.

    ``conn`` is a psycopg connection in autocommit mode; it is left with
    ``search_path`` set to the schema (then ``public``). Returns the versions applied.
    """
    from psycopg import sql

    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_NAMESPACE, LOCK_MIGRATE))
        if schema != "public":
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS cef_schema_migrations("
            "version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        applied = {int(r[0]) for r in conn.execute("SELECT version FROM cef_schema_migrations").fetchall()}
        newer = sorted(v for v in applied if v > LATEST)
        if newer:
            raise StoreError(
                f"the database schema is at version {newer[-1]}, newer than this cef ({LATEST}); upgrade cef"
            )
        done: list[int] = []
        for m in MIGRATIONS:
            if m.version in applied:
                continue
            conn.execute(m.sql)
            conn.execute(
                "INSERT INTO cef_schema_migrations(version, name) VALUES (%s, %s)", (m.version, m.name)
            )
            done.append(m.version)
        if not applied:  # a new schema: its node text is written by this cef's node_text
            for key, value in new_store_meta():
                conn.execute(
                    "INSERT INTO cef_meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
                    (key, value),
                )
        return done
