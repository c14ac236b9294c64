"""Prompt templates for the verbalisers (en.txt, it.txt, es.txt, seq2seq_prefix.txt)."""
