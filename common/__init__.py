"""The shared floor: what every layer may import (settings, user-facing errors, text processing).

Nothing here imports from ingest/, kg/, core/, server/ or the CLI (gmprep/).
"""

__version__ = "0.1.0"  # the package version (pyproject's); here so every layer, the server included, can read it
