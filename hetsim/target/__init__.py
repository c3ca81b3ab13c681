"""hetsim.target (under construction)."""
