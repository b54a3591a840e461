"""Build the corpus from the Foundry VTT pf2e system's compendium packs (foundryvtt/pf2e)."""
