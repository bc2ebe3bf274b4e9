//! OpenSM's `dump_ucast_routes` listing (`opensm.fdbs`; `osm.fdbs` in older
//! OpenSM, and the copy ibdiagnet keeps): for each switch, every LID's output
//! port with its hop count and whether that is a shortest path.
//!
//! ```text
//! dump_ucast_routes: Switch 0x0002c90109fb0000
//! LID    : Port : Hops : Optimal
//! 0x0001 : 005  : 05   : yes
//! 0x0004 : UNREACHABLE
//! ```
//!
//! Written as `dump_ucast_routes` in opensm/osm_dump.c does: switches in OpenSM's
//! order, LIDs `1..=max LID`; `UNREACHABLE` for a LID no port owns or the table
//! does not route; `HOPS UNKNOWN` where the port cannot lead to the LID. Hops
//! are OpenSM's hop-matrix value for the chosen port: `1 +` the switch distance
//! from the neighbour behind the port to the switch owning (or attached to) the
//! LID, `0` for the switch's own LID, plus one for the last link when the LID is
//! a CA's; a CA on the switch itself counts 1 whichever port is used, as OpenSM
//! counts it. (This reproduces all 4030 hop counts of ibutils' `osm.fdbs` from
//! its `subnet.lst`; the older OpenSM behind ibdiagnet's copy printed 0 for a
//! CA on the switch itself.) A non-shortest entry reads `No <n> hop path
//! possible via port <p>!`, where OpenSM names the port its balancing would
//! choose and we name the lowest-numbered shortest port.
//!
//! Reading keeps the LID and port of each entry (`UNREACHABLE` as no port) and
//! checks the rest of the line only for shape. The listing does not say which
//! port owns a LID, so applying it needs the LIDs from elsewhere (see
//! [`super::derive_lids`]).

use std::fmt::Write as _;
use std::path::Path;

use ibnetsim_fabric::{Fabric, NodeId, PortNum};

use super::opensm_lfts::{hex_prefix, shorten};
use super::{lines, location, opensm_switch_order, DumpFormat, DumpSwitch, LftDump, Route, SwitchKey};
use crate::error::SmError;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap, MAX_UNICAST_LID};

/// Writes the tables as OpenSM's `dump_ucast_routes` listing.
pub fn write(fabric: &Fabric, lids: &LidMap, tables: &ForwardingTables) -> String {
    let hops = HopMatrix::new(fabric);
    let top = tables.top_lid();
    let mut out = String::new();
    for sw in opensm_switch_order(fabric) {
        // `fmt::Write` for `String` cannot fail.
        let _ =
            write!(out, "dump_ucast_routes: Switch 0x{:016x}\nLID    : Port : Hops : Optimal\n", fabric.node(sw).guid);
        for lid in 1..=top {
            let _ = write!(out, "0x{lid:04X} : ");
            let (Some(owner), Some(port)) = (lids.owner(lid), tables.get(sw, lid)) else {
                out.push_str("UNREACHABLE\n");
                continue;
            };
            // The switch a LID hangs off, and the extra CA link.
            let target = if fabric.node(owner.end.node).kind.is_switch() {
                Some((owner.end.node, 0))
            } else {
                fabric
                    .peer(owner.end.node, owner.end.port)
                    .filter(|p| fabric.node(p.node).kind.is_switch())
                    .map(|p| (p.node, 1))
            };
            let via = target.and_then(|(t, extra)| {
                let h = if extra == 1 && t == sw { Some(0) } else { hops.via(sw, port, t) };
                h.map(|h| (h + extra, hops.least(sw, t).map(|b| b + extra), t))
            });
            match via {
                None => {
                    let _ = writeln!(out, "{port:03}  : HOPS UNKNOWN");
                }
                Some((num, best, t)) => {
                    let _ = write!(out, "{port:03}  : {num:02}   : ");
                    match best {
                        Some(b) if b != num => {
                            let bp = hops.best_port(sw, t).unwrap_or(0);
                            let _ = writeln!(out, "No {b} hop path possible via port {bp}!");
                        }
                        _ => out.push_str("yes\n"),
                    }
                }
            }
        }
    }
    out
}

/// Switch-to-switch distances, as OpenSM's hop matrices hold them.
struct HopMatrix<'a> {
    fabric: &'a Fabric,
    /// Dense index of each switch (`u32::MAX` for CAs).
    index: Vec<u32>,
    /// `dist[t * n + s]`: links from switch `s` to switch `t`; `u16::MAX` if none.
    dist: Vec<u16>,
    n: usize,
}

impl<'a> HopMatrix<'a> {
    fn new(fabric: &'a Fabric) -> Self {
        let sws: Vec<NodeId> = fabric.switches().collect();
        let n = sws.len();
        let mut index = vec![u32::MAX; fabric.num_nodes()];
        for (i, s) in sws.iter().enumerate() {
            index[s.index()] = i as u32;
        }
        let adj: Vec<Vec<u32>> =
            sws.iter().map(|&s| fabric.switch_neighbors(s).map(|(_, p)| index[p.node.index()]).collect()).collect();
        let mut dist = vec![u16::MAX; n * n];
        let mut queue = Vec::with_capacity(n);
        for t in 0..n {
            let row = &mut dist[t * n..(t + 1) * n];
            row[t] = 0;
            queue.clear();
            queue.push(t as u32);
            let mut head = 0;
            while head < queue.len() {
                let u = queue[head] as usize;
                head += 1;
                for &v in &adj[u] {
                    if row[v as usize] == u16::MAX {
                        row[v as usize] = row[u] + 1;
                        queue.push(v);
                    }
                }
            }
        }
        HopMatrix { fabric, index, dist, n }
    }

    fn d(&self, from: NodeId, to: NodeId) -> Option<u32> {
        let (f, t) = (self.index[from.index()] as usize, self.index[to.index()] as usize);
        let v = self.dist[t * self.n + f];
        (v != u16::MAX).then_some(v as u32)
    }

    /// Hops from `sw` to switch `t` leaving by `port`.
    fn via(&self, sw: NodeId, port: PortNum, t: NodeId) -> Option<u32> {
        if port == 0 {
            return (sw == t).then_some(0);
        }
        let peer = self.fabric.peer(sw, port)?;
        if !self.fabric.node(peer.node).kind.is_switch() {
            return None;
        }
        self.d(peer.node, t).map(|h| h + 1)
    }

    /// Fewest hops from `sw` to switch `t`.
    fn least(&self, sw: NodeId, t: NodeId) -> Option<u32> {
        self.d(sw, t)
    }

    /// Lowest-numbered port on a shortest path from `sw` to `t`.
    fn best_port(&self, sw: NodeId, t: NodeId) -> Option<PortNum> {
        let best = self.least(sw, t)?;
        (0..=self.fabric.node(sw).num_ports).find(|&p| self.via(sw, p, t) == Some(best))
    }
}

/// Parses a `dump_ucast_routes` listing.
pub fn parse(text: &str, file: Option<&Path>) -> Result<LftDump, SmError> {
    let mut dump = LftDump {
        format: DumpFormat::UcastRoutes,
        file: file.map(Path::to_path_buf),
        switches: Vec::new(),
        owners: Vec::new(),
    };
    let mut first_line: rustc_hash::FxHashMap<u64, usize> = rustc_hash::FxHashMap::default();
    for (no, raw) in lines(text) {
        let err = |msg: String| SmError::parse(location(file, no), msg);
        let p = raw.trim();
        if p.is_empty() || p.starts_with('#') {
            continue;
        }
        if let Some(i) = p.find("dump_ucast_routes: Switch 0x") {
            let g = &p[i + 28..];
            let guid = hex_prefix(g)
                .filter(|(_, rest)| rest.trim().is_empty())
                .and_then(|(v, _)| u64::try_from(v).ok())
                .ok_or_else(|| err(format!("cannot parse switch GUID: '{}'", shorten(g))))?;
            if let Some(prev) = first_line.insert(guid, no) {
                return Err(err(format!("switch GUID {guid:#018x} already has a table at line {prev}")));
            }
            dump.switches.push(DumpSwitch {
                key: SwitchKey::Guid(guid),
                lid: None,
                at: location(file, no),
                range: None,
                routes: Vec::new(),
            });
        } else if let Some(rest) = p.strip_prefix("0x") {
            let route = parse_entry(rest, no as u32).map_err(err)?;
            let Some(cur) = dump.switches.last_mut() else {
                return Err(err("an entry before any 'dump_ucast_routes: Switch 0x<GUID>' header".into()));
            };
            cur.routes.push(route);
        } else if !(p.starts_with("LID") && p.contains("Port")) {
            return Err(err(format!(
                "expected a 'dump_ucast_routes: Switch 0x<GUID>' header, the 'LID : Port : Hops : Optimal' heading, \
                 or a '0x<LID> : <port> : <hops> : <optimal>' entry, found '{}'",
                shorten(p)
            )));
        }
    }
    Ok(dump)
}

/// `<hex LID> : <port> : <hops or HOPS UNKNOWN> ...` or `<hex LID> : UNREACHABLE`.
fn parse_entry(rest: &str, line: u32) -> Result<Route, String> {
    let bad = || {
        format!(
            "expected '0x<LID> : <port> : <hops> : <optimal>' or '0x<LID> : UNREACHABLE', found '0x{}'",
            shorten(rest)
        )
    };
    let (lid, after) = hex_prefix(rest).ok_or_else(bad)?;
    if lid > MAX_UNICAST_LID as u128 {
        return Err(format!("LID {lid:#x} is not a unicast LID (0x0001-0xbfff)"));
    }
    let lid = lid as Lid;
    let after = after.trim_start().strip_prefix(':').ok_or_else(bad)?.trim_start();
    if after == "UNREACHABLE" {
        return Ok(Route { lid, port: None, line });
    }
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let tail = after[digits..].trim_start();
    let tail = tail.strip_prefix(':').map(str::trim).unwrap_or("");
    if digits == 0 || tail.is_empty() {
        return Err(bad());
    }
    let port: u32 = after[..digits].parse().map_err(|_| bad())?;
    let port = u8::try_from(port)
        .ok()
        .filter(|&p| p != crate::lft::NO_PATH)
        .ok_or_else(|| format!("port {port} of LID {lid:#06x} is out of range (0..=254)"))?;
    Ok(Route { lid, port: Some(port), line })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lid::PortLid;
    use ibnetsim_fabric::{LinkEnd, LinkSpec, NodeKind};

    /// A line `a - b - c` of switches; host `ha` on a, `hc` on c; b's port 3 goes
    /// nowhere. LIDs: ha 1, hc 2, a 3, b 4, c 6; LID 5 is owned by nobody.
    fn line_fabric() -> (Fabric, LidMap, [NodeId; 3]) {
        let mut f = Fabric::new();
        let a = f.add_node(NodeKind::Switch, "a", 4, Some(0x100)).unwrap();
        let b = f.add_node(NodeKind::Switch, "b", 4, Some(0x200)).unwrap();
        let c = f.add_node(NodeKind::Switch, "c", 4, Some(0x300)).unwrap();
        let ha = f.add_node(NodeKind::Hca, "ha", 1, Some(0x1000)).unwrap();
        let hc = f.add_node(NodeKind::Hca, "hc", 1, Some(0x2000)).unwrap();
        let l = LinkSpec::default();
        f.connect(a, 1, ha, 1, l).unwrap();
        f.connect(c, 1, hc, 1, l).unwrap();
        f.connect(a, 2, b, 1, l).unwrap();
        f.connect(b, 2, c, 2, l).unwrap();
        f.connect(a, 4, c, 4, l).unwrap();
        let e = |node, port, base| PortLid { end: LinkEnd { node, port }, base, lmc: 0 };
        let lids =
            LidMap::from_entries(&f, 0, vec![e(ha, 1, 1), e(hc, 1, 2), e(a, 0, 3), e(b, 0, 4), e(c, 0, 6)]).unwrap();
        (f, lids, [a, b, c])
    }

    #[test]
    fn writes_hops_and_optimality_as_opensm() {
        let (f, lids, [a, b, c]) = line_fabric();
        let mut t = ForwardingTables::new(&f, lids.top_lid());
        // Switch a: hc the long way round (via b), b directly, c via the short link,
        // own LID on port 0, LID 5 (nobody's) routed anyway.
        for (lid, p) in [(1, 1), (2, 2), (3, 0), (4, 2), (5, 4), (6, 4)] {
            t.set(a, lid, p);
        }
        // Switch b: ha via its uncabled port 3; nothing else.
        t.set(b, 1, 3);
        // Switch c: ha via port 1, which leads to hc, not to a switch.
        t.set(c, 1, 1);
        let expected = "\
dump_ucast_routes: Switch 0x0000000000000100
LID    : Port : Hops : Optimal
0x0001 : 001  : 01   : yes
0x0002 : 002  : 03   : No 2 hop path possible via port 4!
0x0003 : 000  : 00   : yes
0x0004 : 002  : 01   : yes
0x0005 : UNREACHABLE
0x0006 : 004  : 01   : yes
dump_ucast_routes: Switch 0x0000000000000200
LID    : Port : Hops : Optimal
0x0001 : 003  : HOPS UNKNOWN
0x0002 : UNREACHABLE
0x0003 : UNREACHABLE
0x0004 : UNREACHABLE
0x0005 : UNREACHABLE
0x0006 : UNREACHABLE
dump_ucast_routes: Switch 0x0000000000000300
LID    : Port : Hops : Optimal
0x0001 : 001  : HOPS UNKNOWN
0x0002 : UNREACHABLE
0x0003 : UNREACHABLE
0x0004 : UNREACHABLE
0x0005 : UNREACHABLE
0x0006 : UNREACHABLE
";
        assert_eq!(write(&f, &lids, &t), expected);
    }

    #[test]
    fn round_trip_keeps_every_entry() {
        let (f, lids, [a, b, c]) = line_fabric();
        let mut t = ForwardingTables::new(&f, lids.top_lid());
        for (sw, lid, p) in [(a, 1, 1), (a, 2, 4), (b, 1, 1), (b, 6, 2), (c, 2, 1), (c, 3, 4)] {
            t.set(sw, lid, p);
        }
        let d = parse(&write(&f, &lids, &t), None).unwrap();
        assert_eq!(d.switches.len(), 3);
        let back = super::super::apply(&d, &f, &lids).unwrap().tables;
        assert_eq!(back, t);
    }

    #[test]
    fn parses_every_entry_shape() {
        let text = "\
osm_ucast_mgr_dump_ucast_routes: Switch 0x0008f10500200134
LID    : Port : Hops : Optimal
0x0001 : 000  : 00   : yes
0x0002 : UNREACHABLE
0x0003 : 004  : HOPS UNKNOWN
0x000A : 005  : 03   : No 2 hop path possible via port 7!
";
        let d = parse(text, None).unwrap();
        assert_eq!(d.switches[0].key, SwitchKey::Guid(0x0008_f105_0020_0134));
        let r: Vec<(Lid, Option<u8>, u32)> = d.switches[0].routes.iter().map(|r| (r.lid, r.port, r.line)).collect();
        assert_eq!(r, vec![(1, Some(0), 3), (2, None, 4), (3, Some(4), 5), (10, Some(5), 6)]);
    }

    fn err(text: &str) -> String {
        parse(text, Some(Path::new("opensm.fdbs"))).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_file_and_line() {
        let h = "dump_ucast_routes: Switch 0x0000000000000001\nLID    : Port : Hops : Optimal\n";
        assert_eq!(
            err("0x0001 : 000  : 00   : yes\n"),
            "opensm.fdbs:1: an entry before any 'dump_ucast_routes: Switch 0x<GUID>' header"
        );
        assert_eq!(err("dump_ucast_routes: Switch 0xabcz\n"), "opensm.fdbs:1: cannot parse switch GUID: 'abcz'");
        assert_eq!(
            err(&format!("{h}0x0001 : 004\n")),
            "opensm.fdbs:3: expected '0x<LID> : <port> : <hops> : <optimal>' or '0x<LID> : UNREACHABLE', found '0x0001 : 004'"
        );
        assert_eq!(
            err(&format!("{h}0x0001 : UNREACHABEL\n")),
            "opensm.fdbs:3: expected '0x<LID> : <port> : <hops> : <optimal>' or '0x<LID> : UNREACHABLE', found '0x0001 : UNREACHABEL'"
        );
        assert_eq!(
            err(&format!("{h}0x0001 : 300  : 01   : yes\n")),
            "opensm.fdbs:3: port 300 of LID 0x0001 is out of range (0..=254)"
        );
        assert_eq!(
            err(&format!("{h}0xC000 : 001  : 01   : yes\n")),
            "opensm.fdbs:3: LID 0xc000 is not a unicast LID (0x0001-0xbfff)"
        );
        assert!(err(&format!("{h}\n{h}"))
            .starts_with("opensm.fdbs:4: switch GUID 0x0000000000000001 already has a table at line 1"));
        assert!(err(&format!("{h}Switch 2\n"))
            .starts_with("opensm.fdbs:3: expected a 'dump_ucast_routes: Switch 0x<GUID>' header"));
    }
}
