"""GM creators: encounter arithmetic and building, creature building and statblock checks.

Every number comes from the tables GM Core and Monster Core print (``tables.py`` loads them from
``ingest/data/pf2e/creature-building.json``, each with book and page). The CLI (``gmprep encounter``,
``gmprep creature``, ``gmprep statblock``) and the language server both call these functions.
"""
