"""The topic modules of ``chainrule.nn.functional`` (which re-exports their public names)."""
