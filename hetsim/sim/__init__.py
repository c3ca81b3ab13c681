"""hetsim.sim (under construction)."""
