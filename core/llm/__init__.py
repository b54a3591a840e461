"""LLM backends behind one interface (llamacpp, transformers, openai, extractive)."""
