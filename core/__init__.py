"""Agents, LLM backends, conversations and evaluations built on the knowledge graph."""
