"""hetsim.report (under construction)."""
