//! The subnet manager: what OpenSM does for a real fabric, done for a modelled one.
//!
//! It assigns LIDs (with LMC), runs a routing engine to fill every switch's
//! linear forwarding table, sets SL2VL and VLArbitration tables, and analyses
//! the result: reachability, loops, path stretch, channel load and the credit
//! loop (deadlock) check over the channel dependency graph. Routing engines are
//! small modules registered by name in [`routing::ENGINES`], as OpenSM's are.
//!
//! Beside the LFTs, a configured [`Subnet`] carries what the data plane needs
//! for more than one-path unicast, each with a default that changes nothing:
//! - [`Subnet::mfts`]: multicast forwarding tables, one spanning tree per
//!   group of [`SmConfig::multicast_groups`], routed as OpenSM's multicast
//!   manager does ([`mft`]); empty without groups.
//! - [`Subnet::labels`]: whether each path-bits offset of a destination's LIDs
//!   is an ordinary, escape or adaptive routing option (paper 002's fully
//!   adaptive routing, [`labels`]); every offset `Primary` by default.
//! - [`Subnet::path_sl`]: an SL per (source, destination) pair, as OpenSM's
//!   `path_sl` hook gives them ([`path_sl`]); none by default.
#![warn(missing_docs)]

pub mod analysis;
pub mod dump;
pub mod error;
pub mod guid2lid;
pub mod guid_files;
pub mod hops;
pub mod labels;
pub mod lft;
pub mod lid;
pub mod lid_matrix;
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
pub use subnet::{LidOrder, SmConfig, Subnet, SubnetManager};
