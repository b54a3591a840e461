"""Knowledge graph: SQLite nodes/edges + FTS5 (BM25) + usearch vectors, and hybrid search over them."""
