"""hetsim.frontend (under construction)."""
