//! Forwarding-table dumps: the files other tools write linear forwarding tables
//! to, read into one plain structure ([`LftDump`]) and tied to a fabric.
//!
//! Three formats, one module each:
//! - [`opensm_lfts`]: OpenSM's `opensm-lfts.dump` (`dump_ucast_lfts` in
//!   opensm/osm_dump.c), which OpenSM's own `file` routing engine loads
//!   (opensm/osm_ucast_file.c), and `ibroute` output, which that loader also takes.
//! - [`ucast_routes`]: OpenSM's `dump_ucast_routes` listing (`opensm.fdbs`, the
//!   older `osm.fdbs`, and the copy ibdiagnet keeps).
//! - [`vector`]: ib_flit_sim's `.fdbs` vector file with its `.fdbs.ini` key.
//!
//! Multicast tables are written, not read: [`mcfdbs`] writes OpenSM's
//! `opensm.mcfdbs` (`dump_mcast_routes`).
//!
//! Reading is split in two so that each half can be tested alone. Parsing needs
//! no topology: it yields, per switch (keyed by GUID or by name), the list of
//! `(LID, port)` entries with the line each came from. [`derive_lids`] and
//! [`apply`] then tie a dump to a [`Fabric`]: the first finds the LIDs the dump
//! implies, the second fills [`ForwardingTables`].
//!
//! # Where the LIDs come from
//! - `opensm-lfts.dump`: every entry's comment names the port GUID owning the
//!   LID, and each switch header gives the switch's LID. A CA port owns every
//!   LID its GUID is named with; the LMC of CA ports is the smallest one whose
//!   aligned block (IBA 7.11.1) holds each port's LIDs, and never less than the
//!   configured one.
//! - ib_flit_sim `.fdbs`: host `H-n` owns LID `n` (LMC 0), as the simulator's
//!   `.ned` files set `srcLid`; switches have no LID in that format.
//! - `dump_ucast_routes`: the listing does not say who owns a LID, so the LIDs
//!   must be given with the topology (OpenSM's `subnet.lst` carries them).
//!
//! LIDs given by the caller always win. For an `opensm-lfts.dump` they are
//! matched as OpenSM's loader does (`remap_lid`): an entry whose port GUID owns
//! other LIDs now is moved to the same path offset in that port's LID block.
//! Cabled CA ports that the dump gives no LID get fresh LIDs above the dump's,
//! with no routes, so that the reachability check reports them.
//!
//! Nothing is repaired: a LID the dump leaves unrouted stays [`NO_PATH`], so
//! `check` can report it. A port the switch does not have, a switch not in the
//! fabric, or a malformed line is an error naming the file and line.

pub mod mcfdbs;
pub mod opensm_lfts;
pub mod ucast_routes;
pub mod vector;

use std::path::{Path, PathBuf};

use ibnetsim_fabric::{Fabric, LinkEnd, Location, NodeId, PortNum};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::SmError;
use crate::lft::{ForwardingTables, NO_PATH};
use crate::lid::{Lid, LidMap, PortLid, MAX_UNICAST_LID};
use crate::routing::Routing;

/// The format of a dump file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpFormat {
    /// OpenSM `opensm-lfts.dump` or `ibroute` output.
    OpenSmLfts,
    /// OpenSM `dump_ucast_routes` listing (`opensm.fdbs`).
    UcastRoutes,
    /// ib_flit_sim `.fdbs` vector file keyed by a `.fdbs.ini`.
    Vector,
}

impl DumpFormat {
    /// Short human name for messages.
    pub fn describe(self) -> &'static str {
        match self {
            DumpFormat::OpenSmLfts => "OpenSM opensm-lfts.dump",
            DumpFormat::UcastRoutes => "OpenSM dump_ucast_routes listing",
            DumpFormat::Vector => "ib_flit_sim .fdbs vector file",
        }
    }
}

/// How a dump names a switch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SwitchKey {
    /// Node GUID (OpenSM formats).
    Guid(u64),
    /// Module name (ib_flit_sim), e.g. `SW_2_0_U1`.
    Name(String),
}

impl std::fmt::Display for SwitchKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SwitchKey::Guid(g) => write!(f, "GUID {g:#018x}"),
            SwitchKey::Name(n) => write!(f, "'{n}'"),
        }
    }
}

/// One forwarding entry of a dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Destination LID.
    pub lid: Lid,
    /// Output port; `None` where the dump says the LID is unreachable.
    pub port: Option<PortNum>,
    /// 1-based line in [`LftDump::file`].
    pub line: u32,
}

/// One switch's table as a dump gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpSwitch {
    /// How the dump names the switch.
    pub key: SwitchKey,
    /// The switch's own LID where the dump states it (`opensm-lfts.dump` headers).
    pub lid: Option<Lid>,
    /// Where the switch is introduced (its header, or its `.fdbs.ini` key line).
    pub at: Location,
    /// The LID range its header says the table covers (`[0-320]`,
    /// `[0x0-0x140]`), where the format has one (`opensm-lfts.dump`, `ibroute`,
    /// `dump_fts`).
    pub range: Option<(Lid, Lid)>,
    /// Entries in file order.
    pub routes: Vec<Route>,
}

/// A port GUID named as the owner of a LID (the comment of an `opensm-lfts.dump` entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LidOwner {
    /// The LID.
    pub lid: Lid,
    /// Port GUID of its owner.
    pub port_guid: u64,
    /// 1-based line in [`LftDump::file`].
    pub line: u32,
}

/// A parsed dump, independent of any topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LftDump {
    /// Which format it was read from.
    pub format: DumpFormat,
    /// The file the route lines refer to, when read from one.
    pub file: Option<PathBuf>,
    /// Switch tables in file order (vector files: in row order).
    pub switches: Vec<DumpSwitch>,
    /// LID owners named in the dump (`opensm-lfts.dump` only).
    pub owners: Vec<LidOwner>,
}

impl LftDump {
    /// Total number of entries over all switches.
    pub fn num_routes(&self) -> usize {
        self.switches.iter().map(|s| s.routes.len()).sum()
    }

    /// The table of the switch with `key`.
    pub fn switch(&self, key: &SwitchKey) -> Option<&DumpSwitch> {
        self.switches.iter().find(|s| &s.key == key)
    }

    /// Location of a route line.
    pub fn loc(&self, line: u32) -> Location {
        Location::new(self.file.clone(), line as usize)
    }
}

/// Recognises a dump's format from its first meaningful line.
pub fn detect_format(text: &str) -> Option<DumpFormat> {
    let first = lines(text).map(|(_, l)| l.trim()).find(|l| !l.is_empty() && !l.starts_with('#'))?;
    if first.contains("dump_ucast_routes: Switch 0x") {
        Some(DumpFormat::UcastRoutes)
    } else if first.starts_with("Unicast lids") {
        Some(DumpFormat::OpenSmLfts)
    } else {
        let (row, _) = first.split_once(':')?;
        (!row.is_empty() && row.bytes().all(|b| b.is_ascii_digit())).then_some(DumpFormat::Vector)
    }
}

/// Parses an OpenSM dump (either format) from text. Vector files need their
/// key and go through [`vector::parse`].
pub fn parse(text: &str, file: Option<&Path>) -> Result<LftDump, SmError> {
    match detect_format(text) {
        Some(DumpFormat::OpenSmLfts) => opensm_lfts::parse(text, file),
        Some(DumpFormat::UcastRoutes) => ucast_routes::parse(text, file),
        Some(DumpFormat::Vector) => Err(SmError::parse(
            Location { file: file.map(Path::to_path_buf), line: None },
            "this is an ib_flit_sim .fdbs vector file; it needs its .fdbs.ini key (see dump::vector::parse)",
        )),
        None => Err(unknown_format(text, file)),
    }
}

/// Reads a dump file, detecting its format by content. A vector `.fdbs` file
/// is keyed by `key`, or by `<file>.ini` when no key is given.
pub fn read(file: &Path, key: Option<&Path>) -> Result<LftDump, SmError> {
    let text = read_text(file)?;
    match detect_format(&text) {
        Some(DumpFormat::Vector) => {
            let default_key;
            let key = match key {
                Some(k) => k,
                None => {
                    let mut k = file.as_os_str().to_owned();
                    k.push(".ini");
                    default_key = PathBuf::from(k);
                    if !default_key.exists() {
                        return Err(SmError::option(
                            "file_key",
                            format!(
                                "{} is an ib_flit_sim .fdbs vector file, which needs its .fdbs.ini key; \
                                 {} does not exist, so give the key file",
                                file.display(),
                                default_key.display()
                            ),
                        ));
                    }
                    &default_key
                }
            };
            let key_text = read_text(key)?;
            vector::parse(&text, Some(file), &key_text, Some(key))
        }
        Some(format) => {
            if let Some(k) = key {
                return Err(SmError::option(
                    "file_key",
                    format!(
                        "{} is an {}, which needs no key; {} is only for ib_flit_sim .fdbs tables",
                        file.display(),
                        format.describe(),
                        k.display()
                    ),
                ));
            }
            parse(&text, Some(file))
        }
        None => Err(unknown_format(&text, Some(file))),
    }
}

fn unknown_format(text: &str, file: Option<&Path>) -> SmError {
    let at = lines(text).find(|(_, l)| !l.trim().is_empty() && !l.trim().starts_with('#'));
    let loc = Location { file: file.map(Path::to_path_buf), line: at.map(|(n, _)| n) };
    SmError::parse(
        loc,
        "not a forwarding-table dump: expected an OpenSM 'Unicast lids ...' header (opensm-lfts.dump), \
         a 'dump_ucast_routes: Switch 0x...' header (opensm.fdbs), or an ib_flit_sim '<row>: <ports>' line",
    )
}

fn read_text(path: &Path) -> Result<String, SmError> {
    crate::error::read_text(path, "a forwarding-table dump")
}

/// Lines with 1-based numbers, without their `\n` or `\r\n`.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l))
}

pub(crate) fn location(file: Option<&Path>, line: usize) -> Location {
    Location::new(file.map(Path::to_path_buf), line)
}

/// Switches in the order OpenSM dumps them: its `sw_guid_tbl` is a `cl_qmap`
/// keyed by the GUID in network byte order, read as a host integer, so on the
/// little-endian hosts OpenSM runs on the order is that of the byte-swapped
/// GUID (`osm.fdbs` confirms it: `…0000`, `…3200`, `…b600`, then `…0001`).
pub fn opensm_switch_order(fabric: &Fabric) -> Vec<NodeId> {
    let mut sws: Vec<NodeId> = fabric.switches().collect();
    sws.sort_by_key(|&s| fabric.node(s).guid.swap_bytes());
    sws
}

/// A node description as OpenSM prints it (`clean_nodedesc` in complib's
/// cl_nodenamemap.c): at most 63 bytes, each non-printable byte a blank.
pub fn print_desc(desc: &str) -> String {
    desc.bytes().take(63).map(|b| if (0x20..0x7f).contains(&b) { b as char } else { ' ' }).collect()
}

/// Every port by its GUID, as [`ibnetsim_fabric::Node::port_guid`] numbers
/// them: a switch's node GUID is its port 0, a CA port's GUID is the node GUID
/// plus the port number. Built once, because real GUIDs do not leave the low
/// byte free for the port (`…8ea0` has port `…8ea1`), so a port GUID cannot be
/// turned back into its node by masking.
pub struct PortGuids<'a> {
    fabric: &'a Fabric,
    ports: FxHashMap<u64, LinkEnd>,
}

impl<'a> PortGuids<'a> {
    /// Indexes the ports of `fabric`.
    pub fn new(fabric: &'a Fabric) -> Self {
        let mut ports = FxHashMap::default();
        for id in fabric.ids() {
            let n = fabric.node(id);
            if n.kind.is_switch() {
                ports.insert(n.guid, LinkEnd { node: id, port: 0 });
            } else {
                for p in 1..=n.num_ports {
                    ports.insert(n.port_guid(p), LinkEnd { node: id, port: p });
                }
            }
        }
        PortGuids { fabric, ports }
    }

    /// The port `guid` names, or why there is none.
    pub fn port(&self, guid: u64) -> Result<LinkEnd, String> {
        if let Some(&end) = self.ports.get(&guid) {
            return Ok(end);
        }
        match self.fabric.node_by_guid(guid).filter(|&n| self.fabric.node(n).guid == guid) {
            Some(n) => Err(format!("GUID {guid:#018x} is not a port GUID of '{}'", self.fabric.node(n).name)),
            None => Err(format!("port GUID {guid:#018x} is not in the fabric")),
        }
    }
}

/// The name ib_flit_sim gives a node: the topology name with `/` and `-` as `_`.
pub fn flit_sim_name(name: &str) -> String {
    name.replace(['/', '-'], "_")
}

/// The LIDs a dump implies for `fabric` (see the module documentation for the
/// rule of each format). `lmc` is the configured LMC of CA ports.
pub fn derive_lids(dump: &LftDump, fabric: &Fabric, lmc: u8) -> Result<LidMap, SmError> {
    if lmc > 7 {
        return Err(SmError::option("lmc", format!("{lmc} is out of range; IBA allows LMC 0..=7")));
    }
    let (mut entries, lmc) = match dump.format {
        DumpFormat::OpenSmLfts => lids_from_guids(dump, fabric, lmc)?,
        DumpFormat::Vector => (lids_from_host_names(dump, fabric, lmc)?, 0),
        DumpFormat::UcastRoutes => {
            return Err(SmError::option(
                "file",
                format!(
                    "{}: a dump_ucast_routes listing does not say which port owns a LID; \
                     give the LIDs: OpenSM's guid2lid file of the same run (--guid2lid), or a topology that \
                     states them (subnet.lst, ibnetdiscover output)",
                    dump.file.as_deref().map_or("<input>".into(), |p| p.display().to_string())
                ),
            ))
        }
    };
    add_fresh_ca_lids(fabric, lmc, &mut entries)?;
    LidMap::from_entries(fabric, lmc, entries)
}

/// LIDs from the port GUIDs of an `opensm-lfts.dump` and its switch headers.
fn lids_from_guids(dump: &LftDump, fabric: &Fabric, lmc: u8) -> Result<(Vec<PortLid>, u8), SmError> {
    // LID -> (port GUID, line naming it)
    let mut owner_of: FxHashMap<Lid, (u64, Location)> = FxHashMap::default();
    let mut claim = |lid: Lid, guid: u64, at: Location| -> Result<(), SmError> {
        if lid == 0 {
            return Err(SmError::parse(at, format!("LID 0 is reserved; port GUID {guid:#018x} cannot own it")));
        }
        match owner_of.get(&lid) {
            Some((g, first)) if *g != guid => Err(SmError::parse(
                at,
                format!("LID {lid:#06x} is given to port GUID {guid:#018x} here but to {g:#018x} at {first}"),
            )),
            Some(_) => Ok(()),
            None => {
                owner_of.insert(lid, (guid, at));
                Ok(())
            }
        }
    };
    for sw in &dump.switches {
        if let (Some(lid), SwitchKey::Guid(g)) = (sw.lid, &sw.key) {
            claim(lid, *g, sw.at.clone())?;
        }
    }
    for o in &dump.owners {
        claim(o.lid, o.port_guid, dump.loc(o.line))?;
    }
    // Port -> its LIDs, and where the port was first named.
    let mut by_port: FxHashMap<LinkEnd, (Vec<Lid>, Location)> = FxHashMap::default();
    let guids = PortGuids::new(fabric);
    let mut sorted: Vec<(Lid, (u64, Location))> = owner_of.into_iter().collect();
    sorted.sort_by_key(|(l, _)| *l);
    for (lid, (guid, at)) in sorted {
        let end = guids.port(guid).map_err(|m| SmError::parse(at.clone(), format!("LID {lid:#06x}: {m}")))?;
        by_port.entry(end).or_insert_with(|| (Vec::new(), at)).0.push(lid);
    }
    let mut ports: Vec<(LinkEnd, (Vec<Lid>, Location))> = by_port.into_iter().collect();
    ports.sort_by_key(|(e, _)| *e);
    // The LMC of CA ports: the smallest that puts each port's LIDs in one aligned block.
    let mut lmc = lmc;
    for (end, (l, at)) in &ports {
        let (lo, hi) = (l[0], *l.last().expect("a port has at least one LID"));
        let node = fabric.node(end.node);
        if node.kind.is_switch() {
            if lo != hi {
                return Err(SmError::parse(
                    at.clone(),
                    format!("switch '{}' is given LIDs {lo:#06x} and {hi:#06x}; a switch has one LID", node.name),
                ));
            }
            continue;
        }
        let need = (16 - (lo ^ hi).leading_zeros()) as u8;
        if need > 7 {
            return Err(SmError::parse(
                at.clone(),
                format!(
                    "port {} of '{}' is given LIDs {lo:#06x}..{hi:#06x}, more than LMC 7 allows",
                    end.port, node.name
                ),
            ));
        }
        lmc = lmc.max(need);
    }
    let mask = !((1u16 << lmc) - 1);
    let entries = ports
        .into_iter()
        .map(|(end, (l, _))| {
            if fabric.node(end.node).kind.is_switch() {
                PortLid { end, base: l[0], lmc: 0 }
            } else {
                PortLid { end, base: l[0] & mask, lmc }
            }
        })
        .collect();
    Ok((entries, lmc))
}

/// LIDs of ib_flit_sim hosts: `H-n` (or `H-n/U1`) owns LID `n`.
fn lids_from_host_names(dump: &LftDump, fabric: &Fabric, lmc: u8) -> Result<Vec<PortLid>, SmError> {
    if lmc != 0 {
        return Err(SmError::option(
            "lmc",
            format!(
                "{}: ib_flit_sim tables give each host one LID (LMC 0), so lmc = {lmc} cannot be used with them",
                { dump.file.as_deref().map_or("<input>".into(), |p| p.display().to_string()) }
            ),
        ));
    }
    let mut entries = Vec::new();
    for ca in fabric.cas() {
        let node = fabric.node(ca);
        let Some(lid) = flit_sim_host_lid(&node.name) else { continue };
        let lid = match lid {
            Some(l) if (1..=MAX_UNICAST_LID as u32).contains(&l) => l as Lid,
            _ => {
                return Err(SmError::option(
                    "lid",
                    format!("host '{}' would own LID {} by its name, which is not a unicast LID", node.name, {
                        lid.map_or("(too large)".into(), |l| l.to_string())
                    }),
                ))
            }
        };
        let cabled: Vec<PortNum> = node.connected_ports().map(|(p, _)| p).collect();
        match cabled.as_slice() {
            [] => {}
            [port] => entries.push(PortLid { end: LinkEnd { node: ca, port: *port }, base: lid, lmc: 0 }),
            _ => {
                return Err(SmError::option(
                    "lid",
                    format!(
                        "host '{}' has {} cabled ports, but ib_flit_sim gives a host one LID ({lid}); \
                         which port owns it is unknown",
                        node.name,
                        cabled.len()
                    ),
                ))
            }
        }
    }
    Ok(entries)
}

/// `Some(n)` for a host named `H-n` or `H-n/<anything>`; `Some(None)` when `n`
/// does not fit; `None` for other names.
fn flit_sim_host_lid(name: &str) -> Option<Option<u32>> {
    let base = name.split('/').next().unwrap_or(name);
    let digits = base.strip_prefix("H-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u32>().ok())
}

/// Gives cabled CA ports without a LID fresh aligned LIDs above all others.
fn add_fresh_ca_lids(fabric: &Fabric, lmc: u8, entries: &mut Vec<PortLid>) -> Result<(), SmError> {
    let have: rustc_hash::FxHashSet<LinkEnd> = entries.iter().map(|p| p.end).collect();
    let per = 1u32 << lmc;
    let top = entries.iter().map(|p| p.base as u32 + p.count() - 1).max().unwrap_or(0);
    let mut next = (top / per + 1) * per;
    for end in fabric.ca_ports() {
        if have.contains(&end) {
            continue;
        }
        if next + per - 1 > MAX_UNICAST_LID as u32 {
            return Err(SmError::LmcTooLarge { lmc, needed: (next + per - 1) as u64, max: MAX_UNICAST_LID as u64, fits: None });
        }
        entries.push(PortLid { end, base: next as Lid, lmc });
        next += per;
    }
    Ok(())
}

/// Checks that caller-given LIDs belong to `fabric` (a map built for another
/// fabric would index nodes that are not there).
pub(crate) fn check_lids_fit(fabric: &Fabric, lids: &LidMap) -> Result<(), SmError> {
    for p in lids.ports() {
        if p.end.node.index() >= fabric.num_nodes() || p.end.port > fabric.node(p.end.node).num_ports {
            return Err(SmError::option(
                "lids",
                format!(
                    "the given LIDs name node #{} port {}, which this fabric does not have",
                    p.end.node.0, p.end.port
                ),
            ));
        }
    }
    Ok(())
}

/// Fills forwarding tables for `fabric` from `dump`, with LIDs `lids`
/// (from [`derive_lids`] or given with the topology).
///
/// Fails, naming the file and line, on a switch the fabric does not have, a
/// port the switch does not have, or one LID given two different ports on one
/// switch. Entries for LIDs above `lids.top_lid()` (owned by no port) are left
/// out and counted in the notes. Nothing else is changed: what the dump leaves
/// unrouted stays [`NO_PATH`].
pub fn apply(dump: &LftDump, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
    check_lids_fit(fabric, lids)?;
    let top = lids.top_lid();
    let mut tables = ForwardingTables::new(fabric, top);
    let mut notes = Vec::new();
    let resolver = SwitchResolver::new(fabric, dump.format);

    // For remapping: which port owns a LID according to the dump.
    let mut dump_owner: FxHashMap<Lid, u64> = FxHashMap::default();
    for o in &dump.owners {
        dump_owner.entry(o.lid).or_insert(o.port_guid);
    }
    let mut remap_cache: FxHashMap<u64, Option<PortLid>> = FxHashMap::default();
    let guids = PortGuids::new(fabric);

    let mut seen_switch: FxHashMap<NodeId, &Location> = FxHashMap::default();
    // Per LID, the line that set it on the current switch (0 = unset).
    let mut set_at: Vec<u32> = vec![0; top as usize + 1];
    let (mut beyond, mut remapped) = (0usize, 0usize);
    // Entries the header range covers but the dump does not list, and the first of them.
    let mut unlisted: Vec<(NodeId, Lid)> = Vec::new();
    let mut unlisted_example: Option<(Lid, NodeId, Location)> = None;
    // Top LIDs (a multiple of 64) left out with no owner: switches and the first header.
    let mut unowned_top: std::collections::BTreeMap<Lid, (usize, Location)> = Default::default();
    let mut beyond_example: Option<(Lid, u32)> = None;
    for sw in &dump.switches {
        let node_id = resolver.resolve(sw)?;
        if let Some(first) = seen_switch.insert(node_id, &sw.at) {
            return Err(SmError::parse(
                sw.at.clone(),
                format!("switch '{}' already has a table (from {first})", fabric.node(node_id).name),
            ));
        }
        let node = fabric.node(node_id);
        set_at.iter_mut().for_each(|s| *s = 0);
        for r in &sw.routes {
            let Some(port) = r.port else { continue };
            if port == NO_PATH || port > node.num_ports {
                let msg = if port == NO_PATH {
                    "port 255 cannot be stored in a forwarding table (0xff means no path)".to_string()
                } else {
                    format!("switch '{}' has ports 0..={}; port {port} does not exist", node.name, node.num_ports)
                };
                return Err(SmError::parse(dump.loc(r.line), msg));
            }
            let mut lid = r.lid;
            if let Some(&guid) = dump_owner.get(&r.lid) {
                let owner = *remap_cache
                    .entry(guid)
                    .or_insert_with(|| guids.port(guid).ok().and_then(|e| lids.of_port(e.node, e.port).copied()));
                // As OpenSM's remap_lid: keep the path offset inside the owner's block.
                if let Some(pl) = owner {
                    let (lo, hi) = (pl.base as u32, pl.base as u32 + pl.count() - 1);
                    if !(lo..=hi).contains(&(lid as u32)) {
                        lid = pl.base + (lid & (pl.count() as u16 - 1));
                        remapped += 1;
                    }
                }
            }
            if lid > top {
                beyond += 1;
                beyond_example.get_or_insert((lid, r.line));
                continue;
            }
            let prev = set_at[lid as usize];
            if prev != 0 {
                let old = tables.get(node_id, lid).unwrap_or(NO_PATH);
                if old != port {
                    return Err(SmError::parse(
                        dump.loc(r.line),
                        format!(
                            "LID {lid:#06x} of switch '{}' goes to port {port} here but to port {old} at line {prev}",
                            node.name
                        ),
                    ));
                }
            }
            set_at[lid as usize] = r.line.max(1);
            tables.set(node_id, lid, port);
        }
        if let Some((first, last)) = sw.range {
            // LFTs are read in blocks of 64 LIDs (IBA 14.2.5.10), so a block
            // with no line at all was not read, while a LID missing from a
            // listed block is simply unrouted (dump_fts omits invalid ports).
            let listed: FxHashSet<Lid> = sw.routes.iter().map(|r| r.lid / LFT_BLOCK).collect();
            let (lo_lid, hi_lid) = (first.max(1), last.min(top));
            for block in lo_lid / LFT_BLOCK..=hi_lid / LFT_BLOCK {
                if listed.contains(&block) || lo_lid > hi_lid {
                    continue;
                }
                let lo = (block * LFT_BLOCK).max(lo_lid);
                let hi = (block * LFT_BLOCK + LFT_BLOCK - 1).min(hi_lid);
                for lid in lo..=hi {
                    if lids.owner(lid).is_some() {
                        unlisted.push((node_id, lid));
                        unlisted_example.get_or_insert((lid, node_id, sw.at.clone()));
                    }
                }
            }
            // The dump_fts/ibroute quirk itself: `endblock = ALIGN(endl, 64) / 64`
            // leaves out the block of a top LID that is a multiple of 64.
            let unowned = last > top || lids.owner(last).is_none();
            if last % LFT_BLOCK == 0 && last > 0 && !listed.contains(&(last / LFT_BLOCK)) && unowned {
                unowned_top.entry(last).or_insert_with(|| (0, sw.at.clone())).0 += 1;
            }
        }
    }
    if remapped > 0 {
        notes.push(format!(
            "{remapped} entries were moved to the LIDs their port owns now (as OpenSM's file engine remaps)"
        ));
    }
    if let Some((lid, line)) = beyond_example {
        notes.push(format!(
            "{beyond} entries for LIDs above {top:#06x}, which no port owns, were left out (first: LID {lid:#06x} at {})",
            dump.loc(line)
        ));
    }
    if let Some((lid, sw, at)) = unlisted_example {
        let switches = unlisted.iter().map(|e| e.0).collect::<FxHashSet<_>>().len();
        notes.push(format!(
            "{} LFT {} on {} {} not in the dump: the switch's header range covers {} but no \
             64-LID block it lists holds {} (first: LID {lid:#06x} on '{}', header at {at}); dump_fts and \
             ibroute leave out the top LID when it is a multiple of 64. Routes that need {} are counted as \
             not in the dump, not as unreachable",
            unlisted.len(),
            if unlisted.len() == 1 { "entry" } else { "entries" },
            switches,
            if switches == 1 { "switch is" } else { "switches are" },
            if unlisted.len() == 1 { "its LID" } else { "their LIDs" },
            if unlisted.len() == 1 { "it" } else { "them" },
            fabric.node(sw).name,
            if unlisted.len() == 1 { "it" } else { "them" },
        ));
    }
    for (lid, (switches, at)) in unowned_top {
        notes.push(format!(
            "LID {lid:#06x}, the top of the header range of {switches} {} (first at {at}), is in no 64-LID block \
             the dump lists and no port owns it here: dump_fts and ibroute leave out the top LID when it is a \
             multiple of 64, so its owner cannot be told from the dump. Give the LIDs with the topology \
             (ibnetdiscover's 'lid' comments) to count routes to it as not in the dump rather than unreachable",
            if switches == 1 { "switch" } else { "switches" }
        ));
    }
    unlisted.sort_unstable();
    let missing: Vec<&str> =
        fabric.switches().filter(|s| !seen_switch.contains_key(s)).map(|s| fabric.node(s).name.as_str()).collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).copied().collect();
        notes.push(format!(
            "{} {} no table in the dump and forward{} nothing: {}{}",
            missing.len(),
            if missing.len() == 1 { "switch has" } else { "switches have" },
            if missing.len() == 1 { "s" } else { "" },
            shown.join(", "),
            if missing.len() > shown.len() { ", …" } else { "" }
        ));
    }
    let mut routing = Routing::unicast(tables, notes);
    routing.not_in_dump = unlisted;
    Ok(routing)
}

/// LIDs per block of a linear forwarding table (IBA 14.2.5.10), the unit
/// `dump_fts`, `ibroute` and OpenSM read and write tables in.
const LFT_BLOCK: Lid = 64;

/// Finds the fabric switch a dump's key names.
struct SwitchResolver<'a> {
    fabric: &'a Fabric,
    /// ib_flit_sim name -> switches with that name (more than one is ambiguous).
    by_name: FxHashMap<String, Vec<NodeId>>,
}

impl<'a> SwitchResolver<'a> {
    fn new(fabric: &'a Fabric, format: DumpFormat) -> Self {
        let mut by_name: FxHashMap<String, Vec<NodeId>> = FxHashMap::default();
        if format == DumpFormat::Vector {
            for s in fabric.switches() {
                by_name.entry(flit_sim_name(&fabric.node(s).name)).or_default().push(s);
            }
        }
        SwitchResolver { fabric, by_name }
    }

    fn resolve(&self, sw: &DumpSwitch) -> Result<NodeId, SmError> {
        match &sw.key {
            SwitchKey::Guid(g) => match self.fabric.node_by_guid(*g).filter(|&n| self.fabric.node(n).guid == *g) {
                Some(n) if self.fabric.node(n).kind.is_switch() => Ok(n),
                Some(n) => Err(SmError::parse(
                    sw.at.clone(),
                    format!("GUID {g:#018x} is CA '{}', not a switch", self.fabric.node(n).name),
                )),
                None => Err(SmError::parse(sw.at.clone(), format!("switch GUID {g:#018x} is not in the fabric"))),
            },
            SwitchKey::Name(name) => {
                // ib_flit_sim appends the ASIC name `U1` to single-ASIC systems;
                // a topology may name such a switch without it.
                let found =
                    self.by_name.get(name).or_else(|| name.strip_suffix("_U1").and_then(|b| self.by_name.get(b)));
                match found.map(Vec::as_slice) {
                    Some([one]) => Ok(*one),
                    Some(many) => Err(SmError::parse(
                        sw.at.clone(),
                        format!(
                            "switch '{name}' matches {} switches of the fabric ({}) once '/' and '-' are read as '_'",
                            many.len(),
                            many.iter().map(|&n| self.fabric.node(n).name.as_str()).collect::<Vec<_>>().join(", ")
                        ),
                    )),
                    None => Err(SmError::parse(
                        sw.at.clone(),
                        format!(
                            "switch '{name}' is not in the fabric (ib_flit_sim names a switch by its topology \
                             name with '/' and '-' replaced by '_')"
                        ),
                    )),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read() {
        let e = read(Path::new("/dev/zero"), None).unwrap_err().to_string();
        assert_eq!(e, "/dev/zero: not a regular file (a directory, device or pipe); give a forwarding-table dump");
        let e = read(Path::new("/"), None).unwrap_err().to_string();
        assert!(e.starts_with("/: not a regular file"), "{e}");
    }
    use ibnetsim_fabric::{LinkSpec, NodeKind};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Switch `s` (GUID 0x10, 4 ports): host `a` (0x100) on port 1, host `b`
    /// (0x200, two ports, port 2 cabled) on port 2, host `c` (0x300) on port 4.
    fn star() -> (Fabric, [NodeId; 4]) {
        let mut f = Fabric::new();
        let s = f.add_node(NodeKind::Switch, "s", 4, Some(0x10)).unwrap();
        let a = f.add_node(NodeKind::Hca, "a", 1, Some(0x100)).unwrap();
        let b = f.add_node(NodeKind::Hca, "b", 2, Some(0x200)).unwrap();
        let c = f.add_node(NodeKind::Hca, "c", 1, Some(0x300)).unwrap();
        f.connect(s, 1, a, 1, LinkSpec::default()).unwrap();
        f.connect(s, 2, b, 2, LinkSpec::default()).unwrap();
        f.connect(s, 4, c, 1, LinkSpec::default()).unwrap();
        (f, [s, a, b, c])
    }

    const STAR_DUMP: &str = "\
Unicast lids [0-9] of switch Lid 2 guid 0x0000000000000010 ('s'):
0x0002 000 # Switch portguid 0x0000000000000010: 's'
0x0004 001 # Channel Adapter portguid 0x0000000000000101: 'a'
0x0005 001 # Channel Adapter portguid 0x0000000000000101: 'a'
0x0009 002 # Channel Adapter portguid 0x0000000000000202: 'b'
9 lids dumped
";

    fn dump_of(text: &str) -> LftDump {
        opensm_lfts::parse(text, Some(Path::new("lfts.dump"))).unwrap()
    }

    #[test]
    fn detects_each_format() {
        assert_eq!(detect_format(STAR_DUMP), Some(DumpFormat::OpenSmLfts));
        assert_eq!(
            detect_format("\n# x\nosm_ucast_mgr_dump_ucast_routes: Switch 0x1\n"),
            Some(DumpFormat::UcastRoutes)
        );
        assert_eq!(detect_format("12: 255 0 1\n"), Some(DumpFormat::Vector));
        assert_eq!(detect_format("Switch 8 \"sw\"\n"), None);
        let e = parse("hello\n", Some(Path::new("x.dump"))).unwrap_err().to_string();
        assert!(e.starts_with("x.dump:1: not a forwarding-table dump"), "{e}");
    }

    #[test]
    fn lids_come_from_port_guids_with_the_lmc_they_need() {
        let (f, [s, a, b, c]) = star();
        let lids = derive_lids(&dump_of(STAR_DUMP), &f, 0).unwrap();
        // a owns 4 and 5: LMC 1, so every CA port gets an aligned pair.
        assert_eq!(lids.lmc(), 1);
        assert_eq!(lids.of_port(a, 1).map(|p| (p.base, p.lmc)), Some((4, 1)));
        assert_eq!(lids.of_port(b, 2).map(|p| (p.base, p.lmc)), Some((8, 1)));
        assert_eq!(lids.switch_lid(s), Some(2));
        // c is not in the dump: it gets the next aligned pair and no routes.
        assert_eq!(lids.of_port(c, 1).map(|p| p.base), Some(10));
        assert_eq!(lids.top_lid(), 11);
        let r = apply(&dump_of(STAR_DUMP), &f, &lids).unwrap();
        assert_eq!(r.tables.get(s, 9), Some(2));
        assert_eq!(r.tables.get(s, 8), None, "b's first LID is not in the dump and stays unrouted");
        assert_eq!(r.tables.get(s, 10), None);
        // A larger configured LMC is kept.
        let lids = derive_lids(&dump_of(STAR_DUMP), &f, 2).unwrap();
        assert_eq!(lids.of_port(b, 2).map(|p| (p.base, p.lmc)), Some((8, 2)));
    }

    #[test]
    fn port_guids_of_real_hcas_need_not_leave_the_low_byte_free() {
        // Node GUID 0x0002c90109768ea0, port 1 GUID …8ea1 (ibutils' subnet.lst).
        let mut f = Fabric::new();
        let s = f.add_node(NodeKind::Switch, "s", 4, Some(0x10)).unwrap();
        let h = f.add_node(NodeKind::Hca, "h", 2, Some(0x0002_c901_0976_8ea0)).unwrap();
        f.connect(s, 2, h, 1, LinkSpec::default()).unwrap();
        let text = "Unicast lids [0-7] of switch Lid 1 guid 0x0000000000000010 ('s'):\n\
                    0x0007 002 # Channel Adapter portguid 0x0002c90109768ea1: 'h'\n";
        let lids = derive_lids(&dump_of(text), &f, 0).unwrap();
        assert_eq!(lids.of_port(h, 1).map(|p| p.base), Some(7));
        let g = PortGuids::new(&f);
        assert_eq!(g.port(0x0002_c901_0976_8ea2), Ok(LinkEnd { node: h, port: 2 }));
        assert_eq!(g.port(0x0002_c901_0976_8ea3), Err("port GUID 0x0002c90109768ea3 is not in the fabric".into()));
    }

    #[test]
    fn lid_derivation_errors_name_the_line() {
        let (f, _) = star();
        let err = |text: &str| derive_lids(&dump_of(text), &f, 0).unwrap_err().to_string();
        let h = "Unicast lids [0-9] of switch Lid 2 guid 0x0000000000000010 ('s'):\n";
        assert_eq!(
            err(&format!("{h}0x0003 001 # Channel Adapter portguid 0x0000000000000901: 'z'\n")),
            "lfts.dump:2: LID 0x0003: port GUID 0x0000000000000901 is not in the fabric"
        );
        assert_eq!(
            err(&format!("{h}0x0003 001 # Channel Adapter portguid 0x0000000000000100: 'a'\n")),
            "lfts.dump:2: LID 0x0003: GUID 0x0000000000000100 is not a port GUID of 'a'"
        );
        assert_eq!(
            err(&format!("{h}0x0002 001 # Channel Adapter portguid 0x0000000000000101: 'a'\n")),
            "lfts.dump:2: LID 0x0002 is given to port GUID 0x0000000000000101 here but to 0x0000000000000010 at lfts.dump:1"
        );
        assert_eq!(
            err(&format!("{h}0x0007 000 # Switch portguid 0x0000000000000010: 's'\n")),
            "lfts.dump:1: switch 's' is given LIDs 0x0002 and 0x0007; a switch has one LID"
        );
        assert_eq!(
            err(&format!(
                "{h}0x0001 001 # x portguid 0x0000000000000101\n0x0100 001 # x portguid 0x0000000000000101\n"
            )),
            "lfts.dump:2: port 1 of 'a' is given LIDs 0x0001..0x0100, more than LMC 7 allows"
        );
        // LID 0 routed anywhere is refused when the dump is read.
        let e = opensm_lfts::parse(&format!("{h}0x0000 001 # Channel Adapter portguid 0x0000000000000101: 'a'\n"), Some(Path::new("lfts.dump")))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "lfts.dump:2: LID 0x0000 is reserved and cannot be routed (unicast LIDs are 0x0001-0xbfff)");
        let routes = ucast_routes::parse("dump_ucast_routes: Switch 0x10\n", Some(Path::new("o.fdbs"))).unwrap();
        let e = derive_lids(&routes, &f, 0).unwrap_err().to_string();
        assert!(e.starts_with("invalid option 'file': o.fdbs: a dump_ucast_routes listing does not say"), "{e}");
    }

    #[test]
    fn apply_errors_name_the_line() {
        let (f, _) = star();
        let lids = LidMap::assign(&f, 0).unwrap();
        let err = |text: &str| apply(&dump_of(text), &f, &lids).unwrap_err().to_string();
        assert_eq!(
            err("x\nUnicast lids [0-9] of switch Lid 2 guid 0x0000000000000011 ('s'):\n".trim_start_matches("x\n")),
            "lfts.dump:1: switch GUID 0x0000000000000011 is not in the fabric"
        );
        assert_eq!(
            err("\nUnicast lids [0-9] of switch Lid 2 guid 0x0000000000000100 ('a'):\n"),
            "lfts.dump:2: GUID 0x0000000000000100 is CA 'a', not a switch"
        );
        let h = "Unicast lids [0-9] of switch Lid 4 guid 0x0000000000000010 ('s'):\n";
        assert_eq!(err(&format!("{h}0x0001 005\n")), "lfts.dump:2: switch 's' has ports 0..=4; port 5 does not exist");
        assert_eq!(
            err(&format!("{h}0x0001 001\n0x0002 003\n0x0001 002\n")),
            "lfts.dump:4: LID 0x0001 of switch 's' goes to port 2 here but to port 1 at line 2"
        );
        // The same entry twice is harmless.
        assert!(apply(&dump_of(&format!("{h}0x0001 001\n0x0001 001\n")), &f, &lids).is_ok());
    }

    #[test]
    fn given_lids_remap_entries_by_port_guid_as_opensm() {
        let (f, [s, a, b, _]) = star();
        // OpenSM-style assignment at LMC 1: a 2..3, b 4..5, c 6..7, s 8.
        let lids = LidMap::assign(&f, 1).unwrap();
        assert_eq!(lids.of_port(a, 1).map(|p| p.base), Some(2));
        let r = apply(&dump_of(STAR_DUMP), &f, &lids).unwrap();
        // a's LIDs 4, 5 (path 0, 1) become 2, 3; b's 9 (path 1) becomes 5; s's 2 becomes 8.
        assert_eq!((r.tables.get(s, 2), r.tables.get(s, 3)), (Some(1), Some(1)));
        assert_eq!((r.tables.get(s, 4), r.tables.get(s, 5)), (None, Some(2)));
        assert_eq!(r.tables.get(s, 8), Some(0));
        assert!(r.notes.iter().any(|n| n.starts_with("4 entries were moved")), "{:?}", r.notes);
        let _ = b;
    }

    /// infiniband-diags' dump_fts (and ibroute) for the star with `c` on LID
    /// 0x40, written from its printf formats: "Unicast lids [0x%x-0x%x] of
    /// switch %s guid 0x%016" PRIx64 " (%s):", the two heading lines, then
    /// "0x%04x %03u %s" per valid entry and "%d %slids dumped ". The top LID
    /// 0x40 is a multiple of 64, so `endblock = ALIGN(0x40, 64) / 64 = 1`
    /// reads block 0 only: LID 0x40 is in the header but on no line.
    const DUMP_FTS: &str = "\
Unicast lids [0x0-0x40] of switch DR path slid 0; dlid 0; 0 guid 0x0000000000000010 (s):
  Lid  Out   Destination
       Port     Info 
0x0001 001 : (Channel Adapter portguid 0x0000000000000101: 'a')
0x0002 000 : (Switch portguid 0x0000000000000010: 's')
0x0003 002 : (Channel Adapter portguid 0x0000000000000202: 'b')
3 valid lids dumped 
";

    #[test]
    fn lids_of_the_header_range_in_no_listed_block_are_not_in_the_dump() {
        use crate::analysis::{analyze, AnalysisOptions, SlView};
        let (f, [s, a, b, c]) = star();
        let dump = opensm_lfts::parse(DUMP_FTS, Some(Path::new("fts.txt"))).unwrap();
        assert_eq!(dump.switches[0].range, Some((0, 0x40)));
        assert_eq!(dump.switches[0].lid, None, "a DR path names no LID");
        // LIDs as the topology gives them (ibnetdiscover's lid comments): c owns 0x40.
        let e = |node, port, base| PortLid { end: LinkEnd { node, port }, base, lmc: 0 };
        let lids = LidMap::from_entries(&f, 0, vec![e(a, 1, 1), e(s, 0, 2), e(b, 2, 3), e(c, 1, 0x40)]).unwrap();
        let r = apply(&dump, &f, &lids).unwrap();
        assert_eq!(r.not_in_dump, vec![(s, 0x40)]);
        assert_eq!(r.tables.get(s, 0x40), None);
        assert_eq!(
            r.notes,
            vec![
                "1 LFT entry on 1 switch is not in the dump: the switch's header range covers its LID but no \
                 64-LID block it lists holds it (first: LID 0x0040 on 's', header at fts.txt:1); dump_fts and \
                 ibroute leave out the top LID when it is a multiple of 64. Routes that need it are counted as \
                 not in the dump, not as unreachable"
            ]
        );
        // a -> c and b -> c reach s with no entry for 0x40: unknown, not lost.
        // b -> a, c -> a, a -> b, c -> b are delivered: 6 pairs, 4 delivered.
        let opts = AnalysisOptions { not_in_dump: r.not_in_dump.clone(), ..Default::default() };
        let report = analyze(&f, &lids, &r.tables, &SlView::default(), &opts).unwrap();
        let reach = &report.paths.reach;
        assert_eq!(
            (reach.pairs, reach.reachable_pairs, reach.unreachable_pairs, reach.no_path_pairs, reach.not_in_dump_pairs),
            (6, 4, 0, 0, 2)
        );
        assert!(!report.has_defects() && report.has_warnings());
        let text = report.to_string();
        assert!(text.contains("CA routes: 6 pairs to 3 LIDs: 4 delivered, 2 not in the dump (unknown, see the notes)"), "{text}");
        assert!(text.contains("  LFT entry not in the dump (LID 0x0040 of c/1): "), "{text}");
        assert!(text.ends_with("verdict: no defect in what the dump lists (some routes need entries it leaves out)"), "{text}");
        // Without the entries the dump leaves out, the same pairs are unreachable.
        let plain = analyze(&f, &lids, &r.tables, &SlView::default(), &AnalysisOptions::default()).unwrap();
        assert_eq!((plain.paths.reach.unreachable_pairs, plain.paths.reach.not_in_dump_pairs), (2, 0));

        // LIDs from the dump alone: no line names 0x40's owner, so c gets a
        // fresh LID above the dump's (4) and its routes stay unreachable; the
        // note says why and what to give.
        let lids = derive_lids(&dump, &f, 0).unwrap();
        assert_eq!(lids.of_port(c, 1).map(|p| p.base), Some(4));
        let r = apply(&dump, &f, &lids).unwrap();
        assert!(r.not_in_dump.is_empty());
        assert_eq!(
            r.notes,
            vec![
                "LID 0x0040, the top of the header range of 1 switch (first at fts.txt:1), is in no 64-LID block the \
                 dump lists and no port owns it here: dump_fts and ibroute leave out the top LID when it is a \
                 multiple of 64, so its owner cannot be told from the dump. Give the LIDs with the topology \
                 (ibnetdiscover's 'lid' comments) to count routes to it as not in the dump rather than unreachable"
            ]
        );
        // OpenSM's own dump lists every routed LID, decimal range: nothing is missing.
        let (f2, lids2, t2) = {
            let (f, _) = star();
            let lids = LidMap::assign(&f, 0).unwrap();
            let mut t = ForwardingTables::new(&f, lids.top_lid());
            for l in 1..=lids.top_lid() {
                let o = lids.owner(l).unwrap().end;
                t.set(s, l, if o.node == s { 0 } else { f.peer(o.node, o.port).unwrap().port });
            }
            (f, lids, t)
        };
        let back = apply(&dump_of(&opensm_lfts::write(&f2, &lids2, &t2)), &f2, &lids2).unwrap();
        assert!(back.not_in_dump.is_empty() && back.notes.is_empty(), "{:?}", back.notes);
    }

    #[test]
    fn entries_above_the_top_lid_are_left_out_and_noted() {
        let (f, [s, ..]) = star();
        let lids = LidMap::assign(&f, 0).unwrap();
        let text = "Unicast lids [0-9] of switch Lid 4 guid 0x0000000000000010 ('s'):\n0x0001 001\n0x0030 002\n";
        let r = apply(&dump_of(text), &f, &lids).unwrap();
        assert_eq!(r.tables.get(s, 1), Some(1));
        assert_eq!(
            r.notes,
            vec![
                "1 entries for LIDs above 0x0004, which no port owns, were left out (first: LID 0x0030 at lfts.dump:3)"
            ]
        );
    }

    #[test]
    fn switches_without_a_table_are_noted() {
        let (mut f, [s, ..]) = star();
        let t = f.add_node(NodeKind::Switch, "t", 4, Some(0x20)).unwrap();
        f.connect(s, 3, t, 1, LinkSpec::default()).unwrap();
        let lids = derive_lids(&dump_of(STAR_DUMP), &f, 0).unwrap();
        let r = apply(&dump_of(STAR_DUMP), &f, &lids).unwrap();
        assert_eq!(r.notes, vec!["1 switch has no table in the dump and forwards nothing: t"]);
        assert!(r.tables.lft(t).unwrap().entries().iter().all(|&p| p == NO_PATH));
    }

    /// `SW-1/U1` and `SW-2` with hosts `H-1/U1`, `H-2/U1` (ports 1) and `H-3`
    /// (a two-port HCA, port 2 cabled).
    fn flit_fabric() -> (Fabric, [NodeId; 5]) {
        let mut f = Fabric::new();
        let s1 = f.add_switch("SW-1/U1", 4).unwrap();
        let s2 = f.add_switch("SW-2", 4).unwrap();
        let h1 = f.add_hca("H-1/U1", 2).unwrap();
        let h2 = f.add_hca("H-2/U1", 2).unwrap();
        let h3 = f.add_hca("H-3", 2).unwrap();
        f.connect(s1, 1, h1, 1, LinkSpec::default()).unwrap();
        f.connect(s1, 2, h2, 1, LinkSpec::default()).unwrap();
        f.connect(s2, 1, h3, 2, LinkSpec::default()).unwrap();
        f.connect(s1, 4, s2, 4, LinkSpec::default()).unwrap();
        (f, [s1, s2, h1, h2, h3])
    }

    #[test]
    fn flit_sim_hosts_own_their_number_and_switches_match_by_name() {
        let (f, [s1, s2, h1, _, h3]) = flit_fabric();
        let key = "**.SW_1_U1.pktfwd.fdbIndex = 0\n**.SW_2_U1.pktfwd.fdbIndex = 1\n";
        let d = vector::parse("0: 255 0 1 3\n1: 255 3 3 0\n", None, key, Some(Path::new("k.ini"))).unwrap();
        let lids = derive_lids(&d, &f, 0).unwrap();
        assert_eq!(lids.of_port(h1, 1).map(|p| p.base), Some(1));
        assert_eq!(lids.of_port(h3, 2).map(|p| p.base), Some(3));
        assert_eq!(lids.top_lid(), 3, "switches get no LID from ib_flit_sim tables");
        let r = apply(&d, &f, &lids).unwrap();
        assert_eq!((r.tables.get(s1, 1), r.tables.get(s1, 2), r.tables.get(s1, 3)), (Some(1), Some(2), Some(4)));
        assert_eq!((r.tables.get(s2, 1), r.tables.get(s2, 3)), (Some(4), Some(1)));
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        let e = derive_lids(&d, &f, 1).unwrap_err().to_string();
        assert!(e.contains("lmc = 1 cannot be used"), "{e}");
    }

    #[test]
    fn flit_sim_name_errors() {
        let (mut f, [s1, ..]) = flit_fabric();
        let d = |key: &str| vector::parse("0: 255\n", None, key, Some(Path::new("k.ini"))).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let e = apply(&d("**.SW_9_U1.pktfwd.fdbIndex = 0\n"), &f, &lids).unwrap_err().to_string();
        assert!(e.starts_with("k.ini:1: switch 'SW_9_U1' is not in the fabric"), "{e}");
        let s3 = f.add_switch("SW_1/U1", 4).unwrap();
        f.connect(s1, 3, s3, 1, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, 0).unwrap();
        let e = apply(&d("**.SW_1_U1.pktfwd.fdbIndex = 0\n"), &f, &lids).unwrap_err().to_string();
        assert_eq!(
            e,
            "k.ini:1: switch 'SW_1_U1' matches 2 switches of the fabric (SW-1/U1, SW_1/U1) once '/' and '-' are read as '_'"
        );
        // A two-port host with both ports cabled has no single LID.
        let h4 = f.add_hca("H-4", 2).unwrap();
        f.connect(s3, 2, h4, 1, LinkSpec::default()).unwrap();
        f.connect(s3, 3, h4, 2, LinkSpec::default()).unwrap();
        let e = derive_lids(&d("**.SW_2_U1.pktfwd.fdbIndex = 0\n"), &f, 0).unwrap_err().to_string();
        assert!(e.contains("host 'H-4' has 2 cabled ports"), "{e}");
    }

    /// A ring of four 6-port switches with two single-port hosts each, one
    /// dual-homed host, random GUIDs; and random tables over its LIDs.
    fn random_case(seed: u64, lmc: u8) -> (Fabric, LidMap, ForwardingTables) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut f = Fabric::new();
        let mut guid = || rng.random::<u64>() & !0xff;
        let sws: Vec<NodeId> =
            (0..4).map(|i| f.add_node(NodeKind::Switch, format!("sw{i}"), 6, Some(guid())).unwrap()).collect();
        for i in 0..4 {
            f.connect(sws[i], 5, sws[(i + 1) % 4], 6, LinkSpec::default()).unwrap();
            for p in 1..=2 {
                let h = f.add_node(NodeKind::Hca, format!("h{i}{p}"), 1, Some(guid())).unwrap();
                f.connect(sws[i], p, h, 1, LinkSpec::default()).unwrap();
            }
        }
        let d = f.add_node(NodeKind::Hca, "dual", 2, Some(guid())).unwrap();
        f.connect(sws[0], 3, d, 1, LinkSpec::default()).unwrap();
        f.connect(sws[2], 3, d, 2, LinkSpec::default()).unwrap();
        let lids = LidMap::assign(&f, lmc).unwrap();
        let mut t = ForwardingTables::new(&f, lids.top_lid());
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        for (k, &sw) in sws.iter().enumerate() {
            for lid in 1..=lids.top_lid() {
                // Switch 0 routes every LID so that the dump names every owner.
                if k == 0 || rng.random_range(0..8) != 0 {
                    t.set(sw, lid, rng.random_range(0..=6));
                }
            }
        }
        (f, lids, t)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn lfts_dump_round_trips(seed in any::<u64>(), lmc in 0u8..=2) {
            let (f, lids, t) = random_case(seed, lmc);
            let text = opensm_lfts::write(&f, &lids, &t);
            let d = opensm_lfts::parse(&text, None).unwrap();
            let back = derive_lids(&d, &f, 0).unwrap();
            prop_assert_eq!(back.lmc(), lmc);
            prop_assert_eq!(back.top_lid(), lids.top_lid());
            for p in lids.ports() {
                prop_assert_eq!(back.of_port(p.end.node, p.end.port), Some(p));
            }
            let r = apply(&d, &f, &back).unwrap();
            prop_assert_eq!(&r.tables, &t);
            prop_assert!(r.notes.is_empty());
            // Writing again gives the same bytes.
            prop_assert_eq!(opensm_lfts::write(&f, &back, &r.tables), text);
        }

        #[test]
        fn ucast_routes_round_trips_with_given_lids(seed in any::<u64>(), lmc in 0u8..=2) {
            let (f, lids, mut t) = random_case(seed, lmc);
            let d = ucast_routes::parse(&ucast_routes::write(&f, &lids, &t), None).unwrap();
            let r = apply(&d, &f, &lids).unwrap();
            // The listing leaves out LID 0 and LIDs no port owns.
            for sw in f.switches() {
                for lid in 0..=lids.top_lid() {
                    if lids.owner(lid).is_none() && t.get(sw, lid).is_some() {
                        t.set(sw, lid, NO_PATH);
                    }
                }
            }
            prop_assert_eq!(&r.tables, &t);
        }
    }
}
