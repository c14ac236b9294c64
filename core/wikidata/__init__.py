"""Wikidata: categories, SPARQL query texts, sources (endpoint, embedded, session cache)."""
