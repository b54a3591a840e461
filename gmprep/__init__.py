"""gmprep: an offline Pathfinder 2e (Remaster) rules assistant.

The import namespace maps onto the repository folders: ``gmprep.common`` (common/: settings, errors,
text; the floor every layer may use), ``gmprep.ingest`` (ingest/), ``gmprep.kg`` (kg/), ``gmprep.core``
(core/), ``gmprep.server`` (server/); ``gmprep`` itself (gmprep/) is the roof: the CLI, its commands and evals.
Data flows one way: ingest -> kg -> core -> server -> client.
"""

from gmprep.common import __version__

__all__ = ["__version__"]
