"""hetsim.partition (under construction)."""
