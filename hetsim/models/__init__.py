"""hetsim.models (under construction)."""
