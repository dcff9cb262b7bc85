"""The op table: one ``OpInfo`` row per op, in files mirroring ``chainrule/ops/``."""
