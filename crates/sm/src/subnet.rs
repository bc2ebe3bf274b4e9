//! The subnet manager's sweep: LIDs, then routing, producing a configured [`Subnet`].

use ibnetsim_fabric::Fabric;

use crate::error::SmError;
use crate::labels::PathLabels;
use crate::lft::ForwardingTables;
use crate::lid::LidMap;
use crate::path_sl::PathSl;
use crate::routing::{build_engine, RoutingOptions};

/// What the subnet manager is asked to do.
#[derive(Debug, Clone)]
pub struct SmConfig {
    /// Routing engine name (see [`crate::routing::ENGINES`]).
    pub routing_engine: String,
    /// LID mask control for CA ports (0..=7).
    pub lmc: u8,
    /// Engine options.
    pub options: RoutingOptions,
}

impl Default for SmConfig {
    fn default() -> Self {
        SmConfig { routing_engine: "minhop".into(), lmc: 0, options: RoutingOptions::default() }
    }
}

/// A configured subnet: the state a subnet manager leaves on the fabric.
#[derive(Debug, Clone)]
pub struct Subnet {
    /// Engine that produced the tables.
    pub engine: String,
    /// LID assignment.
    pub lids: LidMap,
    /// Forwarding tables.
    pub tables: ForwardingTables,
    /// What the engine reported (root chosen, …).
    pub notes: Vec<String>,
    /// The role of each path-bits offset of a destination's LIDs (escape or
    /// adaptive options, paper 002); every offset `Primary` by default.
    pub labels: PathLabels,
    /// Per-path SLs the engine chose; none by default.
    pub path_sl: PathSl,
}

/// Runs LID assignment and routing on a fabric.
#[derive(Debug, Clone, Default)]
pub struct SubnetManager {
    /// The configuration.
    pub config: SmConfig,
}

impl SubnetManager {
    /// A subnet manager with `config`.
    pub fn new(config: SmConfig) -> Self {
        SubnetManager { config }
    }

    /// Assigns LIDs and computes forwarding tables.
    pub fn configure(&self, fabric: &Fabric) -> Result<Subnet, SmError> {
        let engine = build_engine(&self.config.routing_engine, &self.config.options)?;
        fabric.check_connected()?;
        let lids = match engine.assign_lids(fabric, self.config.lmc)? {
            Some(l) => l,
            None => LidMap::assign(fabric, self.config.lmc)?,
        };
        let routing = engine.route(fabric, &lids)?;
        debug_assert_eq!(routing.tables.top_lid(), lids.top_lid());
        Ok(Subnet {
            engine: engine.name().to_string(),
            lids,
            tables: routing.tables,
            notes: routing.notes,
            labels: routing.labels,
            path_sl: routing.path_sl,
        })
    }
}

impl Subnet {
    /// Forwarding tables and LIDs given directly (e.g. loaded by a tool), with
    /// default labels and no per-path SLs.
    pub fn from_parts(engine: &str, lids: LidMap, tables: ForwardingTables) -> Self {
        Subnet {
            engine: engine.to_string(),
            lids,
            tables,
            notes: Vec::new(),
            labels: PathLabels::default(),
            path_sl: PathSl::none(),
        }
    }
}
