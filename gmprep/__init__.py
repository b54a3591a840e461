"""gmprep: an offline Pathfinder 2e (Remaster) rules assistant.

The import namespace maps onto the repository folders: ``gmprep.ingest`` (ingest/),
``gmprep.kg`` (kg/), ``gmprep.core`` (core/), ``gmprep.server`` (server/).
Data flows one way: ingest -> kg -> core -> server -> client.
"""

__version__ = "0.1.0"
