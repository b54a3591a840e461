"""Errors whose message is meant for the user."""


class GmprepError(Exception):
    """An error with a clear message for the user (printed without a traceback)."""


class StoreError(GmprepError):
    """The store is missing, corrupt, or was built with another embedder/corpus."""


class ReadOnlyError(StoreError):
    """A store or database this process may not write (permissions, a read-only mount)."""
