"""The language server: translates LSP to calls into core and kg."""
