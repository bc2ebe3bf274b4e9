//! OpenSM's `opensm-lid-matrix.dump`: the hop counts its unicast manager
//! worked with, read back and held against the fabric and the routes.
//!
//! The format is `dump_lid_matrix` in opensm/osm_dump.c. Per switch (in
//! OpenSM's switch order) a heading `"Switch: guid 0x%016" PRIx64`, then a row
//! per LID the switch has hop counts for: `"0x%04x:"`, `" %02x"` (hex) per
//! entry `0..num_ports` of `osm_switch_t.hops[lid]`, and, when a port owns
//! the LID, `" # portguid 0x%016" PRIx64`. OpenSM 3.3.23 keeps hop counts for
//! switch LIDs only (`ucast_mgr_process_hop_0_1`, `ucast_mgr_process_neighbor`
//! in opensm/osm_ucast_mgr.c), so those are the rows. Entry `p` (1..=ports) is
//! the hop count leaving by port `p`, `ff` where the port does not lead to a
//! switch; entry 0 is the least of them (`osm_switch_set_hops` keeps it so), 0
//! for the switch's own LID.
//!
//! Two comparisons ([`compare`]):
//!
//! * **The matrix against the fabric.** With OpenSM's default unit hop weights
//!   (no `hop_weights_file`), entry `p` is one more than the BFS distance from
//!   the switch behind port `p` ([`SwitchHops::port_hops`]). A row that differs,
//!   a switch LID without a row and a row whose LID no switch owns mean the
//!   matrix is from another fabric (or from weighted hops).
//! * **The routes against the matrix.** For every switch and every LID the
//!   tables route, the hop count of the chosen port, counted as OpenSM counts
//!   it for a CA LID (`osm_switch_get_port_least_hops`: 1 from the CA's own
//!   switch, else the count towards that switch plus one), against the least.
//!   Routes longer than the least are counted, with examples; engines such as
//!   up*/down* take them on purpose, so they are information, not defects.

use std::fmt;
use std::path::Path;

use ibnetsim_fabric::{Fabric, Location, NodeId, PortNum};
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::dump::opensm_lfts::shorten;
use crate::error::SmError;
use crate::hops::{attachment, SwitchHops};
use crate::lft::{ForwardingTables, NO_PATH};
use crate::lid::{Lid, LidMap};

/// OpenSM's "no path" hop count.
const NO_HOPS: u8 = 0xff;

/// Examples kept per kind of finding.
const EXAMPLES: usize = 5;

/// One row: a switch's hop counts towards a LID, entry 0 the least.
#[derive(Debug, Clone)]
struct Row {
    hops: Vec<u8>,
    line: usize,
}

/// The hop counts of an `opensm-lid-matrix.dump`, per switch and LID.
#[derive(Debug, Clone, Default)]
pub struct LidMatrix {
    rows: FxHashMap<(NodeId, Lid), Row>,
    switches: Vec<NodeId>,
}

impl LidMatrix {
    /// Hop counts of switch `sw` towards `lid` (entry 0 the least), if listed.
    pub fn hops(&self, sw: NodeId, lid: Lid) -> Option<&[u8]> {
        self.rows.get(&(sw, lid)).map(|r| r.hops.as_slice())
    }

    /// Switches with a heading, in file order.
    pub fn switches(&self) -> &[NodeId] {
        &self.switches
    }
}

/// Reads `opensm-lid-matrix.dump` for `fabric`.
pub fn read_lid_matrix(path: &Path, fabric: &Fabric) -> Result<LidMatrix, SmError> {
    let text = crate::error::read_text(path, "an OpenSM LID matrix dump")?;
    parse_lid_matrix(&text, Some(path), fabric)
}

/// Parses the text of an `opensm-lid-matrix.dump`; `file` names it in errors.
/// A heading naming no switch of the fabric, a row of the wrong length, a row
/// before any heading and a LID listed twice for a switch are errors naming
/// the line.
pub fn parse_lid_matrix(text: &str, file: Option<&Path>, fabric: &Fabric) -> Result<LidMatrix, SmError> {
    let at = |line: usize| Location::new(file.map(Path::to_path_buf), line);
    let mut m = LidMatrix::default();
    let mut current: Option<NodeId> = None;
    let mut heading_line: FxHashMap<NodeId, usize> = FxHashMap::default();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(g) = t.strip_prefix("Switch: guid ") {
            let guid = g
                .strip_prefix("0x")
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad(at(no), t, "a heading is 'Switch: guid 0x<switch GUID>'"))?;
            let sw = fabric
                .node_by_guid(guid)
                .filter(|&n| fabric.node(n).kind.is_switch() && fabric.node(n).guid == guid)
                .ok_or_else(|| {
                    SmError::parse(
                        at(no),
                        format!("no switch of the fabric has GUID {guid:#018x}: give the LID matrix of the same OpenSM run as the topology"),
                    )
                })?;
            if let Some(first) = heading_line.insert(sw, no) {
                return Err(SmError::parse(at(no), format!("switch '{}' has a second heading; the first is at line {first}", fabric.node(sw).name)));
            }
            m.switches.push(sw);
            current = Some(sw);
            continue;
        }
        let Some(sw) = current else {
            return Err(bad(at(no), t, "rows come after a 'Switch: guid 0x…' heading"));
        };
        let body = t.split('#').next().unwrap_or("");
        let (lid, counts) = body.split_once(':').ok_or_else(|| bad(at(no), t, ROW))?;
        let lid = lid
            .trim()
            .strip_prefix("0x")
            .and_then(|h| Lid::from_str_radix(h, 16).ok())
            .filter(|&l| l != 0)
            .ok_or_else(|| bad(at(no), t, ROW))?;
        let hops: Vec<u8> =
            counts.split_whitespace().map(|w| u8::from_str_radix(w, 16)).collect::<Result<_, _>>().map_err(|_| bad(at(no), t, ROW))?;
        let ports = fabric.node(sw).num_ports as usize;
        if hops.len() != ports + 1 {
            return Err(SmError::parse(
                at(no),
                format!(
                    "{} hop counts, but switch '{}' has ports 0..={ports}: OpenSM writes one count per port, port 0 (the least) first",
                    hops.len(),
                    fabric.node(sw).name
                ),
            ));
        }
        if let Some(first) = m.rows.insert((sw, lid), Row { hops, line: no }) {
            return Err(SmError::parse(at(no), format!("LID {lid:#06x} is listed twice for this switch, first at line {}", first.line)));
        }
    }
    Ok(m)
}

const ROW: &str = "a row is '0x<LID>:' then one two-digit hex hop count per port, port 0 first";

fn bad(at: Location, line: &str, expected: &str) -> SmError {
    SmError::parse(at, format!("cannot read '{}': {expected} (OpenSM's dump_lid_matrix format)", shorten(line)))
}

/// What [`compare`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LidMatrixReport {
    /// (switch, switch LID) rows compared with the fabric's own hop counts.
    pub rows_checked: u64,
    /// Rows that differ from the fabric's, switch LIDs without a row, and rows
    /// for LIDs no switch owns.
    pub rows_differing: u64,
    /// Up to five of them, as text.
    pub row_examples: Vec<String>,
    /// (switch, LID) table entries compared with the matrix's least hops.
    pub routes_checked: u64,
    /// Entries whose port takes more hops than the least.
    pub routes_longer: u64,
    /// Up to five of them, as text.
    pub route_examples: Vec<String>,
}

impl LidMatrixReport {
    /// Whether the matrix disagrees with the fabric (a warning: the inputs are
    /// not of one run).
    pub fn has_warnings(&self) -> bool {
        self.rows_differing > 0
    }
}

impl fmt::Display for LidMatrixReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LID matrix: {} of {} rows differ from the fabric's hop counts", self.rows_differing, self.rows_checked)?;
        writeln!(f, "{}", if self.rows_differing > 0 { " (not the matrix of this fabric?)" } else { "" })?;
        for e in &self.row_examples {
            writeln!(f, "  {e}")?;
        }
        writeln!(f, "  routes longer than the matrix's least: {} of {} table entries", self.routes_longer, self.routes_checked)?;
        for e in &self.route_examples {
            writeln!(f, "    {e}")?;
        }
        Ok(())
    }
}

/// Holds `matrix` against the fabric's own hop counts and the tables' routes
/// against the matrix (see the module documentation).
pub fn compare(fabric: &Fabric, lids: &LidMap, tables: &ForwardingTables, matrix: &LidMatrix) -> LidMatrixReport {
    let hops = SwitchHops::compute(fabric);
    let mut r = LidMatrixReport::default();
    let name = |n: NodeId| fabric.node(n).name.as_str();
    let differ = |r: &mut LidMatrixReport, text: String| {
        r.rows_differing += 1;
        if r.row_examples.len() < EXAMPLES {
            r.row_examples.push(text);
        }
    };
    for sw in fabric.switches() {
        for t in fabric.switches() {
            let Some(lid) = lids.switch_lid(t) else { continue };
            r.rows_checked += 1;
            let want = fabric_row(fabric, &hops, sw, t);
            match matrix.hops(sw, lid) {
                None => differ(&mut r, format!("{}: no row for LID {lid:#06x} (switch {})", name(sw), name(t))),
                Some(got) if got != want.as_slice() => {
                    let at = matrix.rows[&(sw, lid)].line;
                    let port = (0..want.len()).find(|&p| got[p] != want[p]).unwrap_or(0);
                    differ(
                        &mut r,
                        format!(
                            "{}: LID {lid:#06x} (switch {}), line {at}: port {port} has {:02x} hops, the fabric {:02x}",
                            name(sw),
                            name(t),
                            got[port],
                            want[port]
                        ),
                    )
                }
                Some(_) => {}
            }
        }
    }
    // Rows for LIDs that are not a switch's: from another numbering.
    let mut extra: Vec<(&(NodeId, Lid), &Row)> =
        matrix.rows.iter().filter(|((_, lid), _)| lids.owner(*lid).is_none_or(|o| o.end.port != 0)).collect();
    extra.sort_by_key(|(_, row)| row.line);
    for ((sw, lid), row) in extra {
        differ(&mut r, format!("{}: line {}: LID {lid:#06x} is no switch's LID", name(*sw), row.line));
    }

    for sw in fabric.switches() {
        for p in lids.ports() {
            for lid in p.lids() {
                let Some(out) = tables.get(sw, lid) else { continue };
                if out == NO_PATH {
                    continue;
                }
                let Some((via, least)) = route_hops(fabric, lids, matrix, sw, p.end, out) else { continue };
                r.routes_checked += 1;
                if via > least {
                    r.routes_longer += 1;
                    if r.route_examples.len() < EXAMPLES {
                        let via = if via == NO_HOPS as u16 { "no path".to_string() } else { format!("{via} hops") };
                        r.route_examples.push(format!("{}: LID {lid:#06x} by port {out}: {via}, the least is {least}", name(sw)));
                    }
                }
            }
        }
    }
    r
}

/// The row OpenSM's unicast manager would build for switch `t`'s LID at
/// switch `sw`, with unit hop weights.
fn fabric_row(fabric: &Fabric, hops: &SwitchHops, sw: NodeId, t: NodeId) -> Vec<u8> {
    let ports = fabric.node(sw).num_ports;
    let count = |h: Option<u16>| h.map_or(NO_HOPS, |h| h.min(NO_HOPS as u16 - 1) as u8);
    let mut row: Vec<u8> = (0..=ports).map(|p: PortNum| if p == 0 { NO_HOPS } else { count(hops.port_hops(fabric, sw, p, t)) }).collect();
    row[0] = if sw == t { 0 } else { row[1..].iter().copied().min().unwrap_or(NO_HOPS) };
    row
}

/// Hops of the route leaving `sw` by `out` towards port `dest`, and the
/// least, both from the matrix as OpenSM counts them; `None` when the matrix
/// has no row for the switch `dest` is or hangs off.
fn route_hops(fabric: &Fabric, lids: &LidMap, m: &LidMatrix, sw: NodeId, dest: ibnetsim_fabric::LinkEnd, out: PortNum) -> Option<(u16, u16)> {
    let from_row = |row: &[u8], extra: u16| {
        let via = row.get(out as usize).copied().unwrap_or(NO_HOPS);
        let via = if via == NO_HOPS { NO_HOPS as u16 } else { via as u16 + extra };
        (via, row[0] as u16 + extra)
    };
    if fabric.node(dest.node).kind.is_switch() {
        let row = m.hops(sw, lids.switch_lid(dest.node)?)?;
        return Some(from_row(row, 0));
    }
    let at = attachment(fabric, dest)?;
    if at.node == sw {
        // The CA hangs off this switch: 1 hop by its own port.
        return Some((if out == at.port { 1 } else { from_row(m.hops(sw, lids.switch_lid(sw)?)?, 1).0 }, 1));
    }
    Some(from_row(m.hops(sw, lids.switch_lid(at.node)?)?, 1))
}
