"""The shared floor: what every layer may import (settings, user-facing errors, text processing).

Nothing here imports from ingest/, kg/, core/, server/ or the CLI (gmprep/).
"""
