//! Routing engines and their registry.
//!
//! An engine turns a fabric and its LIDs into linear forwarding tables. As in
//! OpenSM (`struct osm_routing_engine`), an engine implements only what it
//! needs: [`RoutingEngine::route`] is required; [`RoutingEngine::assign_lids`]
//! lets an engine (such as `file`) impose its own LIDs. Engines are listed once
//! in [`ENGINES`]; the CLI's `--list`, the docs and the unknown-name error all
//! read that slice. Adding an engine is one module plus one line here.

pub mod file;

use std::path::PathBuf;

use ibnetsim_fabric::{Fabric, NodeId, PortNum};

use crate::error::SmError;
use crate::labels::PathLabels;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};
use crate::path_sl::PathSl;
use crate::qos::Sl2VlTables;

pub(crate) mod cl_heap;
pub mod dfsssp;
pub mod dnup;
pub mod dor;
pub mod fa;
pub mod ftree;
pub mod lash;
pub mod minhop;
pub mod nue;
pub mod sssp;
pub mod torus_2qos;
pub mod torus_conf;
#[cfg(test)]
pub(crate) mod testfab;
pub(crate) mod ucast;
pub mod updn;

/// Options every engine may read; each engine documents which it uses.
#[derive(Debug, Clone, Default)]
pub struct RoutingOptions {
    /// Root switch(es) for tree-based engines (`updn`), by name or GUID.
    /// Empty means "choose automatically".
    pub roots: Vec<String>,
    /// Input file for the `file` engine.
    pub file: Option<PathBuf>,
    /// Second input file (the `.fdbs.ini` key of an ib_flit_sim `.fdbs` table).
    pub file_key: Option<PathBuf>,
    /// Seed for engines that break ties randomly.
    pub seed: u64,
    /// LIDs the topology file stated, as (node, port, base LID, LMC). The `file`
    /// engine uses them in place of the dump's own (a `dump_ucast_routes` dump
    /// names no LID owners, so its LIDs must come from e.g. `subnet.lst`).
    pub topology_lids: Vec<(NodeId, PortNum, u16, u8)>,
    /// `fa`: switches (names or GUIDs) without adaptive support, as paper 002
    /// allows in a mixed fabric: their table holds the escape port at every
    /// LID of a destination.
    pub non_adaptive: Vec<String>,
    /// `dfsssp`, `lash` and `nue`: virtual layers (VLs) their paths may use,
    /// 1..=15; `None` for OpenSM's default, 15 for `dfsssp` and `lash`, 1 for
    /// `nue` (its `nue_max_num_vls`; see [`dfsssp`], [`lash`], [`nue`]).
    pub max_vls: Option<u8>,
    /// `lash`: the first VL (SL) of its layers, OpenSM's `lash_start_vl`;
    /// `None` for 0 (see [`lash`]).
    pub lash_start_vl: Option<u8>,
    /// `torus-2QoS`: its `torus-2QoS.conf` (OpenSM's `--torus_config`).
    pub torus_config: Option<PathBuf>,
}

/// What an engine produces.
///
/// Beside the LFTs, an engine may label the LIDs of a destination as escape or
/// adaptive options ([`PathLabels`], paper 002) and give each (source,
/// destination) pair its own SL ([`PathSl`], OpenSM's `path_sl`). Engines that
/// do neither build their result with [`Routing::unicast`].
#[derive(Debug, Clone)]
pub struct Routing {
    /// One LFT per switch.
    pub tables: ForwardingTables,
    /// Human-readable facts about the run (chosen root, fallbacks taken, …).
    pub notes: Vec<String>,
    /// The role of each path-bits offset of a destination's LIDs; every
    /// offset `Primary` unless the engine says otherwise.
    pub labels: PathLabels,
    /// Per-path SLs; none unless the engine needs them.
    pub path_sl: PathSl,
    /// `(switch, LID)` entries the input tables leave unknown: a dump whose
    /// header range covers a LID that none of its listed LFT blocks holds
    /// (`dump_fts` and `ibroute` skip the top block when the top LID is a
    /// multiple of 64). The entry is stored as no path; the check counts
    /// routes ending there as "not in the dump", not as unreachable. Sorted.
    pub not_in_dump: Vec<(NodeId, Lid)>,
    /// SL2VL tables the engine programs itself (OpenSM's `update_sl2vl`
    /// callback, used by `torus-2QoS`); `None` leaves them to the QoS setup.
    pub sl2vl: Option<Sl2VlTables>,
}

impl Routing {
    /// Plain unicast routing: the tables and notes, every LID a `Primary`
    /// route and no per-path SLs.
    pub fn unicast(tables: ForwardingTables, notes: Vec<String>) -> Self {
        Routing { tables, notes, labels: PathLabels::default(), path_sl: PathSl::none(), not_in_dump: Vec::new(), sl2vl: None }
    }
}

/// A routing engine. Runs once per fabric (cold path), so a trait object is fine.
pub trait RoutingEngine: Send + Sync {
    /// Registry name (the OpenSM name when the algorithm is the same).
    fn name(&self) -> &'static str;

    /// LIDs this engine requires, or `None` for the standard assignment.
    fn assign_lids(&self, _fabric: &Fabric, _lmc: u8) -> Result<Option<LidMap>, SmError> {
        Ok(None)
    }

    /// Fills the forwarding tables for every LID in `lids`.
    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError>;
}

/// A registry entry.
pub struct EngineInfo {
    /// Name used in configs and on the command line.
    pub name: &'static str,
    /// One-line description for `--list` and the docs.
    pub summary: &'static str,
    /// Builds the engine from options, validating those it uses.
    pub build: fn(&RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError>,
}

/// Every routing engine, by name.
pub static ENGINES: &[EngineInfo] = &[
    EngineInfo {
        name: "minhop",
        summary: "minimum-hop paths, routes balanced over equal-hop ports as OpenSM does (OpenSM's default)",
        build: minhop::build,
    },
    EngineInfo {
        name: "updn",
        summary: "up*/down* (deadlock-free on any topology); roots given or found by OpenSM's hop-histogram test",
        build: updn::build,
    },
    EngineInfo {
        name: "dor",
        summary: "dimension-order: minhop taking the lowest-numbered productive port (meshes, hypercubes)",
        build: dor::build,
    },
    EngineInfo {
        name: dnup::NAME,
        summary: "OpenSM's dnup: up*/down* ranked from the leaf switches (those with CAs), no roots to name; deadlock-free where leaves are not cabled to each other",
        build: dnup::build,
    },
    EngineInfo {
        name: fa::NAME,
        summary: "fully adaptive (paper 002): LID offset 0 up*/down* escape, offsets 1.. minimal adaptive options; needs LMC ≥ 1",
        build: fa::build,
    },
    EngineInfo {
        name: ftree::NAME,
        summary: "fat-tree routing after OpenSM's ftree: ranks the tree from its leaves, one balanced spine path per destination",
        build: ftree::build,
    },
    EngineInfo {
        name: sssp::NAME,
        summary: "OpenSM's sssp: per-destination Dijkstra over switches, channel weights grown by the routes already on them (global balancing)",
        build: sssp::build,
    },
    EngineInfo {
        name: dfsssp::NAME,
        summary: "OpenSM's dfsssp: sssp's paths on virtual layers (one VL each) whose channel dependencies are acyclic; SL per path",
        build: dfsssp::build,
    },
    EngineInfo {
        name: lash::NAME,
        summary: "OpenSM's lash: minimum-hop switch-to-switch paths, each switch pair on a layer (SL/VL) whose channel dependencies stay acyclic",
        build: lash::build,
    },
    EngineInfo {
        name: nue::NAME,
        summary: "OpenSM's nue: per-destination Dijkstra on the complete channel dependency graph keeping each virtual layer acyclic; deadlock-free on any topology with any number of VLs (1 included); SL per path",
        build: nue::build,
    },
    EngineInfo {
        name: torus_2qos::NAME,
        summary: "OpenSM's torus-2QoS: dimension-order routing on 2D/3D tori and meshes, dateline crossings in the path SL, SL2VL per port direction, two QoS levels; needs --torus-config",
        build: torus_2qos::build,
    },
    EngineInfo { name: file::NAME, summary: "load forwarding tables from an OpenSM or ib_flit_sim dump", build: file::build },
];

/// Builds the engine called `name`, or a chain of engines: `name` may list
/// several, separated by commas (OpenSM's `-R a,b,c` and `routing_engine
/// a,b,c`); see [`Chain`].
pub fn build_engine(name: &str, options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    let members = chain_members(name)?;
    // Names match without regard to case, as OpenSM's (strcasecmp).
    let has = |engine: &str| members.iter().any(|m| m.eq_ignore_ascii_case(engine));
    // Options another engine reads would otherwise be dropped without a word.
    if options.file.is_some() && !has(file::NAME) {
        return Err(SmError::option(
            "lfts_file",
            format!("tables to load are read by the '{}' engine only, not by '{name}': drop the file, or route with '{}'", file::NAME, file::NAME),
        ));
    }
    if !options.non_adaptive.is_empty() && !has(fa::NAME) {
        return Err(SmError::option("non_adaptive_switches", format!("lists switches for the '{}' engine only, not for '{name}'", fa::NAME)));
    }
    if options.max_vls.is_some() && !has(dfsssp::NAME) && !has(lash::NAME) && !has(nue::NAME) {
        return Err(SmError::option(
            "max_vls",
            format!("sets the virtual layers of the '{}', '{}' and '{}' engines only, not of '{name}'", dfsssp::NAME, lash::NAME, nue::NAME),
        ));
    }
    if options.lash_start_vl.is_some() && !has(lash::NAME) {
        return Err(SmError::option("lash_start_vl", format!("sets the first VL of the '{}' engine only, not of '{name}'", lash::NAME)));
    }
    if options.torus_config.is_some() && !has(torus_2qos::NAME) {
        return Err(SmError::option(
            "torus_config",
            format!("is the configuration of the '{}' engine only, not of '{name}'", torus_2qos::NAME),
        ));
    }
    if options.file_key.is_some() && options.file.is_none() {
        return Err(SmError::option("fdbs_key", "keys an ib_flit_sim .fdbs table: give the table too (lfts_file)"));
    }
    let mut engines = Vec::with_capacity(members.len());
    for member in &members {
        match ENGINES.iter().find(|e| e.name.eq_ignore_ascii_case(member)) {
            Some(info) => engines.push((info.build)(options)?),
            None => {
                return Err(SmError::UnknownEngine {
                    name: member.to_string(),
                    known: ENGINES.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
                    chain: (members.len() > 1).then(|| members.join(",")),
                })
            }
        }
    }
    if engines.len() == 1 {
        return Ok(engines.pop().expect("one engine"));
    }
    Ok(Box::new(Chain { spec: members.join(","), members: engines, used: std::sync::Mutex::new(None) }))
}

/// The engine names of `spec` (one name, or several separated by commas, blanks
/// around each ignored), checked for empty entries.
pub fn chain_members(spec: &str) -> Result<Vec<&str>, SmError> {
    let members: Vec<&str> = spec.split(',').map(str::trim).collect();
    if members.iter().any(|m| m.is_empty()) {
        return Err(SmError::option(
            "routing_engine",
            format!("'{spec}' has an empty engine name; give one engine, or several separated by commas (e.g. 'dfsssp,updn')"),
        ));
    }
    Ok(members)
}

/// A chain of engines, as OpenSM runs its `routing_engine a,b,c` list: each
/// member routes the fabric in turn until one succeeds, and that one's
/// tables are used. The notes name the member used and why the earlier ones
/// failed; if all fail, the error lists every member's reason. Unlike OpenSM,
/// no `minhop` is tried after the last member (OpenSM's fallback unless the
/// list holds `no_fallback`): end the chain with `minhop` for that.
///
/// LIDs: the first member that imposes its own (`file`) sets them for all.
pub struct Chain {
    /// The chain as written, blanks removed.
    spec: String,
    members: Vec<Box<dyn RoutingEngine>>,
    /// The member whose tables the last [`RoutingEngine::route`] returned.
    used: std::sync::Mutex<Option<&'static str>>,
}

impl RoutingEngine for Chain {
    /// The member that routed the fabric (the first one before any routing).
    fn name(&self) -> &'static str {
        self.used.lock().expect("chain state").unwrap_or_else(|| self.members[0].name())
    }

    fn assign_lids(&self, fabric: &Fabric, lmc: u8) -> Result<Option<LidMap>, SmError> {
        for m in &self.members {
            // A member that fails here fails again, with its reason, when it routes.
            if let Ok(Some(lids)) = m.assign_lids(fabric, lmc) {
                return Ok(Some(lids));
            }
        }
        Ok(None)
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        let mut failed = Vec::new();
        for m in &self.members {
            match m.route(fabric, lids) {
                Ok(mut routing) => {
                    *self.used.lock().expect("chain state") = Some(m.name());
                    let why = if failed.is_empty() {
                        String::new()
                    } else {
                        format!(" after {}", failed.join("; "))
                    };
                    routing.notes.insert(0, format!("routing chain '{}': routed with '{}'{why}", self.spec, m.name()));
                    return Ok(routing);
                }
                Err(e) => failed.push(format!("'{}' failed: {e}", m.name())),
            }
        }
        Err(SmError::Unsupported { engine: self.spec.clone(), reason: format!("every engine of the chain failed: {}", failed.join("; ")) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_for_another_engine_are_errors() {
        let with_file = RoutingOptions { file: Some("t.dump".into()), ..RoutingOptions::default() };
        let e = build_engine("minhop", &with_file).err().unwrap().to_string();
        assert_eq!(e, "invalid option 'lfts_file': tables to load are read by the 'file' engine only, not by 'minhop': drop the file, or route with 'file'");
        // The file engine takes it (and then finds no such file).
        let e = build_engine("file", &with_file).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(!e.contains("lfts_file"), "{e}");
        let key_only = RoutingOptions { file_key: Some("t.ini".into()), ..RoutingOptions::default() };
        let e = build_engine("file", &key_only).err().unwrap().to_string();
        assert_eq!(e, "invalid option 'fdbs_key': keys an ib_flit_sim .fdbs table: give the table too (lfts_file)");
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = ENGINES.iter().map(|e| e.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate engine name in ENGINES");
    }

    #[test]
    fn engines_produce_default_labels_and_no_path_sls() {
        let f = testfab::two_switch_parallel(2, 2);
        for name in ["minhop", "updn", "dor"] {
            let engine = build_engine(name, &RoutingOptions::default()).unwrap();
            for lmc in [0, 2] {
                let lids = LidMap::assign(&f, lmc).unwrap();
                let r = engine.route(&f, &lids).unwrap();
                assert!(r.labels.is_primary(), "{name}");
                assert_eq!(r.labels, PathLabels::default(), "{name}");
                assert!(r.path_sl.is_none(), "{name}");
                for lid in lids.ports().iter().flat_map(|p| p.lids()) {
                    assert_eq!(r.labels.of_lid(&lids, lid), Some(crate::labels::RouteLabel::Primary));
                    assert_eq!(r.path_sl.get(lid, lids.top_lid()), None);
                }
            }
        }
    }

    #[test]
    fn chains_fall_back_and_say_why() {
        // ftree refuses a ring; minhop routes it.
        let f = testfab::ring4();
        let lids = LidMap::assign(&f, 0).unwrap();
        let chain = build_engine("ftree, minhop", &RoutingOptions::default()).unwrap();
        assert_eq!(chain.name(), "ftree");
        let r = chain.route(&f, &lids).unwrap();
        assert_eq!(chain.name(), "minhop");
        let ftree_err = build_engine("ftree", &RoutingOptions::default()).unwrap().route(&f, &lids).err().unwrap();
        assert!(matches!(ftree_err, SmError::Unsupported { .. }), "{ftree_err}");
        assert_eq!(r.notes[0], format!("routing chain 'ftree,minhop': routed with 'minhop' after 'ftree' failed: {ftree_err}"));
        assert_eq!(r.tables, minhop::MinHop.route(&f, &lids).unwrap().tables);
        // The first member that succeeds is used, and said so.
        let r = build_engine("minhop,ftree", &RoutingOptions::default()).unwrap().route(&f, &lids).unwrap();
        assert_eq!(r.notes, vec!["routing chain 'minhop,ftree': routed with 'minhop'".to_string()]);
        // dfsssp limited to one layer fails on the ring of six; updn takes over.
        let f6 = ibnetsim_fabric::gen::RingParams { switches: 6, hosts_per_switch: 1, link: Default::default() }.build().unwrap();
        let lids6 = LidMap::assign(&f6, 0).unwrap();
        let o = RoutingOptions { max_vls: Some(1), ..RoutingOptions::default() };
        let chain = build_engine("dfsssp,updn", &o).unwrap();
        let r = chain.route(&f6, &lids6).unwrap();
        assert_eq!(chain.name(), "updn");
        assert!(r.path_sl.is_none());
        assert!(r.notes[0].starts_with("routing chain 'dfsssp,updn': routed with 'updn' after 'dfsssp' failed: routing engine 'dfsssp' cannot route this fabric: its paths need more than 1 virtual layers"), "{}", r.notes[0]);
        // With its default 15 layers dfsssp routes it, with per-path SLs.
        let chain = build_engine("dfsssp,updn", &RoutingOptions::default()).unwrap();
        assert!(!chain.route(&f6, &lids6).unwrap().path_sl.is_none());
        assert_eq!(chain.name(), "dfsssp");
    }

    #[test]
    fn chains_fail_with_every_reason() {
        let f = testfab::ring4();
        let lids = LidMap::assign(&f, 0).unwrap();
        let e = build_engine("ftree,ftree", &RoutingOptions::default()).unwrap().route(&f, &lids).err().unwrap().to_string();
        assert!(e.starts_with("routing engine 'ftree,ftree' cannot route this fabric: every engine of the chain failed: 'ftree' failed: "), "{e}");
        assert_eq!(e.matches("'ftree' failed").count(), 2, "{e}");
    }

    #[test]
    fn chain_members_are_checked() {
        let err = build_engine("dfsssp,nosuch,updn", &RoutingOptions::default()).err().unwrap().to_string();
        assert!(err.starts_with("unknown routing engine 'nosuch' in the chain 'dfsssp,nosuch,updn' (known engines: minhop, "), "{err}");
        let err = build_engine("minhop,", &RoutingOptions::default()).err().unwrap().to_string();
        assert_eq!(err, "invalid option 'routing_engine': 'minhop,' has an empty engine name; give one engine, or several separated by commas (e.g. 'dfsssp,updn')");
        // An option is fine when some member reads it.
        let o = RoutingOptions { max_vls: Some(4), ..RoutingOptions::default() };
        assert!(build_engine("dfsssp,updn", &o).is_ok());
        let err = build_engine("updn,minhop", &o).err().unwrap().to_string();
        assert_eq!(err, "invalid option 'max_vls': sets the virtual layers of the 'dfsssp', 'lash' and 'nue' engines only, not of 'updn,minhop'");
        assert!(build_engine("lash,updn", &o).is_ok());
        let o = RoutingOptions { lash_start_vl: Some(1), ..RoutingOptions::default() };
        assert!(build_engine("lash,minhop", &o).is_ok());
        let err = build_engine("dfsssp", &o).err().unwrap().to_string();
        assert_eq!(err, "invalid option 'lash_start_vl': sets the first VL of the 'lash' engine only, not of 'dfsssp'");
    }

    #[test]
    fn chains_through_the_subnet_manager() {
        use crate::subnet::{SmConfig, SubnetManager};
        let f = testfab::ring4();
        let s = SubnetManager::new(SmConfig { routing_engine: "ftree,updn".into(), ..SmConfig::default() }).configure(&f).unwrap();
        assert_eq!(s.engine, "updn");
        assert!(s.notes[0].starts_with("routing chain 'ftree,updn': routed with 'updn' after 'ftree' failed"), "{:?}", s.notes);
    }

    #[test]
    fn unknown_engine_lists_known_ones() {
        let err = build_engine("nosuch", &RoutingOptions::default()).err().unwrap().to_string();
        assert!(err.starts_with("unknown routing engine 'nosuch'"), "{err}");
    }
}
