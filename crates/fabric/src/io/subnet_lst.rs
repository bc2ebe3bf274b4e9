//! OpenSM's `subnet.lst`: the subnet manager's dump of every active link, one
//! line per link direction, each end described in full:
//!
//! ```text
//! { SW Ports:08 SystemGUID:a22029083222f0ff NodeGUID:0002c90109fb0000 PortGUID:0002c90109fb0000
//!   VenID:000002C9 DevID:A87C0000 Rev:000000A0 {MT43132 Mellanox Technologies} LID:0002 PN:05 }
//!   { SW Ports:08 ... LID:000C PN:04 } PHY=4x LOG=ACT [SPD=5]
//! ```
//!
//! (one line in the file). Parsing follows IBDM's `IBFabric::parseSubnetLine`
//! (nmorey/ibutils `ibdm/ibdm/Fabric.cpp`): numbers are hex; `CA-SM` and
//! `SW-SM` mark the node the subnet manager runs on (OpenSM on an ibsim fabric
//! whose first node is a switch runs on that switch); lines whose logical state is not `ACT`, `INI` or `ARM`
//! describe links that are down and are skipped; the speed is the optional
//! `SPD=2.5|5|10` (lane Gb/s), SDR when absent.
//!
//! Nodes are keyed by NodeGUID and named like ibnetdiscover ids,
//! `S-<guid>` for switches and `H-<guid>` for CAs, with the braced text as the
//! description. The LIDs reported are each switch's (on port 0) and each CA
//! port's; the file gives no LMC, so LMC is 0. The two lines of a link must
//! agree; a port that two lines cable to different peers is an error.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::{Src, Topology, TopologyFormat};
use crate::error::FabricError;
use crate::fabric::{Fabric, LinkEnd, NodeId, NodeKind, PortNum};
use crate::rate::{LinkSpec, LinkSpeed, LinkWidth};

/// One `{ ... }` endpoint block.
#[derive(Debug)]
struct End {
    kind: NodeKind,
    num_ports: u8,
    system_guid: u64,
    node_guid: u64,
    description: String,
    lid: u16,
    port: PortNum,
}

/// Parses an OpenSM `subnet.lst`; `file` names it in messages.
pub fn parse_subnet_lst(text: &str, file: Option<&Path>) -> Result<Topology, FabricError> {
    let src = Src::new(file);
    let mut fabric = Fabric::new();
    let mut lids = Vec::new();
    // Per node: (line that introduced it); per port: (LID, line that gave it).
    let mut node_line: FxHashMap<NodeId, usize> = FxHashMap::default();
    let mut lid_of: FxHashMap<(NodeId, PortNum), (u16, usize)> = FxHashMap::default();
    // Per link: the line that created it and whether its reverse was seen.
    let mut listed: FxHashMap<(LinkEnd, LinkEnd), usize> = FxHashMap::default();
    let mut link_line: FxHashMap<crate::fabric::LinkId, usize> = FxHashMap::default();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        let mut c = Scan { rest: t };
        let a = c.end().map_err(|m| src.err(no, m))?;
        let b = c.end().map_err(|m| src.err(no, m))?;
        let width_tok = c.token().ok_or_else(|| src.err(no, "expected 'PHY=<width>' after the second '}'"))?;
        let width: LinkWidth = width_tok
            .strip_prefix("PHY=")
            .ok_or_else(|| src.err(no, format!("expected 'PHY=<width>', found '{width_tok}'")))?
            .parse()
            .map_err(|e: String| src.err(no, e))?;
        let state_tok = c.token().ok_or_else(|| src.err(no, "expected 'LOG=<state>' after PHY="))?;
        let state = state_tok
            .strip_prefix("LOG=")
            .ok_or_else(|| src.err(no, format!("expected 'LOG=<state>', found '{state_tok}'")))?;
        let speed = match c.token() {
            None => LinkSpeed::Sdr,
            Some(s) => s
                .strip_prefix("SPD=")
                .ok_or_else(|| src.err(no, format!("expected 'SPD=<speed>' or the end of the line, found '{s}'")))?
                .parse()
                .map_err(|e: String| src.err(no, e))?,
        };
        if let Some(extra) = c.token() {
            return Err(src.err(no, format!("unexpected '{extra}' at the end of the line")));
        }
        if !["ACT", "INI", "ARM"].iter().any(|s| state.starts_with(s)) {
            continue;
        }

        let mut ends = [LinkEnd { node: NodeId(0), port: 0 }; 2];
        for (k, e) in [&a, &b].into_iter().enumerate() {
            let name = format!("{}-{:016x}", if e.kind.is_switch() { 'S' } else { 'H' }, e.node_guid);
            let node = match fabric.node_by_name(&name) {
                Some(n) => {
                    let have = fabric.node(n);
                    if have.kind.is_switch() != e.kind.is_switch() || have.num_ports != e.num_ports {
                        return Err(src.err(
                            no,
                            format!(
                                "node {:#018x} is described differently than at line {} ({} with {} ports)",
                                e.node_guid,
                                node_line[&n],
                                have.kind.keyword(),
                                have.num_ports
                            ),
                        ));
                    }
                    n
                }
                None => {
                    let n =
                        fabric.add_node(e.kind, name, e.num_ports, Some(e.node_guid)).map_err(|x| x.at(src.at(no)))?;
                    fabric.set_description(n, e.description.clone());
                    fabric.set_system_guid(n, e.system_guid);
                    node_line.insert(n, no);
                    n
                }
            };
            if e.port == 0 || e.port > e.num_ports {
                return Err(src.err(
                    no,
                    format!(
                        "port {} is out of range for node {:#018x}, which has ports 1..={}",
                        e.port, e.node_guid, e.num_ports
                    ),
                ));
            }
            let lid_port = if e.kind.is_switch() { 0 } else { e.port };
            match lid_of.get(&(node, lid_port)) {
                Some(&(l, at)) if l != e.lid => {
                    return Err(src.err(
                        no,
                        format!(
                            "LID {:#06x} of node {:#018x} disagrees with LID {l:#06x} at line {at}",
                            e.lid, e.node_guid
                        ),
                    ))
                }
                Some(_) => {}
                None => {
                    lid_of.insert((node, lid_port), (e.lid, no));
                    if e.lid != 0 {
                        lids.push((node, lid_port, e.lid, 0));
                    }
                }
            }
            ends[k] = LinkEnd { node, port: e.port };
        }

        let [x, y] = ends;
        if let Some(prev) = listed.get(&(x, y)) {
            return Err(src.err(no, format!("this link direction is listed twice (first at line {prev})")));
        }
        listed.insert((x, y), no);
        let spec = LinkSpec::new(width, speed);
        match (fabric.peer(x.node, x.port), fabric.peer(y.node, y.port)) {
            (Some(px), Some(py)) if px == y && py == x => {
                // The reverse direction of a link already made: it must agree.
                let l = fabric.link_at(x.node, x.port).expect("peer implies a link");
                let have = fabric.link(l).spec;
                if (have.width, have.speed) != (width, speed) {
                    return Err(src.err(
                        no,
                        format!(
                            "this link is {}{} here but {}{} at line {}",
                            width, speed, have.width, have.speed, link_line[&l]
                        ),
                    ));
                }
            }
            (None, None) => {
                let l =
                    fabric.connect(x.node, x.port as u32, y.node, y.port as u32, spec).map_err(|e| e.at(src.at(no)))?;
                link_line.insert(l, no);
            }
            (px, py) => {
                let (end, peer) = match px {
                    Some(p) if p != y => (x, p),
                    _ => (y, py.expect("one side is cabled elsewhere")),
                };
                let l = fabric.link_at(end.node, end.port).expect("peer implies a link");
                return Err(src.err(
                    no,
                    format!(
                        "inconsistent link: port {} of {} is already cabled to port {} of {} (line {})",
                        end.port,
                        fabric.node(end.node).name,
                        peer.port,
                        fabric.node(peer.node).name,
                        link_line[&l]
                    ),
                ));
            }
        }
    }
    Ok(Topology { fabric, lids, format: TopologyFormat::SubnetLst })
}

/// Whitespace-token scanner over one line that also reads braced descriptions.
struct Scan<'a> {
    rest: &'a str,
}

impl<'a> Scan<'a> {
    fn token(&mut self) -> Option<&'a str> {
        let r = self.rest.trim_start();
        if r.is_empty() {
            return None;
        }
        let n = r.find(char::is_whitespace).unwrap_or(r.len());
        self.rest = &r[n..];
        Some(&r[..n])
    }

    fn field(&mut self, key: &str) -> Result<&'a str, String> {
        let t = self.token().ok_or_else(|| format!("expected '{key}<value>' but the line ended"))?;
        t.strip_prefix(key).ok_or_else(|| format!("expected '{key}<value>', found '{t}'"))
    }

    fn hex(&mut self, key: &str) -> Result<u64, String> {
        let v = self.field(key)?;
        u64::from_str_radix(v, 16).map_err(|_| format!("bad {key} value '{v}': expected hex digits"))
    }

    /// `{ <SW|SW-SM|CA|CA-SM> Ports:.. SystemGUID:.. NodeGUID:.. PortGUID:.. VenID:.. DevID:.. Rev:.. {desc} LID:.. PN:.. }`
    fn end(&mut self) -> Result<End, String> {
        match self.token() {
            Some("{") => {}
            Some(t) => return Err(format!("expected '{{' to open a port description, found '{t}'")),
            None => return Err("expected '{' to open a port description but the line ended".into()),
        }
        let kind = match self.token() {
            Some("SW" | "SW-SM") => NodeKind::Switch,
            Some("CA" | "CA-SM") => NodeKind::Hca,
            other => return Err(format!("expected SW, SW-SM, CA or CA-SM, found '{}'", other.unwrap_or(""))),
        };
        let ports = self.hex("Ports:")?;
        let num_ports = u8::try_from(ports)
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| format!("bad Ports:{ports:x}: expected 1..=ff"))?;
        let system_guid = self.hex("SystemGUID:")?;
        let node_guid = self.hex("NodeGUID:")?;
        self.hex("PortGUID:")?;
        self.hex("VenID:")?;
        self.hex("DevID:")?;
        self.hex("Rev:")?;
        // The description is free text in braces; it ends at the '}' that is followed by LID:.
        let r = self.rest.trim_start();
        let body = r.strip_prefix('{').ok_or("expected '{<node description>}' after Rev:")?;
        let close = body
            .match_indices('}')
            .map(|(i, _)| i)
            .find(|&i| body[i + 1..].trim_start().starts_with("LID:"))
            .ok_or("expected '}' and then LID: after the node description")?;
        let description = body[..close].to_string();
        self.rest = &body[close + 1..];
        let lid = self.hex("LID:")?;
        let lid = u16::try_from(lid).map_err(|_| format!("bad LID:{lid:x}: expected at most ffff"))?;
        let pn = self.hex("PN:")?;
        let port = u8::try_from(pn).map_err(|_| format!("bad PN:{pn:x}: expected at most ff"))?;
        match self.token() {
            Some("}") => {}
            other => {
                return Err(format!("expected '}}' to close the port description, found '{}'", other.unwrap_or("")))
            }
        }
        Ok(End { kind, num_ports, system_guid, node_guid, description, lid, port })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SW1: &str = "{ SW Ports:08 SystemGUID:00000000000000a0 NodeGUID:0000000000000100 PortGUID:0000000000000100 VenID:000002C9 DevID:A87C0000 Rev:000000A0 {MT43132 Mellanox Technologies} LID:0002 PN:05 }";
    const SW2: &str = "{ SW Ports:08 SystemGUID:00000000000000a0 NodeGUID:0000000000000200 PortGUID:0000000000000200 VenID:000002C9 DevID:0000 Rev:00000000 {MT43132 Mellanox Technologies} LID:000C PN:04 }";
    const CA: &str = "{ CA-SM Ports:02 SystemGUID:0000000000000303 NodeGUID:0000000000000300 PortGUID:0000000000000301 VenID:000002C9 DevID:5A440000 Rev:000000A1 {swlab225 HCA-1 (Topspin {x} HCA)} LID:003B PN:01 }";
    const SW1_P1: &str = "{ SW Ports:08 SystemGUID:00000000000000a0 NodeGUID:0000000000000100 PortGUID:0000000000000100 VenID:000002C9 DevID:A87C0000 Rev:000000A0 {MT43132 Mellanox Technologies} LID:0002 PN:01 }";

    fn parse(text: &str) -> Result<Topology, FabricError> {
        parse_subnet_lst(text, Some(Path::new("s.lst")))
    }

    #[test]
    fn both_directions_make_one_link() {
        let text = format!(
            "{SW1} {SW2} PHY=4x LOG=ACT\n{SW2} {SW1} PHY=4x LOG=ACT\n{CA} {SW1_P1} PHY=4x LOG=ACT SPD=5\n{SW1_P1} {CA} PHY=4x LOG=ACT SPD=5\n"
        );
        let t = parse(&text).unwrap();
        let f = &t.fabric;
        assert_eq!((f.switches().count(), f.cas().count(), f.links().len()), (2, 1, 2));
        let s1 = f.node_by_name("S-0000000000000100").unwrap();
        let s2 = f.node_by_name("S-0000000000000200").unwrap();
        let h = f.node_by_name("H-0000000000000300").unwrap();
        assert_eq!(f.peer(s1, 5), Some(LinkEnd { node: s2, port: 4 }));
        assert_eq!(f.node(s1).system_guid, 0xa0);
        assert_eq!(f.node(h).description, "swlab225 HCA-1 (Topspin {x} HCA)");
        let spec = f.link(f.link_at(h, 1).unwrap()).spec;
        assert_eq!((spec.width, spec.speed), (LinkWidth::X4, LinkSpeed::Ddr));
        assert_eq!(f.link(f.link_at(s1, 5).unwrap()).spec.speed, LinkSpeed::Sdr);
        assert_eq!(t.lids, vec![(s1, 0, 2, 0), (s2, 0, 0xc, 0), (h, 1, 0x3b, 0)]);
    }

    #[test]
    fn a_switch_running_the_sm_is_a_switch() {
        let sm_switch = SW1.replace("{ SW ", "{ SW-SM ");
        let t = parse(&format!("{sm_switch} {SW2} PHY=4x LOG=ACT\n{SW2} {sm_switch} PHY=4x LOG=ACT\n")).unwrap();
        let f = &t.fabric;
        assert_eq!((f.switches().count(), f.cas().count(), f.links().len()), (2, 0, 1));
        let s1 = f.node_by_name("S-0000000000000100").unwrap();
        assert_eq!(f.node(s1).kind, NodeKind::Switch);
        assert_eq!(t.lids[0], (s1, 0, 2, 0));
        let e = parse(&SW1.replace("{ SW ", "{ RT ")).unwrap_err().to_string();
        assert_eq!(e, "s.lst:1: expected SW, SW-SM, CA or CA-SM, found 'RT'");
    }

    #[test]
    fn down_links_are_skipped() {
        let t = parse(&format!("{SW1} {SW2} PHY=4x LOG=DWN\n")).unwrap();
        assert_eq!(t.fabric.num_nodes(), 0);
    }

    #[test]
    fn a_switch_listed_with_two_lids_is_an_error() {
        // A switch has one LID (port 0), whichever of its ports a line names.
        let sw1_other_lid = SW1_P1.replace("LID:0002", "LID:0003");
        let text = format!("{SW1} {SW2} PHY=4x LOG=ACT\n{sw1_other_lid} {CA} PHY=4x LOG=ACT SPD=5\n");
        let e = parse(&text).unwrap_err().to_string();
        assert!(e.contains("LID 0x0003 of node 0x0000000000000100 disagrees with LID 0x0002 at line 1"), "{e}");
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse(&format!("\n{SW1} {SW2} PHY=3x LOG=ACT\n")).unwrap_err().to_string();
        assert_eq!(e, "s.lst:2: unknown link width '3x' (expected 1x, 2x, 4x, 8x or 12x)");
        let e = parse("{ SW Ports:08 SystemGUID:zz\n").unwrap_err().to_string();
        assert_eq!(e, "s.lst:1: bad SystemGUID: value 'zz': expected hex digits");
        let e = parse(&format!("{SW1} {SW2} PHY=4x LOG=ACT\n{SW1} {SW2} PHY=4x LOG=ACT\n")).unwrap_err().to_string();
        assert_eq!(e, "s.lst:2: this link direction is listed twice (first at line 1)");
        let e = parse(&format!("{SW1} {SW2} PHY=4x LOG=ACT\n{SW2} {SW1} PHY=1x LOG=ACT\n")).unwrap_err().to_string();
        assert_eq!(e, "s.lst:2: this link is 1xSDR here but 4xSDR at line 1");
        let e = parse(&format!("{SW1} {SW2} PHY=4x LOG=ACT\n{CA} {SW2} PHY=4x LOG=ACT\n")).unwrap_err().to_string();
        assert_eq!(
            e,
            "s.lst:2: inconsistent link: port 4 of S-0000000000000200 is already cabled to port 5 of \
             S-0000000000000100 (line 1)"
        );
        let bad_port = SW2.replace("PN:04", "PN:09");
        let e = parse(&format!("{SW1} {bad_port} PHY=4x LOG=ACT\n")).unwrap_err().to_string();
        assert_eq!(e, "s.lst:1: port 9 is out of range for node 0x0000000000000200, which has ports 1..=8");
    }
}
