//! The ibnetsim data plane: a packet-level, event-driven model of an
//! InfiniBand subnet with exact link-level timing.
//!
//! Time is integer picoseconds and runs are deterministic for a seed. Packets
//! are serialized at each link's data rate and propagate along its cable;
//! credit-based flow control per VL in 64-byte blocks admits a packet only
//! when the whole packet fits downstream (virtual cut-through); switches route
//! as the header arrives, arbitrate a crossbar round-robin and arbitrate output
//! VLs with IBA VLArbitration tables; HCAs schedule per-SL send queues into
//! VLs and sink at link rate. See SPEC §2 "Data plane" and the module docs for
//! where each behaviour comes from.
//!
//! ```no_run
//! # use ibnetsim_sim::{SimConfig, Simulation};
//! # fn f(fabric: &ibnetsim_fabric::Fabric, subnet: &ibnetsim_sm::Subnet) -> Result<(), ibnetsim_sim::SimError> {
//! let mut sim = Simulation::new(fabric, &subnet.lids, &subnet.tables, &SimConfig::default())?;
//! for slice in 1..=10 {
//!     sim.run(slice * 50_000_000)?; // 50 µs slices: report progress between them
//! }
//! println!("{:?}", sim.results().accepted_fraction);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod arbitration;
mod build;
mod channel;
pub mod config;
pub mod credits;
pub mod engine;
pub mod error;
mod flow_control;
pub mod hca;
pub mod layout;
pub mod link;
pub mod mechanism;
pub mod metrics;
pub mod packet;
mod port;
mod prefetch;
pub mod presets;
pub mod qos;
pub use mechanism::selection;
mod sim;
mod table;
pub mod switch;
pub mod traffic;
mod watchdog;

pub use config::{AckMode, AutoWarmupConfig, MechanismsConfig, TransportConfig, BufferOverride, CrossbarKind, HcaConfig, Sl2VlConfig, SimConfig, SwitchConfig, VlArbitrationConfig};
pub use build::MAX_LOAD;
pub use engine::Time;
pub use error::{BlockedChannel, DeadlockReport, SimError, StarvedVl};
pub use metrics::SimResults;
pub use presets::{preset, PRESETS};
pub use qos::{QosTables, Sl2VlMap, VlArbConfig, VlArbMap};
pub use sim::Simulation;
pub use traffic::{ClassConfig, ClosedLoopConfig, GapDistribution, PathBits, PatternConfig, ProcessKind, SizeConfig, TraceConfig, TrafficConfig};
