"""Text: normalisation, tokenisation, vocabularies, documents and column padding (import the modules directly)."""
