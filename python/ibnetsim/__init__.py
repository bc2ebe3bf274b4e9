"""ibnetsim: an InfiniBand fabric simulator with its own subnet manager.

The heavy lifting (fabric model, subnet manager, analysis) happens in the Rust
core, ``ibnetsim._core``; this package gives it a Python shape::

    import ibnetsim as ib
    fab = ib.topology.irregular(switches=16, switch_ports=8, links_per_switch=4,
                                hosts_per_switch=4, seed=1)
    sm = ib.SubnetManager(fab, routing="updn", lmc=1)
    print(sm.check())
"""

from ibnetsim import topology, traffic
from ibnetsim._core import BUILD_COMMIT as __build_commit__
from ibnetsim._core import __version__
from ibnetsim.errors import (
    ConfigError,
    ConfigWarning,
    DeadlockError,
    IbnetsimError,
    ResultsError,
    RoutingError,
    StarvationError,
    TopologyError,
)
from ibnetsim.sm import CheckReport, SubnetManager, routing_engines
from ibnetsim.topology import Fabric
from ibnetsim.sim import SimResult, simulate

__all__ = [
    "__version__",
    "__build_commit__",
    "topology",
    "traffic",
    "simulate",
    "SimResult",
    "Fabric",
    "SubnetManager",
    "CheckReport",
    "routing_engines",
    "IbnetsimError",
    "TopologyError",
    "RoutingError",
    "ConfigError",
    "DeadlockError",
    "StarvationError",
    "ResultsError",
    "ConfigWarning",
]
