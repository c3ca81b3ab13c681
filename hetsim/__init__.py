"""hetsim: simulate models on heterogeneous, multi-level platforms.

The few names a user needs live here; everything else is in the sub-packages
(`hetsim.target`, `hetsim.ir`, `hetsim.kernels`, `hetsim.platform`, `hetsim.sim`, ...).
"""

from hetsim.api import simulate
from hetsim.errors import HetsimError
from hetsim.kernels import execute
from hetsim.models import load_model
from hetsim.report import Result
from hetsim.target import Target

__all__ = ["HetsimError", "Result", "Target", "execute", "load_model", "simulate"]
__version__ = "0.1.0"
