"""A GM's own books (PDF, markdown and HTML exports): parse, ingest into the store, match to the bundled entries."""
