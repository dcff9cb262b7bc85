"""Small utilities shared across chainrule."""
