//! The subnet manager: what OpenSM does for a real fabric, done for a modelled one.
//!
//! It assigns LIDs (with LMC), runs a routing engine to fill every switch's
//! linear forwarding table, sets SL2VL and VLArbitration tables, and analyses
//! the result: reachability, loops, path stretch, channel load and the credit
//! loop (deadlock) check over the channel dependency graph. Routing engines are
//! small modules registered by name in [`routing::ENGINES`], as OpenSM's are.
#![warn(missing_docs)]

pub mod analysis;
pub mod dump;
pub mod error;
pub mod hops;
pub mod labels;
pub mod lft;
pub mod lid;
pub mod mft;
pub mod path_sl;
pub mod qos;
pub mod routing;
pub mod subnet;

pub use error::SmError;
pub use labels::{PathLabels, RouteLabel};
pub use lft::{ForwardingTables, Lft, NO_PATH};
pub use lid::{Lid, LidMap, PortLid, MAX_UNICAST_LID};
pub use mft::{
    MulticastGroup, MulticastGroupConfig, MulticastTables, PortSet, MULTICAST_LID_BASE, MULTICAST_LID_TOP,
};
pub use path_sl::{PathSl, NO_SL};
pub use routing::{RoutingEngine, RoutingOptions, Routing, ENGINES};
pub use subnet::{SmConfig, Subnet, SubnetManager};
