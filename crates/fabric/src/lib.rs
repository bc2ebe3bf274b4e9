//! The physical InfiniBand fabric: switches and channel adapters (HCA/TCA), their
//! numbered ports, and the links between ports with width, speed, encoding and
//! cable length.
//!
//! Everything else in ibnetsim (subnet manager, data plane, experiments) reads a
//! [`Fabric`]. Nodes and links live in arenas indexed by [`NodeId`] and
//! [`LinkId`]; a port is addressed by `(NodeId, PortNum)` as in IBA, where port 0
//! of a switch is its management port and carries no link.
#![warn(missing_docs)]

pub mod error;
pub mod fabric;
pub mod io;
pub mod gen;
pub mod rate;

pub use error::{FabricError, Location};
pub use fabric::{Fabric, Link, LinkEnd, LinkId, Node, NodeId, NodeKind, PortNum};
pub use rate::{Encoding, LinkSpeed, LinkSpec, LinkWidth, DEFAULT_PROPAGATION_PS_PER_M};
