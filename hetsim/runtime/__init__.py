"""hetsim.runtime (under construction)."""
