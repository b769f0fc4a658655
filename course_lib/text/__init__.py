"""Text: normalisation, tokenisation and vocabularies (import the modules directly)."""
