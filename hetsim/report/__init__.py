"""Results of simulated runs: `Result`, breakdowns, Chrome traces, Gantt charts, tables, checks.

Reads the engine's `RunRecord` (`hetsim.sim.records`) only, never the engine itself.
"""

from hetsim.report.breakdown import BREAKDOWN_KEYS, BUCKET_OF, breakdown_us, busy_us, totals
from hetsim.report.gantt import plot_gantt
from hetsim.report.invariants import assert_invariants, check_invariants
from hetsim.report.levels import DISPATCH_CATEGORIES, LevelStats, level_stats
from hetsim.report.result import LinkStats, ProcessorStats, Result
from hetsim.report.tables import format_summary, print_summary, summary_tables
from hetsim.report.trace import chrome_trace, write_chrome_trace

__all__ = [
    "BREAKDOWN_KEYS",
    "BUCKET_OF",
    "DISPATCH_CATEGORIES",
    "LevelStats",
    "LinkStats",
    "ProcessorStats",
    "Result",
    "assert_invariants",
    "breakdown_us",
    "busy_us",
    "check_invariants",
    "chrome_trace",
    "format_summary",
    "level_stats",
    "plot_gantt",
    "print_summary",
    "summary_tables",
    "totals",
    "write_chrome_trace",
]
