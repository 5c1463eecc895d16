"""Full text for the PostgreSQL store: the embedded store's tokens in tsvectors, ranked by BM25.

Documents are tokenized in Python exactly as the SQLite store's FTS5
``unicode61 remove_diacritics 2`` tokenizer does (lower case, diacritics
removed, runs of letters and digits; no stemming), so both backends index the
same terms. The tsvector goes to the server in its binary form (no second
copy of the text), a GIN index finds matching rows, and the score is Okapi
BM25 (k1 = 1.2, b = 0.75, FTS5's IDF) from per-term document frequencies
(``cef_terms``) and document lengths kept up to date by every write. Which
query terms are scored follows :func:`cef.store.textplan.plan_terms`, as in
the SQLite store.
"""

from __future__ import annotations

import functools
import math
import re
import struct
import unicodedata
from collections.abc import Sequence
from typing import Any

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
#: PostgreSQL limits: positions 1..16383, at most 256 positions per lexeme, lexemes < 2 KB
MAX_POS = 16383
MAX_POSITIONS = 256
MAX_LEXEME = 2046
K1 = 1.2
B = 0.75


def tokens(text: str) -> list[str]:
    """The terms of a text in order (lower case, diacritics removed, letters and digits)."""
    low = text.lower()
    if not low.isascii():
        low = "".join(ch for ch in unicodedata.normalize("NFKD", low) if not unicodedata.combining(ch))
        return [t for t in _TOKEN.findall(low) if len(t.encode()) <= MAX_LEXEME]
    return [t for t in _TOKEN.findall(low) if len(t) <= MAX_LEXEME]


def query_terms(text: str, max_terms: int = 64) -> list[str]:
    return list(dict.fromkeys(tokens(text)))[:max_terms]


class TsVector:
    """A document's terms with positions, sent to PostgreSQL in tsvector's binary format."""

    __slots__ = ("length", "positions")

    def __init__(self, text: str) -> None:
        words = tokens(text)
        self.length = len(words)
        pos: dict[str, list[int]] = {}
        for i, w in enumerate(words, 1):
            p = pos.setdefault(w, [])
            at = min(i, MAX_POS)
            if len(p) < MAX_POSITIONS and (not p or p[-1] != at):
                p.append(at)
        self.positions = pos

    def to_binary(self) -> bytes:
        # tsvectorrecv: int32 count; per lexeme: NUL-terminated UTF-8, int16 npos, int16 positions (weight D = 0)
        out = [struct.pack("!i", len(self.positions))]
        for w in sorted(self.positions):
            p = self.positions[w]
            out.append(_lexeme(w))
            out.append(_ONE[p[0]] if len(p) == 1 else struct.pack(f"!h{len(p)}H", len(p), *p))
        return b"".join(out)


_ONE = [struct.pack("!hH", 1, i) for i in range(MAX_POS + 1)]


@functools.lru_cache(maxsize=200_000)
def _lexeme(w: str) -> bytes:
    return w.encode() + b"\0"


def register_tsvector(conn: Any) -> None:
    """Dump :class:`TsVector` objects as binary tsvector on this connection."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    oid = conn.adapters.types["tsvector"].oid

    class TsVectorDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: TsVector) -> bytes:
            return obj.to_binary()

    TsVectorDumper.oid = oid
    conn.adapters.register_dumper(TsVector, TsVectorDumper)


def idf(n_docs: int, df: int) -> float:
    """FTS5's BM25 IDF (never below a tiny positive value)."""
    value = math.log((n_docs - df + 0.5) / (df + 0.5))
    return value if value > 0 else 1e-6


def tsquery(terms: Sequence[str], *, conjunctive: bool = False) -> str:
    """An OR (or AND) tsquery literal of terms made only of letters and digits (so quoting is safe)."""
    return (" & " if conjunctive else " | ").join("'" + t + "'" for t in terms)


#: per-kind term statistics, updated inside each write transaction (parameters: kind, row ids)
SQL_TERMS_ADD = (
    "INSERT INTO cef_terms(kind, term, df) "
    "SELECT %(kind)s, u.lexeme, COUNT(*) FROM {table} d, unnest(d.tsv) u WHERE d.rid = ANY(%(rids)s) "
    "GROUP BY u.lexeme ON CONFLICT (kind, term) DO UPDATE SET df = cef_terms.df + excluded.df"
)
SQL_TERMS_REMOVE = (
    "UPDATE cef_terms t SET df = t.df - x.n FROM ("
    "SELECT u.lexeme, COUNT(*) AS n FROM {table} d, unnest(d.tsv) u WHERE d.rid = ANY(%(rids)s) GROUP BY u.lexeme"
    ") x WHERE t.kind = %(kind)s AND t.term = x.lexeme"
)
SQL_STATS_ADD = (
    "UPDATE cef_text_stats s SET docs = s.docs + x.n, tokens = s.tokens + x.t FROM ("
    "SELECT COUNT(*) AS n, COALESCE(SUM(ntokens), 0) AS t FROM {table} WHERE rid = ANY(%(rids)s)"
    ") x WHERE s.kind = %(kind)s"
)
SQL_STATS_REMOVE = (
    "UPDATE cef_text_stats s SET docs = s.docs - x.n, tokens = s.tokens - x.t FROM ("
    "SELECT COUNT(*) AS n, COALESCE(SUM(ntokens), 0) AS t FROM {table} WHERE rid = ANY(%(rids)s)"
    ") x WHERE s.kind = %(kind)s"
)
#: BM25 over the rows the GIN index matches (parameters: q, terms, idfs, avgdl, k, optional scope)
SQL_SEARCH = (
    "WITH q(term, idf) AS (SELECT * FROM unnest(%(terms)s::text[], %(idfs)s::float8[])), "
    "m AS (SELECT rid, id, ntokens, tsv FROM {table} WHERE tsv @@ %(q)s::tsquery{scope}) "
    "SELECT m.id, SUM(q.idf * (cardinality(u.positions) * {k1p}) / (cardinality(u.positions) "
    "+ {k1} * (1 - {b} + {b} * m.ntokens / %(avgdl)s))) AS s "
    # setweight + ts_filter keep only the query's lexemes (in C), so only those rows are unnested
    "FROM m CROSS JOIN LATERAL unnest(ts_filter(setweight(m.tsv, 'A', %(terms)s::text[]), '{{a}}')) u "
    "JOIN q ON q.term = u.lexeme "
    "GROUP BY m.rid, m.id ORDER BY s DESC, m.rid LIMIT %(k)s"
)
