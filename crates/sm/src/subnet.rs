//! The subnet manager's sweep: LIDs, then routing, producing a configured [`Subnet`].

use ibnetsim_fabric::{Fabric, NodeId};

use crate::error::SmError;
use crate::labels::PathLabels;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};
use crate::mft::{MulticastGroupConfig, MulticastTables};
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
    /// Multicast groups to route after the unicast engine (none by default).
    pub multicast_groups: Vec<MulticastGroupConfig>,
    /// How the LID manager numbers the ports (engines that impose their own
    /// LIDs, and LIDs given from a `guid2lid` file, win over it).
    pub lid_order: LidOrder,
}

/// How the LID manager numbers ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LidOrder {
    /// CA ports first, in fabric order, then the switches ([`LidMap::assign`]).
    #[default]
    Ibnetsim,
    /// As OpenSM numbers a fresh subnet ([`LidMap::assign_opensm`]).
    OpenSm,
}

impl LidOrder {
    /// Registry names, in the order of the variants.
    pub const NAMES: &'static [&'static str] = &["ibnetsim", "opensm"];

    /// The order called `name`, or an error naming the option.
    pub fn from_name(name: &str) -> Result<Self, SmError> {
        match name {
            "ibnetsim" => Ok(LidOrder::Ibnetsim),
            "opensm" => Ok(LidOrder::OpenSm),
            _ => Err(SmError::option("lid_order", format!("unknown LID order '{name}' (known: {})", Self::NAMES.join(", ")))),
        }
    }
}

impl Default for SmConfig {
    fn default() -> Self {
        SmConfig {
            routing_engine: "minhop".into(),
            lmc: 0,
            options: RoutingOptions::default(),
            multicast_groups: Vec::new(),
            lid_order: LidOrder::Ibnetsim,
        }
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
    /// Multicast forwarding tables of the configured groups (empty without groups).
    pub mfts: MulticastTables,
    /// Entries a loaded dump leaves unknown ([`crate::routing::Routing::not_in_dump`]).
    pub not_in_dump: Vec<(NodeId, Lid)>,
    /// SL2VL tables the engine programs itself ([`crate::routing::Routing::sl2vl`]).
    pub sl2vl: Option<crate::qos::Sl2VlTables>,
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

    /// Assigns LIDs, computes forwarding tables, then routes the multicast groups.
    pub fn configure(&self, fabric: &Fabric) -> Result<Subnet, SmError> {
        self.configure_with_lids(fabric, None)
    }

    /// [`configure`](Self::configure), with the LIDs given (e.g. OpenSM's, read
    /// from its `guid2lid` file by [`crate::guid2lid`]) instead of assigned by
    /// the engine or the LID manager. They win over the LIDs a dump implies,
    /// so that a dump naming no LID owners lines up with OpenSM's numbering.
    /// A configured LMC other than 0 must match theirs.
    pub fn configure_with_lids(&self, fabric: &Fabric, given: Option<LidMap>) -> Result<Subnet, SmError> {
        let engine = build_engine(&self.config.routing_engine, &self.config.options)?;
        fabric.check_connected()?;
        let lids = match given {
            Some(l) => {
                if self.config.lmc != 0 && self.config.lmc != l.lmc() {
                    return Err(SmError::option(
                        "lmc",
                        format!(
                            "{} was asked for, but the given LIDs have LMC {}: leave the LMC out, the LIDs set it",
                            self.config.lmc,
                            l.lmc()
                        ),
                    ));
                }
                l
            }
            None => match engine.assign_lids(fabric, self.config.lmc)? {
                Some(l) => l,
                None => match self.config.lid_order {
                    LidOrder::Ibnetsim => LidMap::assign(fabric, self.config.lmc)?,
                    LidOrder::OpenSm => LidMap::assign_opensm(fabric, self.config.lmc)?,
                },
            },
        };
        let mut routing = engine.route(fabric, &lids)?;
        debug_assert_eq!(routing.tables.top_lid(), lids.top_lid());
        debug_assert!(routing.labels.as_slice().len() <= 1 << lids.lmc(), "more path labels than LIDs per port");
        let groups = self.config.multicast_groups.iter().map(|g| g.resolve(fabric)).collect::<Result<_, _>>()?;
        let mfts = MulticastTables::build(fabric, groups)?;
        routing.notes.extend(multicast_notes(fabric, &mfts));
        Ok(Subnet {
            engine: engine.name().to_string(),
            lids,
            tables: routing.tables,
            notes: routing.notes,
            labels: routing.labels,
            path_sl: routing.path_sl,
            mfts,
            not_in_dump: routing.not_in_dump,
            sl2vl: routing.sl2vl,
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
            mfts: MulticastTables::new(),
            not_in_dump: Vec::new(),
            sl2vl: None,
        }
    }
}

/// One line per multicast group: members, root and tree size.
fn multicast_notes(fabric: &Fabric, mfts: &MulticastTables) -> Vec<String> {
    let name = |n: NodeId| fabric.node(n).name.as_str();
    mfts.groups()
        .iter()
        .map(|g| match mfts.root(g.mlid) {
            Some(root) => format!(
                "multicast {:#06x}: {} member ports, tree of {} switches rooted at {}",
                g.mlid,
                g.members.len(),
                fabric.switches().filter(|&s| mfts.get(s, g.mlid).is_some()).count(),
                name(root)
            ),
            None => format!("multicast {:#06x}: {} member port, no tree needed", g.mlid, g.members.len()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::testfab;

    fn config(engine: &str, groups: Vec<MulticastGroupConfig>) -> SmConfig {
        SmConfig { routing_engine: engine.into(), lmc: 1, multicast_groups: groups, ..SmConfig::default() }
    }

    #[test]
    fn defaults_carry_no_multicast_labels_or_path_sls() {
        let f = testfab::fat_tree(2, 2, 2, 1);
        assert!(SmConfig::default().multicast_groups.is_empty());
        let s = SubnetManager::new(config("updn", Vec::new())).configure(&f).unwrap();
        assert!(s.mfts.is_empty());
        assert_eq!(s.mfts.num_entries(), 0);
        assert!(s.labels.is_primary());
        assert!(s.path_sl.is_none());
        assert!(!s.notes.iter().any(|n| n.starts_with("multicast")));
        let p = Subnet::from_parts("file", s.lids.clone(), s.tables.clone());
        assert!(p.mfts.is_empty() && p.labels.is_primary() && p.path_sl.is_none());
    }

    #[test]
    fn configure_routes_the_groups_after_unicast() {
        let f = testfab::fat_tree(2, 2, 2, 1);
        let g = |mlid: u16, members: &[&str]| MulticastGroupConfig {
            mlid,
            members: members.iter().map(|m| m.to_string()).collect(),
        };
        let groups = vec![g(0xC005, &["h0_0_0", "h1_1_1:1"]), g(0xC000, &["h0_0_1"])];
        let s = SubnetManager::new(config("minhop", groups)).configure(&f).unwrap();
        assert_eq!(s.mfts.groups().iter().map(|g| g.mlid).collect::<Vec<_>>(), vec![0xC000, 0xC005]);
        // h0_0_0 on leaf0_0 and h1_1_1 on leaf1_1: pods meet at a core, so
        // the tree is leaf0_0 - agg0_x - core - agg1_x - leaf1_1.
        let on_tree: Vec<&str> =
            f.switches().filter(|&sw| s.mfts.get(sw, 0xC005).is_some()).map(|sw| f.node(sw).name.as_str()).collect();
        assert_eq!(on_tree.len(), 5, "{on_tree:?}");
        assert!(s.notes.iter().any(|n| n.starts_with("multicast 0xc005: 2 member ports, tree of 5 switches rooted at core")));
        assert!(s.notes.contains(&"multicast 0xc000: 1 member port, no tree needed".to_string()));
        // Unicast is untouched by multicast.
        testfab::check_routes(&f, &s.lids, &s.tables).unwrap();
    }

    #[test]
    fn configure_reports_bad_groups() {
        let f = testfab::fat_tree(2, 2, 2, 1);
        let bad = MulticastGroupConfig { mlid: 0xC000, members: vec!["h0_0_0".into(), "nosuch:1".into()] };
        let err = SubnetManager::new(config("minhop", vec![bad])).configure(&f).unwrap_err().to_string();
        assert!(err.starts_with("multicast group 0xc000, member 'nosuch:1': "), "{err}");
        let bad = MulticastGroupConfig { mlid: 0xFFFF, members: vec!["h0_0_0".into()] };
        let err = SubnetManager::new(config("minhop", vec![bad])).configure(&f).unwrap_err().to_string();
        assert!(err.contains("outside the multicast range"), "{err}");
    }
}
