"""hetsim.platform (under construction)."""
