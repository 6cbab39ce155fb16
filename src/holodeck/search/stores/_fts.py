"""Keyword search in an embedded collection: SQLite's FTS5 index ranked by its BM25."""

from __future__ import annotations

import sqlite3

from holodeck.search._bm25 import words

_COMMON = 0.5  # a word in more than this share of chunks: ~0 weight in BM25, costly to rank
_COMMON_FROM = 10000  # chunks from which such words are left out of a query


def fts_search(db: sqlite3.Connection, query: str, k: int) -> list[tuple[str, float]]:
    """(chunk JSON, BM25 score > 0) of the k chunks best matching any word of `query`."""
    terms = list(dict.fromkeys(words(query)))
    if not terms or k <= 0:
        return []
    # each word quoted: FTS5 operators typed by a user stay plain words
    match = " OR ".join('"' + term.replace('"', '""') + '"' for term in _informative(db, terms))
    rows = db.execute(
        "SELECT chunks.data, -bm25(fts) FROM fts JOIN chunks ON chunks.row = fts.rowid "
        "WHERE fts MATCH ? ORDER BY bm25(fts), fts.rowid LIMIT ?",
        (match, k),
    ).fetchall()
    return [(data, float(score)) for data, score in rows]


def _informative(db: sqlite3.Connection, terms: list[str]) -> list[str]:
    """The query's words; in a large collection, without those in most chunks (BM25 gives
    them next to no weight, and ranking every chunk they match is slow), or the rarest
    word if all are common."""
    total = int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])
    if total < _COMMON_FROM:
        return terms
    marks = ",".join("?" * len(terms))
    found = dict(db.execute(f"SELECT term, doc FROM fts_terms WHERE term IN ({marks})", terms))
    kept = [term for term in terms if found.get(term, 0) <= total * _COMMON]
    return kept or [min(terms, key=lambda term: found.get(term, 0))]
