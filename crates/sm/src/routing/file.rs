//! The `file` routing engine: forwarding tables loaded from a dump instead of
//! computed, as OpenSM's engine of the same name (opensm/osm_ucast_file.c)
//! loads `opensm-lfts.dump`. It lets a user check or simulate the tables of a
//! real fabric, or tables made by another tool.
//!
//! Options: `file` names the dump, whose format is recognised by content
//! (OpenSM `opensm-lfts.dump` or `ibroute` output, OpenSM `dump_ucast_routes`,
//! ib_flit_sim `.fdbs`); `file_key` names the `.fdbs.ini` key of an ib_flit_sim
//! table (default: the table's name plus `.ini`).
//!
//! LIDs: unlike OpenSM, which keeps the LIDs its LID manager gave and remaps
//! the dump onto them, the engine takes its LIDs from the dump where the dump
//! says who owns them (see [`crate::dump`] for the rule of each format). LIDs
//! read with the topology can be given with [`FileEngine::with_lids`]; they then
//! win, and `opensm-lfts.dump` entries are remapped by port GUID as OpenSM
//! does. A `dump_ucast_routes` listing names no owners, so it needs them.
//!
//! The engine never repairs a table: what the dump leaves unrouted stays
//! unrouted, so that `check` reports it.

use std::path::PathBuf;

use ibnetsim_fabric::{Fabric, LinkEnd, NodeId, PortNum};

use super::{Routing, RoutingEngine, RoutingOptions};
use crate::dump::{self, LftDump};
use crate::error::SmError;
use crate::lid::{LidMap, PortLid};

/// Registry name.
pub const NAME: &str = "file";

/// Routes by a forwarding-table dump.
#[derive(Debug, Clone)]
pub struct FileEngine {
    dump: LftDump,
    lids: Option<LidMap>,
    /// LIDs stated by the topology file, used when no `LidMap` was given.
    given: Vec<(NodeId, PortNum, u16, u8)>,
}

impl FileEngine {
    /// An engine for an already parsed dump, taking LIDs from the dump.
    pub fn new(dump: LftDump) -> Self {
        FileEngine { dump, lids: None, given: Vec::new() }
    }

    /// Uses `lids` (e.g. read from `subnet.lst` with the topology) instead of
    /// the LIDs the dump implies. They must be LIDs of the fabric being routed.
    pub fn with_lids(mut self, lids: LidMap) -> Self {
        self.lids = Some(lids);
        self
    }

    /// Reads the dump named by `options.file` (and `options.file_key`).
    pub fn open(options: &RoutingOptions) -> Result<Self, SmError> {
        let file: &PathBuf = options.file.as_ref().ok_or_else(|| {
            SmError::option("file", "the 'file' routing engine needs a forwarding-table dump: set file = \"<path>\"")
        })?;
        let engine = FileEngine::new(dump::read(file, options.file_key.as_deref())?);
        Ok(FileEngine { given: options.topology_lids.clone(), ..engine })
    }

    /// The loaded dump.
    pub fn dump(&self) -> &LftDump {
        &self.dump
    }
}

impl RoutingEngine for FileEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn assign_lids(&self, fabric: &Fabric, lmc: u8) -> Result<Option<LidMap>, SmError> {
        match &self.lids {
            Some(l) => {
                dump::check_lids_fit(fabric, l)?;
                Ok(Some(l.clone()))
            }
            None if !self.given.is_empty() => {
                let entries: Vec<PortLid> = self
                    .given
                    .iter()
                    .map(|&(node, port, base, lmc)| PortLid { end: LinkEnd { node, port }, base, lmc })
                    .collect();
                let ca_lmc = entries.iter().filter(|p| p.end.port != 0).map(|p| p.lmc).max().unwrap_or(lmc);
                let lids = LidMap::from_entries(fabric, ca_lmc, entries)?;
                dump::check_lids_fit(fabric, &lids)?;
                Ok(Some(lids))
            }
            None => dump::derive_lids(&self.dump, fabric, lmc).map(Some),
        }
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        let mut routing = dump::apply(&self.dump, fabric, lids)?;
        let what = self.dump.file.as_deref().map_or("<input>".to_string(), |p| p.display().to_string());
        routing.notes.insert(
            0,
            format!(
                "tables of {} switches loaded from {what} ({})",
                self.dump.switches.len(),
                self.dump.format.describe()
            ),
        );
        Ok(routing)
    }
}

/// Registry constructor.
pub fn build(options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    Ok(Box::new(FileEngine::open(options)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subnet::{SmConfig, SubnetManager};
    use ibnetsim_fabric::{LinkSpec, NodeKind};

    /// Switch `s` (GUID 0x10) with hosts `a` (0x100) on port 1 and `b` (0x200) on port 3.
    fn star() -> Fabric {
        let mut f = Fabric::new();
        let s = f.add_node(NodeKind::Switch, "s", 4, Some(0x10)).unwrap();
        let a = f.add_node(NodeKind::Hca, "a", 1, Some(0x100)).unwrap();
        let b = f.add_node(NodeKind::Hca, "b", 1, Some(0x200)).unwrap();
        f.connect(s, 1, a, 1, LinkSpec::default()).unwrap();
        f.connect(s, 3, b, 1, LinkSpec::default()).unwrap();
        f
    }

    fn temp_file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ibnetsim-file-engine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn registered_and_configures_a_subnet_from_a_dump() {
        let dump = "\
Unicast lids [0-9] of switch Lid 9 guid 0x0000000000000010 ('s'):
0x0005 003 # Channel Adapter portguid 0x0000000000000201: 'b'
0x0007 001 # Channel Adapter portguid 0x0000000000000101: 'a'
0x0009 000 # Switch portguid 0x0000000000000010: 's'
9 lids dumped
";
        let path = temp_file("star.lfts", dump);
        let mut config = SmConfig { routing_engine: NAME.into(), ..SmConfig::default() };
        config.options.file = Some(path.clone());
        let subnet = SubnetManager::new(config).configure(&star()).unwrap();
        assert_eq!(subnet.engine, "file");
        assert_eq!(subnet.lids.top_lid(), 9);
        let s = ibnetsim_fabric::NodeId(0);
        assert_eq!(subnet.lids.switch_lid(s), Some(9));
        assert_eq!(subnet.tables.get(s, 5), Some(3));
        assert_eq!(subnet.tables.get(s, 7), Some(1));
        assert_eq!(subnet.tables.get(s, 9), Some(0));
        assert_eq!(subnet.tables.get(s, 6), None);
        assert!(subnet.notes[0].starts_with("tables of 1 switches loaded from "), "{:?}", subnet.notes);
    }

    #[test]
    fn missing_file_option_is_an_error() {
        let err = super::super::build_engine(NAME, &RoutingOptions::default()).err().unwrap().to_string();
        assert!(err.starts_with("invalid option 'file': the 'file' routing engine needs"), "{err}");
    }

    #[test]
    fn unreadable_file_names_the_path() {
        let options = RoutingOptions { file: Some("/nonexistent/lfts.dump".into()), ..RoutingOptions::default() };
        let err = FileEngine::open(&options).err().unwrap().to_string();
        assert!(err.starts_with("/nonexistent/lfts.dump: "), "{err}");
    }

    #[test]
    fn a_key_for_an_opensm_dump_is_an_error() {
        let dump = temp_file("keyed.lfts", "Unicast lids [0-1] of switch Lid 1 guid 0x10 ('s'):\n");
        let options = RoutingOptions { file: Some(dump), file_key: Some("x.ini".into()), ..RoutingOptions::default() };
        let err = FileEngine::open(&options).err().unwrap().to_string();
        assert!(
            err.starts_with("invalid option 'file_key': ")
                && err.ends_with("x.ini is only for ib_flit_sim .fdbs tables"),
            "{err}"
        );
    }

    #[test]
    fn vector_table_finds_its_ini_by_default() {
        let table = temp_file("star.fdbs", "0: 255 0 2\n");
        temp_file("star.fdbs.ini", "**.s.pktfwd.fdbIndex = 0\n");
        let mut f = Fabric::new();
        let s = f.add_node(NodeKind::Switch, "s", 4, None).unwrap();
        let h1 = f.add_hca("H-1/U1", 2).unwrap();
        let h2 = f.add_hca("H-2/U1", 2).unwrap();
        f.connect(s, 1, h1, 1, LinkSpec::default()).unwrap();
        f.connect(s, 3, h2, 1, LinkSpec::default()).unwrap();
        let engine = FileEngine::open(&RoutingOptions { file: Some(table), ..RoutingOptions::default() }).unwrap();
        let lids = engine.assign_lids(&f, 0).unwrap().unwrap();
        assert_eq!(lids.of_port(h2, 1).map(|p| p.base), Some(2));
        let r = engine.route(&f, &lids).unwrap();
        assert_eq!((r.tables.get(s, 1), r.tables.get(s, 2)), (Some(1), Some(3)));
        // The switch has no LID in this format.
        assert_eq!(lids.switch_lid(s), None);
    }

    #[test]
    fn lids_stated_by_the_topology_keep_the_cas_lmc() {
        // A subnet.lst states each port's LID and LMC: the switch LID 1 at
        // LMC 0, the CAs 2-3 and 4-5 at LMC 1. The map's LMC is the CAs'.
        let f = star();
        let (s, a, b) = (ibnetsim_fabric::NodeId(0), ibnetsim_fabric::NodeId(1), ibnetsim_fabric::NodeId(2));
        let text = "dump_ucast_routes: Switch 0x0000000000000010\nLID    : Port : Hops : Optimal\n0x0002 : 001  : 01   : yes\n";
        let engine = FileEngine {
            dump: dump::parse(text, None).unwrap(),
            lids: None,
            given: vec![(s, 0, 1, 0), (a, 1, 2, 1), (b, 1, 4, 1)],
        };
        let lids = engine.assign_lids(&f, 0).unwrap().unwrap();
        assert_eq!(lids.lmc(), 1);
        assert_eq!(lids.of_port(a, 1).map(|p| (p.base, p.lmc)), Some((2, 1)));
        assert_eq!(lids.of_port(b, 1).map(|p| (p.base, p.lmc)), Some((4, 1)));
        assert_eq!(lids.switch_lid(s), Some(1));
    }

    #[test]
    fn given_lids_win() {
        let f = star();
        let text = "dump_ucast_routes: Switch 0x0000000000000010\nLID    : Port : Hops : Optimal\n\
                    0x0001 : 001  : 01   : yes\n0x0002 : UNREACHABLE\n";
        let d = dump::parse(text, None).unwrap();
        let plain = FileEngine::new(d.clone());
        assert!(plain.assign_lids(&f, 0).unwrap_err().to_string().contains("guid2lid file of the same run (--guid2lid)"));
        let lids = LidMap::assign(&f, 0).unwrap();
        let engine = FileEngine::new(d).with_lids(lids.clone());
        let got = engine.assign_lids(&f, 0).unwrap().unwrap();
        assert_eq!(got.top_lid(), lids.top_lid());
        let r = engine.route(&f, &got).unwrap();
        let s = ibnetsim_fabric::NodeId(0);
        assert_eq!(r.tables.get(s, 1), Some(1));
        assert_eq!(r.tables.get(s, 2), None, "UNREACHABLE stays unrouted");
    }
}
