//! ibnetdiscover output and ibsim "net" files: one section per node, a header
//! line (`Switch 8 "sw1"`, `Ca 2 "h1"`) and one line per cabled port
//! (`[1] "h1"[1]`), links listed from both ends.
//!
//! The syntax is what linux-rdma/ibsim `ibsim/sim_net.c` reads and what
//! infiniband-diags `ibnetdiscover` prints:
//!
//! ```text
//! switchguid=0x8f10500200134(8f10500200134)
//! Switch  36 "S-0008f10500200134"   # "ibswitch" enhanced port 0 lid 1 lmc 0
//! [4]     "H-001e0bffff4cafc0"[1](1e0bffff4cafc1)   # "node2" lid 3 4xFDR
//!
//! caguid=0x1e0bffff4cafc0
//! Ca      2 "H-001e0bffff4cafc0"    # "node2"
//! [1](1e0bffff4cafc1)  "S-0008f10500200134"[4]  # lid 3 lmc 0 "ibswitch" lid 1 4xFDR
//! ```
//!
//! * Node GUIDs follow ibsim's rule, so that tables an OpenSM wrote while
//!   running on ibsim with the same file name the same ports: one counter per
//!   node kind, starting at 0x200000 for switches and 0x100000 for CAs and set
//!   by `switchguid=`/`caguid=` lines; a switch takes the counter as node and
//!   port GUID and steps it by one, a CA takes it as node GUID (port n is the
//!   node GUID plus n) and steps it by ports + 1. ibnetdiscover output has a
//!   GUID line before every node. `sysimgguid=` applies to the next node.
//! * The description is the quoted text after `#` on the header; the LID and
//!   LMC are a switch header's `lid N lmc M` (port 0) and a CA port line's
//!   leading `lid N lmc M`. LID 0 means "not assigned" and is not reported.
//! * Width and speed come from the comment's `4xQDR` and from ibsim's `w=`.
//!   `w=` is read as a lane count (`w=1|4|12`), as ibsim's example files
//!   document it; ibsim's code reads the value as a PortInfo LinkWidthEnabled
//!   bit mask, but then overrides it with the comment's width, which is why
//!   [`write_netfile`] always writes both.
//! * A link listed from both ends must agree; a port claimed by two different
//!   peers, a port listed twice, or a peer without a section of its own (which
//!   ibsim refuses) is an error naming the line. A link listed from one end
//!   only is accepted.
//! * `include <file>` (or `include "<file>"`) reads another file in place,
//!   relative to the including file. `do <command>` runs an ibsim console
//!   command in ibsim and is rejected here, as are ibsim's aliases (`@`),
//!   routers (`Rt`) and the global `width=`/`speed=`/`module=` settings.

use std::io::Write;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use super::{fill_guids, parse_c_number, read_text, Src, Topology, TopologyFormat};
use crate::error::{FabricError, Location};
use crate::fabric::{Fabric, NodeId, NodeKind, PortNum};
use crate::rate::{LinkSpec, LinkSpeed, LinkWidth};

/// Include files may nest this deep (ibsim has no limit, but a cycle must end).
const MAX_INCLUDE_DEPTH: usize = 16;

/// True for the words that start a line of a net file (used to sniff the format).
pub(crate) fn is_netfile_keyword(word: &str) -> bool {
    matches!(
        word,
        "Switch"
            | "Hca"
            | "Ca"
            | "Rt"
            | "switchguid"
            | "caguid"
            | "hcaguids"
            | "rtguid"
            | "sysimgguid"
            | "vendid"
            | "devid"
            | "include"
    )
}

/// ibsim's first switch GUID (`guids[SWITCH_NODE]` in `ibsim/sim_net.c`),
/// before any `switchguid=` line.
const IBSIM_SWITCH_GUID: u64 = 0x20_0000;
/// ibsim's first CA GUID, before any `caguid=` line.
const IBSIM_CA_GUID: u64 = 0x10_0000;

/// Parses ibnetdiscover output or an ibsim net file. `file` names the text in
/// error messages and anchors relative `include`s (the current directory is
/// used when it is `None`).
pub fn parse_netfile(text: &str, file: Option<&Path>) -> Result<Topology, FabricError> {
    parse_netfile_with(text, file, &super::ReadOptions::default())
}

/// As [`parse_netfile`], with the link width and speed of `opts` for cables
/// whose lines give none.
pub fn parse_netfile_with(text: &str, file: Option<&Path>, opts: &super::ReadOptions) -> Result<Topology, FabricError> {
    let mut p = Parser {
        next_switch_guid: Some(IBSIM_SWITCH_GUID),
        next_ca_guid: Some(IBSIM_CA_GUID),
        abs_switch_guid: IBSIM_SWITCH_GUID,
        abs_ca_guid: IBSIM_CA_GUID,
        ..Parser::default()
    };
    if let Some(f) = file {
        p.include_stack.push(f.to_path_buf());
    }
    p.feed(text, &Src::new(file))?;
    p.finish(opts)
}

/// One node section.
struct PNode {
    kind: NodeKind,
    name: String,
    num_ports: u8,
    guid: Option<u64>,
    system_guid: Option<u64>,
    description: Option<String>,
    loc: Location,
}

/// One port line: `node[port]` says it is cabled to `peer[peer_port]`.
struct Claim {
    node: usize,
    port: PortNum,
    peer: String,
    peer_port: u64,
    width: Option<LinkWidth>,
    speed: Option<LinkSpeed>,
    loc: Location,
}

#[derive(Default)]
struct Parser {
    nodes: Vec<PNode>,
    by_name: FxHashMap<String, usize>,
    claims: Vec<Claim>,
    lids: Vec<(usize, PortNum, u16, u8)>,
    /// Section that port lines currently belong to.
    cur: Option<usize>,
    /// ibsim's per-kind GUID counters (`switchguid=`, `caguid=`).
    next_switch_guid: Option<u64>,
    next_ca_guid: Option<u64>,
    /// Base of `switchguid+N` / `caguid+N` relative assignments.
    abs_switch_guid: u64,
    abs_ca_guid: u64,
    /// `sysimgguid=` for the next node only.
    pending_sysimg: Option<u64>,
    include_stack: Vec<PathBuf>,
}

impl Parser {
    fn feed(&mut self, text: &str, src: &Src) -> Result<(), FabricError> {
        for (i, raw) in text.lines().enumerate() {
            let no = i + 1;
            let t = raw.trim();
            if t.is_empty() {
                self.cur = None;
                continue;
            }
            if t.starts_with('#') {
                continue;
            }
            if t.starts_with('[') {
                let Some(node) = self.cur else {
                    return Err(src.err(
                        no,
                        "port line outside a node section: expected a 'Switch <ports> \"<id>\"' or \
                         'Ca <ports> \"<id>\"' header line before it",
                    ));
                };
                self.port_line(t, node, src, no)?;
                continue;
            }
            self.cur = None;
            if t.starts_with('@') {
                return Err(src.err(no, "ibsim port aliases ('@') are not supported"));
            }
            let word_len = t.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(t.len());
            let (word, rest) = t.split_at(word_len);
            match word {
                "Switch" => self.header(NodeKind::Switch, rest, src, no)?,
                "Hca" | "Ca" => self.header(NodeKind::Hca, rest, src, no)?,
                "Rt" => return Err(src.err(no, "routers ('Rt' nodes) are not supported")),
                "switchguid" => {
                    let v = guid_assignment(rest, self.abs_switch_guid, src, no, word)?;
                    self.abs_switch_guid = v.1;
                    self.next_switch_guid = Some(v.0);
                }
                "caguid" | "hcaguids" => {
                    let v = guid_assignment(rest, self.abs_ca_guid, src, no, word)?;
                    self.abs_ca_guid = v.1;
                    self.next_ca_guid = Some(v.0);
                }
                "sysimgguid" => self.pending_sysimg = Some(assignment(rest, src, no, word)?),
                // Vendor and device ids are not part of the model; check them and move on.
                "vendid" | "devid" => {
                    assignment(rest, src, no, word)?;
                }
                // ibsim's parser-debug switch has no effect on the fabric.
                "pdebug" => {}
                "include" => self.include(rest, src, no)?,
                "do" => {
                    return Err(src.err(
                        no,
                        format!(
                            "'do' runs an ibsim console command ('{}') while ibsim reads the file; \
                             ibnetsim does not run ibsim commands, so remove the line",
                            rest.trim()
                        ),
                    ))
                }
                "width" | "speed" | "extspeed" => {
                    return Err(src.err(
                        no,
                        format!(
                            "ibsim's global '{word}=' setting is not supported; give the width per \
                             port with 'w=' or as ibnetdiscover does ('# lid 3 4xQDR')"
                        ),
                    ))
                }
                "module" => return Err(src.err(no, "ibsim's 'module=' name prefixes are not supported")),
                "rtguid" => return Err(src.err(no, "routers ('rtguid=') are not supported")),
                _ => {
                    return Err(src.err(
                        no,
                        format!(
                            "unrecognised line '{t}': expected a node header ('Switch <ports> \"<id>\"' \
                             or 'Ca <ports> \"<id>\"'), a port line ('[<port>] \"<peer id>\"[<peer port>]'), \
                             a 'switchguid=/caguid=/sysimgguid=' line, 'include <file>', a '#' comment \
                             or a blank line"
                        ),
                    ))
                }
            }
        }
        // A section never continues into the file that included this one.
        self.cur = None;
        Ok(())
    }

    fn include(&mut self, rest: &str, src: &Src, no: usize) -> Result<(), FabricError> {
        let arg = rest.trim();
        let name = if let Some(q) = arg.strip_prefix('"') {
            q.strip_suffix('"').ok_or_else(|| src.err(no, "include: missing closing '\"' around the file name"))?
        } else {
            arg
        };
        if name.is_empty() {
            return Err(src.err(no, "include: expected a file name ('include <file>')"));
        }
        let base = src.file.as_deref().and_then(Path::parent).unwrap_or(Path::new(""));
        let path = base.join(name);
        let canon = path.canonicalize().unwrap_or_else(|_| path.clone());
        if self.include_stack.iter().any(|p| p.canonicalize().unwrap_or_else(|_| p.clone()) == canon) {
            let chain: Vec<String> = self.include_stack.iter().map(|p| p.display().to_string()).collect();
            return Err(src.err(no, format!("include cycle: {} includes {} again", chain.join(" -> "), path.display())));
        }
        if self.include_stack.len() >= MAX_INCLUDE_DEPTH {
            return Err(src.err(no, format!("includes nest deeper than {MAX_INCLUDE_DEPTH} files")));
        }
        let text = read_text(&path).map_err(|e| src.err(no, format!("include: {e}")))?;
        self.include_stack.push(path.clone());
        self.feed(&text, &Src { file: Some(path) })?;
        self.include_stack.pop();
        Ok(())
    }

    fn header(&mut self, kind: NodeKind, rest: &str, src: &Src, no: usize) -> Result<(), FabricError> {
        let mut c = Cursor::new(rest);
        c.skip_ws();
        let n = c
            .take_while(|ch| ch.is_ascii_alphanumeric())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| src.err(no, format!("expected the number of ports after '{}'", kind.keyword())))?;
        let num_ports = parse_c_number(n)
            .filter(|&v| (1..=255).contains(&v))
            .ok_or_else(|| src.err(no, format!("bad number of ports '{n}': expected 1..=255")))?
            as u8;
        c.skip_ws();
        let name =
            c.quoted().ok_or_else(|| src.err(no, "expected the node id in double quotes after the port count"))?;
        if name.is_empty() {
            return Err(src.err(no, "the node id is empty"));
        }
        let tail = c.rest().trim();
        let comment = match tail.strip_prefix('#') {
            Some(cm) => cm,
            None if tail.is_empty() => "",
            None => {
                return Err(
                    src.err(no, format!("unexpected text '{tail}' after the node id (a comment must start with '#')"))
                )
            }
        };
        if let Some(&first) = self.by_name.get(name) {
            return Err(src.err(no, format!("node '{name}' already has a section at {}", self.nodes[first].loc)));
        }
        let (description, after_desc) = header_description(comment);
        let idx = self.nodes.len();
        if kind.is_switch() {
            if let Some((lid, lmc)) = lid_lmc(after_desc, src, no)? {
                self.lids.push((idx, 0, lid, lmc));
            }
        }
        // A switch uses one GUID, a CA its node GUID plus one per port.
        let (counter, step) = match kind {
            NodeKind::Switch => (&mut self.next_switch_guid, 1),
            _ => (&mut self.next_ca_guid, num_ports as u64 + 1),
        };
        let guid = *counter;
        if let Some(g) = guid {
            *counter = Some(g.wrapping_add(step));
        }
        self.by_name.insert(name.to_string(), idx);
        self.nodes.push(PNode {
            kind,
            name: name.to_string(),
            num_ports,
            guid,
            system_guid: self.pending_sysimg.take(),
            description,
            loc: src.at(no),
        });
        self.cur = Some(idx);
        Ok(())
    }

    fn port_line(&mut self, t: &str, node: usize, src: &Src, no: usize) -> Result<(), FabricError> {
        let (kind, num_ports, node_name) = {
            let n = &self.nodes[node];
            (n.kind, n.num_ports, n.name.clone())
        };
        let mut c = Cursor::new(t);
        let port = c
            .bracketed_number()
            .ok_or_else(|| src.err(no, "expected '[<port>]' at the start of the port line, e.g. '[1] \"peer\"[1]'"))?;
        if port == 0 || port > num_ports as u64 {
            let what = if port == 0 && kind.is_switch() {
                "port 0 is the switch's management port and cannot be cabled".to_string()
            } else {
                format!("port {port} is out of range for node '{node_name}', which has ports 1..={num_ports}")
            };
            return Err(src.err(no, what));
        }
        let port = port as PortNum;
        c.skip_port_extras().map_err(|m| src.err(no, m))?;
        c.skip_ws();
        let peer = c
            .quoted()
            .ok_or_else(|| src.err(no, "expected the peer's id in double quotes after the port"))?
            .to_string();
        c.skip_ws();
        let peer_port =
            c.bracketed_number().ok_or_else(|| src.err(no, format!("expected '[<peer port>]' after \"{peer}\"")))?;
        c.skip_port_extras().map_err(|m| src.err(no, m))?;
        let tail = c.rest();
        let (opts, comment) = match tail.find('#') {
            Some(i) => (&tail[..i], &tail[i + 1..]),
            None => (tail, ""),
        };
        let mut width = None;
        for opt in opts.split_whitespace() {
            match opt.split_once('=') {
                Some(("w", v)) => {
                    let lanes = parse_c_number(v).unwrap_or(0);
                    let w = u32::try_from(lanes).ok().and_then(LinkWidth::from_lanes).ok_or_else(|| {
                        src.err(no, format!("bad link width 'w={v}': expected w=1, 2, 4, 8 or 12 (lanes)"))
                    })?;
                    width = Some(w);
                }
                Some((k @ ("s" | "e"), _)) => {
                    return Err(src.err(
                        no,
                        format!(
                            "ibsim's '{k}=' speed mask is not supported; give the speed as ibnetdiscover \
                             does, in the comment ('# lid 3 4xQDR')"
                        ),
                    ))
                }
                _ => {
                    return Err(src
                        .err(no, format!("unexpected '{opt}' on a port line: expected 'w=<lanes>' or a '#' comment")))
                }
            }
        }
        let (own_part, peer_part) = split_comment(comment);
        if kind.is_ca() {
            if let Some((lid, lmc)) = lid_lmc(own_part, src, no)? {
                self.lids.push((node, port, lid, lmc));
            }
        }
        let mut speed = None;
        if let Some((w, s)) = comment_rate(peer_part).map_err(|m| src.err(no, m))? {
            if let Some(given) = width.filter(|&g| g != w) {
                return Err(src.err(no, format!("w={} disagrees with the comment's {}{}", given.lanes(), w, s)));
            }
            width = Some(w);
            speed = Some(s);
        }
        self.claims.push(Claim { node, port, peer, peer_port, width, speed, loc: src.at(no) });
        Ok(())
    }

    fn finish(self, opts: &super::ReadOptions) -> Result<Topology, FabricError> {
        let guids = fill_guids(&self.nodes.iter().map(|n| n.guid).collect::<Vec<_>>());
        let mut fabric = Fabric::new();
        for (n, &guid) in self.nodes.iter().zip(&guids) {
            let id =
                fabric.add_node(n.kind, n.name.clone(), n.num_ports, Some(guid)).map_err(|e| e.at(n.loc.clone()))?;
            if let Some(d) = &n.description {
                fabric.set_description(id, d.clone());
            }
            if let Some(s) = n.system_guid {
                fabric.set_system_guid(id, s);
            }
        }

        // Pair the two listings of each link; every port may belong to one link only.
        struct PLink {
            ends: [(usize, PortNum); 2],
            width: Option<(LinkWidth, usize)>,
            speed: Option<(LinkSpeed, usize)>,
            /// Which claim listed each end, if any.
            listed: [Option<usize>; 2],
        }
        let mut links: Vec<PLink> = Vec::new();
        let mut link_of: FxHashMap<(usize, PortNum), usize> = FxHashMap::default();
        for (ci, c) in self.claims.iter().enumerate() {
            let Some(&peer) = self.by_name.get(&c.peer) else {
                return Err(FabricError::parse(
                    c.loc.clone(),
                    format!(
                        "unknown node \"{}\": no 'Switch' or 'Ca' section defines it (ibsim needs a section \
                         for every node a port line names)",
                        c.peer
                    ),
                ));
            };
            let pn = &self.nodes[peer];
            if c.peer_port == 0 || c.peer_port > pn.num_ports as u64 {
                return Err(FabricError::parse(
                    c.loc.clone(),
                    format!(
                        "port {} is out of range for node '{}', which has ports 1..={} (section at {})",
                        c.peer_port, pn.name, pn.num_ports, pn.loc
                    ),
                ));
            }
            let a = (c.node, c.port);
            let b = (peer, c.peer_port as PortNum);
            if a == b {
                return Err(FabricError::parse(
                    c.loc.clone(),
                    format!("port {} of '{}' is cabled to itself", c.port, self.nodes[c.node].name),
                ));
            }
            let describe = |l: &PLink| {
                let first = l.listed.iter().flatten().next().expect("a link is created by a claim");
                let fc = &self.claims[*first];
                format!("'{}'[{}] by {}", fc.peer, fc.peer_port, fc.loc)
            };
            let li = match (link_of.get(&a).copied(), link_of.get(&b).copied()) {
                (None, None) => {
                    links.push(PLink { ends: [a, b], width: None, speed: None, listed: [None, None] });
                    link_of.insert(a, links.len() - 1);
                    link_of.insert(b, links.len() - 1);
                    links.len() - 1
                }
                (Some(x), Some(y)) if x == y => x,
                (Some(x), _) => {
                    let l = &links[x];
                    let other = if l.ends[0] == a { l.ends[1] } else { l.ends[0] };
                    return Err(FabricError::parse(
                        c.loc.clone(),
                        format!(
                            "inconsistent link: this line cables port {} of '{}' to '{}'[{}], but it is \
                             already cabled to '{}'[{}] ({})",
                            c.port,
                            self.nodes[c.node].name,
                            c.peer,
                            c.peer_port,
                            self.nodes[other.0].name,
                            other.1,
                            describe(l)
                        ),
                    ));
                }
                (None, Some(y)) => {
                    let l = &links[y];
                    let other = if l.ends[0] == b { l.ends[1] } else { l.ends[0] };
                    return Err(FabricError::parse(
                        c.loc.clone(),
                        format!(
                            "inconsistent link: port {} of '{}' is already cabled to '{}'[{}] ({})",
                            c.peer_port,
                            c.peer,
                            self.nodes[other.0].name,
                            other.1,
                            describe(l)
                        ),
                    ));
                }
            };
            let l = &mut links[li];
            let side = usize::from(l.ends[0] != a);
            if let Some(prev) = l.listed[side] {
                return Err(FabricError::parse(
                    c.loc.clone(),
                    format!(
                        "port {} of '{}' is listed twice (first at {})",
                        c.port, self.nodes[c.node].name, self.claims[prev].loc
                    ),
                ));
            }
            l.listed[side] = Some(ci);
            if let Some(w) = c.width {
                match l.width {
                    Some((pw, pc)) if pw != w => {
                        return Err(FabricError::parse(
                            c.loc.clone(),
                            format!("link width {w} disagrees with {pw} given at {}", self.claims[pc].loc),
                        ))
                    }
                    _ => l.width = Some((w, ci)),
                }
            }
            if let Some(s) = c.speed {
                match l.speed {
                    Some((ps, pc)) if ps != s => {
                        return Err(FabricError::parse(
                            c.loc.clone(),
                            format!("link speed {s} disagrees with {ps} given at {}", self.claims[pc].loc),
                        ))
                    }
                    _ => l.speed = Some((s, ci)),
                }
            }
        }
        let base = LinkSpec {
            width: opts.link_width.unwrap_or(LinkSpec::default().width),
            speed: opts.link_speed.unwrap_or(LinkSpec::default().speed),
            ..LinkSpec::default()
        };
        for l in &links {
            let mut spec = base;
            if let Some((w, _)) = l.width {
                spec.width = w;
            }
            if let Some((s, _)) = l.speed {
                spec.speed = s;
            }
            let [(a, pa), (b, pb)] = l.ends;
            fabric.connect(NodeId(a as u32), pa as u32, NodeId(b as u32), pb as u32, spec)?;
        }
        let lids = self.lids.iter().map(|&(n, p, lid, lmc)| (NodeId(n as u32), p, lid, lmc)).collect();
        Ok(Topology { fabric, lids, format: TopologyFormat::NetFile })
    }
}

/// `=<value>` of a `key=value` line.
fn assignment(rest: &str, src: &Src, no: usize, key: &str) -> Result<u64, FabricError> {
    let v = rest.trim_start().strip_prefix('=').ok_or_else(|| src.err(no, format!("expected '{key}=<value>'")))?;
    number_with_echo(v.trim())
        .ok_or_else(|| src.err(no, format!("bad value '{}' for {key}: expected a number", v.trim())))
}

/// `switchguid=G` (absolute) or `switchguid+N` (relative to the last absolute
/// one, as ibsim's `parse_guidbase`). Returns (guid, new absolute base).
fn guid_assignment(rest: &str, abs: u64, src: &Src, no: usize, key: &str) -> Result<(u64, u64), FabricError> {
    let r = rest.trim_start();
    if let Some(v) = r.strip_prefix('+') {
        let off = number_with_echo(v.trim())
            .ok_or_else(|| src.err(no, format!("bad value '{}' for {key}+: expected a number", v.trim())))?;
        return Ok((abs.wrapping_add(off), abs));
    }
    let g = assignment(rest, src, no, key)?;
    Ok((g, g))
}

/// A number, optionally followed by ibnetdiscover's echo of it in hex:
/// `0x8f10500200134(8f10500200134)`.
fn number_with_echo(v: &str) -> Option<u64> {
    match v.split_once('(') {
        Some((num, echo)) => {
            let echo = echo.strip_suffix(')')?;
            u64::from_str_radix(echo, 16).ok()?;
            parse_c_number(num.trim())
        }
        None => parse_c_number(v),
    }
}

/// Description of a header comment and the text after it: quoted text, or as
/// ibsim, everything up to ` enhanced port `/` base port `/` lid `/` lmc `.
fn header_description(comment: &str) -> (Option<String>, &str) {
    let c = comment.trim_start();
    if c.is_empty() {
        return (None, "");
    }
    if let Some(q) = c.strip_prefix('"') {
        if let Some(end) = q.find('"') {
            return (Some(q[..end].to_string()), &q[end + 1..]);
        }
        return (Some(q.to_string()), "");
    }
    let cut = [" enhanced port ", " base port ", " lid ", " lmc "].iter().filter_map(|m| c.find(m)).min();
    match cut {
        Some(i) => (Some(c[..i].to_string()), &c[i..]),
        None => (Some(c.trim_end().to_string()), ""),
    }
}

/// Splits a port comment at its quoted peer description: the part before
/// (a CA's own `lid N lmc M`) and the part after (`lid N 4xQDR`). Without
/// quotes, the whole comment is both.
fn split_comment(comment: &str) -> (&str, &str) {
    match comment.find('"') {
        Some(i) => match comment[i + 1..].find('"') {
            Some(j) => (&comment[..i], &comment[i + 1 + j + 1..]),
            None => (&comment[..i], ""),
        },
        None => (comment, comment),
    }
}

/// `lid N` and optional `lmc M` in a comment; `None` when there is no LID or it is 0.
fn lid_lmc(text: &str, src: &Src, no: usize) -> Result<Option<(u16, u8)>, FabricError> {
    let toks: Vec<&str> = text.split_whitespace().collect();
    let value = |key: &str| toks.iter().position(|t| *t == key).and_then(|i| toks.get(i + 1)).copied();
    let Some(l) = value("lid") else { return Ok(None) };
    let lid = parse_c_number(l)
        .and_then(|v| u16::try_from(v).ok())
        .ok_or_else(|| src.err(no, format!("bad LID '{l}': expected 0..=65535")))?;
    let lmc = match value("lmc") {
        Some(m) => parse_c_number(m)
            .filter(|&v| v <= 7)
            .ok_or_else(|| src.err(no, format!("bad LMC '{m}': expected 0..=7")))? as u8,
        None => 0,
    };
    Ok((lid != 0).then_some((lid, lmc)))
}

/// The last `lid N <width>x<speed>` in a comment, as ibsim's
/// `parse_port_link_width_and_speed` reads it.
fn comment_rate(text: &str) -> Result<Option<(LinkWidth, LinkSpeed)>, String> {
    let toks: Vec<&str> = text.split_whitespace().collect();
    for i in (0..toks.len().saturating_sub(2)).rev() {
        if toks[i] != "lid" || parse_c_number(toks[i + 1]).is_none() {
            continue;
        }
        let t = toks[i + 2];
        let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        if digits == 0 || !t[digits..].starts_with(['x', 'X']) {
            continue;
        }
        let bad = || format!("bad link rate '{t}' in the comment: expected e.g. 4xQDR or 12xSDR");
        let lanes: u32 = t[..digits].parse().map_err(|_| bad())?;
        let w = LinkWidth::from_lanes(lanes).ok_or_else(bad)?;
        let s: LinkSpeed = t[digits + 1..].parse().map_err(|_| bad())?;
        return Ok(Some((w, s)));
    }
    Ok(None)
}

/// A tiny byte cursor over one line.
struct Cursor<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Cursor { s, i: 0 }
    }
    fn rest(&self) -> &'a str {
        &self.s[self.i..]
    }
    fn skip_ws(&mut self) {
        let r = self.rest();
        self.i += r.len() - r.trim_start().len();
    }
    fn take_while(&mut self, f: impl Fn(char) -> bool) -> Option<&'a str> {
        let r = self.rest();
        let n = r.find(|c: char| !f(c)).unwrap_or(r.len());
        self.i += n;
        Some(&r[..n])
    }
    /// `"text"` → `text`.
    fn quoted(&mut self) -> Option<&'a str> {
        let r = self.rest().strip_prefix('"')?;
        let end = r.find('"')?;
        self.i += end + 2;
        Some(&r[..end])
    }
    /// `[N]` → N.
    fn bracketed_number(&mut self) -> Option<u64> {
        let r = self.rest().strip_prefix('[')?;
        let end = r.find(']')?;
        let v = parse_c_number(r[..end].trim())?;
        self.i += end + 2;
        Some(v)
    }
    /// ibnetdiscover's `(portguid)` and `[ext N]` after a port number.
    fn skip_port_extras(&mut self) -> Result<(), String> {
        loop {
            let r = self.rest();
            if let Some(g) = r.strip_prefix('(') {
                let end = g.find(')').ok_or("missing ')' after a port GUID")?;
                u64::from_str_radix(g[..end].trim(), 16)
                    .map_err(|_| format!("bad port GUID '({})': expected hex digits", &g[..end]))?;
                self.i += end + 2;
            } else if r.starts_with("[ext") {
                let end = r.find(']').ok_or("missing ']' after '[ext'")?;
                self.i += end + 1;
            } else {
                return Ok(());
            }
        }
    }
}

/// Writes `fabric` as ibnetdiscover output that ibsim accepts and
/// [`parse_netfile`] reads back to the same fabric.
///
/// Node names are the quoted ids; every link is listed from both ends with
/// `w=<lanes>` and an ibnetdiscover comment carrying the width and speed
/// (`# "desc" lid 3 4xQDR`). `lids` gives `(node, port, base LID, LMC)`; a
/// switch's LID is looked up on its port 0, a CA's on each port; unknown LIDs
/// are written as 0 ("not assigned"). Cable length is not part of the format.
/// A `"` in a description is written as `'` (the format has no escape). ibsim
/// looks for `w=`/`s=`/`e=` options anywhere on a port line, comment included,
/// so a description containing such text confuses ibsim (not this reader).
/// Fails if a node name contains `"`, `#`, `@` or a control character, which
/// cannot appear in an ibsim id.
pub fn write_netfile(
    fabric: &Fabric,
    lids: Option<&[(NodeId, PortNum, u16, u8)]>,
    mut w: impl Write,
) -> Result<(), FabricError> {
    for n in fabric.nodes() {
        if n.name.is_empty() || n.name.chars().any(|c| matches!(c, '"' | '#' | '@') || c.is_control()) {
            return Err(FabricError::param(
                "node name",
                format!(
                    "'{}' cannot be written as an ibsim node id ('\"', '#', '@' and control characters are reserved)",
                    n.name
                ),
            ));
        }
    }
    let lid_of: FxHashMap<(NodeId, PortNum), (u16, u8)> =
        lids.unwrap_or(&[]).iter().map(|&(n, p, l, m)| ((n, p), (l, m))).collect();
    // The LID a peer answers to: a switch's port 0, or the CA port itself.
    let addr = |n: NodeId, p: PortNum| -> (u16, u8) {
        let p = if fabric.node(n).kind.is_switch() { 0 } else { p };
        lid_of.get(&(n, p)).copied().unwrap_or((0, 0))
    };
    let desc = |n: NodeId| -> String {
        fabric
            .node(n)
            .description
            .chars()
            .map(|c| {
                if c == '"' {
                    '\''
                } else if c.is_control() {
                    ' '
                } else {
                    c
                }
            })
            .collect()
    };
    let io = |source| FabricError::Io { path: PathBuf::from("<netfile output>"), source };
    let mut out = String::new();
    out.push_str("#\n# Topology file: written by ibnetsim in ibnetdiscover format\n#\n");
    for id in fabric.ids() {
        let n = fabric.node(id);
        out.push('\n');
        out.push_str(&format!("sysimgguid={:#x}\n", n.system_guid));
        if n.kind.is_switch() {
            let (lid, lmc) = addr(id, 0);
            out.push_str(&format!("switchguid={:#x}({:x})\n", n.guid, n.guid));
            out.push_str(&format!(
                "Switch\t{} \"{}\"\t\t# \"{}\" enhanced port 0 lid {} lmc {}\n",
                n.num_ports,
                n.name,
                desc(id),
                lid,
                lmc
            ));
        } else {
            out.push_str(&format!("caguid={:#x}\n", n.guid));
            out.push_str(&format!("Ca\t{} \"{}\"\t\t# \"{}\"\n", n.num_ports, n.name, desc(id)));
        }
        for (port, link) in n.connected_ports() {
            let peer = fabric.peer(id, port).expect("a connected port has a peer");
            let pn = fabric.node(peer.node);
            let spec = fabric.link(link).spec;
            let (peer_lid, _) = addr(peer.node, peer.port);
            let rate = format!("{}x{}", spec.width.lanes(), spec.speed.name());
            if n.kind.is_switch() {
                let peer_guid =
                    if pn.kind.is_ca() { format!("({:x}) ", pn.port_guid(peer.port)) } else { String::new() };
                out.push_str(&format!(
                    "[{}]\t\"{}\"[{}]{}\tw={}\t\t# \"{}\" lid {} {}\n",
                    port,
                    pn.name,
                    peer.port,
                    peer_guid,
                    spec.width.lanes(),
                    desc(peer.node),
                    peer_lid,
                    rate
                ));
            } else {
                let (lid, lmc) = addr(id, port);
                out.push_str(&format!(
                    "[{}]({:x}) \t\"{}\"[{}]\tw={}\t\t# lid {} lmc {} \"{}\" lid {} {}\n",
                    port,
                    n.port_guid(port),
                    pn.name,
                    peer.port,
                    spec.width.lanes(),
                    lid,
                    lmc,
                    desc(peer.node),
                    peer_lid,
                    rate
                ));
            }
        }
    }
    w.write_all(out.as_bytes()).map_err(io)?;
    w.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::LinkEnd;

    const NET: &str = "# two switches\n\
Switch\t8 \"Switch1\"\n\
[1]\t\"Hca1\"[1]\n\
[2]\t\"Hca2\"[2]\tw=4\n\
[3]\t\"Switch2\"[3]\n\
[4]\t\"Switch2\"[4]\n\
\n\
Switch 8 \"Switch2\"\n\
[3]\t\"Switch1\"[3]\n\
[4]\t\"Switch1\"[4]\n\
\n\
Hca\t2 \"Hca1\"\n\
[1]\t\"Switch1\"[1]\n\
\n\
Hca\t2 \"Hca2\"\n\
[2]\t\"Switch1\"[2]\tw=4\n";

    fn err(text: &str) -> String {
        parse_netfile(text, Some(Path::new("t.net"))).unwrap_err().to_string()
    }

    #[test]
    fn without_guid_lines_guids_follow_ibsims_counters() {
        // ibsim: switches from 0x200000 one GUID each, CAs from 0x100000
        // ports + 1 each; a `caguid=` line restarts the CA counter.
        let text = "Switch 4 \"s1\"\n[1] \"h1\"[1]\n[2] \"s2\"[1]\n\n\
                    Switch 4 \"s2\"\n[1] \"s1\"[2]\n[2] \"h2\"[1]\n\n\
                    Ca 2 \"h1\"\n[1] \"s1\"[1]\n\n\
                    caguid=0x500\nCa 1 \"h2\"\n[1] \"s2\"[2]\n";
        let t = parse_netfile(text, None).unwrap();
        let f = &t.fabric;
        let guid = |n: &str| f.node(f.node_by_name(n).unwrap()).guid;
        assert_eq!((guid("s1"), guid("s2"), guid("h1"), guid("h2")), (0x200000, 0x200001, 0x100000, 0x500));
        let h1 = f.node(f.node_by_name("h1").unwrap());
        assert_eq!((h1.port_guid(1), h1.port_guid(2)), (0x100001, 0x100002));
        assert_eq!(f.node(f.node_by_name("s2").unwrap()).port_guid(2), 0x200001);
    }

    #[test]
    fn ibsims_parser_debug_switch_is_accepted_and_changes_nothing() {
        let text = "pdebug\nSwitch 4 \"s1\"\n[1] \"h1\"[1]\n\nCa 1 \"h1\"\n[1] \"s1\"[1]\n";
        let t = parse_netfile(text, None).unwrap();
        assert_eq!((t.fabric.num_nodes(), t.fabric.links().len()), (2, 1));
    }

    #[test]
    fn a_comment_right_after_the_peer_port_is_read() {
        // Nothing requires a space before '#'; the rate is in the comment.
        let text = "Switch 4 \"s1\"\n[1] \"h1\"[1]# \"h1\" lid 3 4xQDR\n\n\
                    Ca 1 \"h1\"\n[1] \"s1\"[1]# lid 3 lmc 0 \"s1\" lid 1 4xQDR\n";
        let f = parse_netfile(text, None).unwrap().fabric;
        let s1 = f.node_by_name("s1").unwrap();
        let spec = f.link(f.link_at(s1, 1).unwrap()).spec;
        assert_eq!((spec.width, spec.speed), (LinkWidth::X4, LinkSpeed::Qdr));
    }

    #[test]
    fn ibsim_subset() {
        let t = parse_netfile(NET, None).unwrap();
        let f = &t.fabric;
        assert_eq!(f.num_nodes(), 4);
        assert_eq!(f.links().len(), 4);
        assert_eq!(f.switches().count(), 2);
        let s1 = f.node_by_name("Switch1").unwrap();
        let h2 = f.node_by_name("Hca2").unwrap();
        assert_eq!(f.peer(s1, 2), Some(LinkEnd { node: h2, port: 2 }));
        assert_eq!(f.link(f.link_at(s1, 2).unwrap()).spec.width, LinkWidth::X4);
        assert_eq!(f.link(f.link_at(s1, 1).unwrap()).spec, LinkSpec::default());
        assert_eq!(f.node(s1).description, "Switch1");
        assert!(t.lids.is_empty());
    }

    #[test]
    fn ibnetdiscover_output() {
        let text = "vendid=0x8f1\ndevid=0x5a5a\nsysimgguid=0x8f10500200135\n\
switchguid=0x8f10500200134(8f10500200134)\n\
Switch\t36 \"S-0008f10500200134\"\t\t# \"ibswitch\" enhanced port 0 lid 1 lmc 0\n\
[5]\t\"H-0002c90300001dd0\"[1](2c90300001dd1) \t\t# \"node1\" lid 8 4xFDR\n\
\n\
caguid=0x2c90300001dd0\n\
Ca\t2 \"H-0002c90300001dd0\"\t\t# \"node1\"\n\
[1](2c90300001dd1) \t\"S-0008f10500200134\"[5]\t\t# lid 8 lmc 2 \"ibswitch\" lid 1 4xFDR\n";
        let t = parse_netfile(text, None).unwrap();
        let f = &t.fabric;
        let s = f.node_by_name("S-0008f10500200134").unwrap();
        let h = f.node_by_name("H-0002c90300001dd0").unwrap();
        assert_eq!(f.node(s).guid, 0x8f10500200134);
        assert_eq!(f.node(s).system_guid, 0x8f10500200135);
        assert_eq!(f.node(s).description, "ibswitch");
        assert_eq!(f.node(h).guid, 0x2c90300001dd0);
        assert_eq!(f.node(h).system_guid, 0x2c90300001dd0);
        assert_eq!(f.node(h).description, "node1");
        let spec = f.link(f.link_at(s, 5).unwrap()).spec;
        assert_eq!((spec.width, spec.speed), (LinkWidth::X4, LinkSpeed::Fdr));
        assert_eq!(t.lids, vec![(s, 0, 1, 0), (h, 1, 8, 2)]);
    }

    #[test]
    fn guid_counters_continue_like_ibsim() {
        let text = "switchguid=0x100\nSwitch 4 \"a\"\n\nSwitch 4 \"b\"\n\ncaguid=0x200\nCa 2 \"h\"\n\nCa 1 \"i\"\n\n\
caguid+0x10\nCa 1 \"j\"\n";
        let f = parse_netfile(text, None).unwrap().fabric;
        let g = |n: &str| f.node(f.node_by_name(n).unwrap()).guid;
        assert_eq!((g("a"), g("b")), (0x100, 0x101));
        // a 2-port CA reserves node GUID + 2 port GUIDs
        assert_eq!((g("h"), g("i"), g("j")), (0x200, 0x203, 0x210));
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        assert_eq!(
            err("Switch 8 \"a\"\n[1] a[1]\n"),
            "t.net:2: expected the peer's id in double quotes after the port"
        );
        assert!(err("Switch 8 \"a\"\n\nfoo bar\n").starts_with("t.net:3: unrecognised line 'foo bar'"));
        assert_eq!(
            err("\n[1] \"a\"[1]\n"),
            "t.net:2: port line outside a node section: expected a 'Switch <ports> \"<id>\"' or \
             'Ca <ports> \"<id>\"' header line before it"
        );
        assert_eq!(err("Switch x \"a\"\n"), "t.net:1: bad number of ports 'x': expected 1..=255");
        assert_eq!(
            err("Switch 8 \"a\"\n[1] \"b\"[1] w=3\n"),
            "t.net:2: bad link width 'w=3': expected w=1, 2, 4, 8 or 12 (lanes)"
        );
    }

    #[test]
    fn unknown_node_is_an_error() {
        assert_eq!(
            err("Switch 8 \"a\"\n[1] \"ghost\"[1]\n"),
            "t.net:2: unknown node \"ghost\": no 'Switch' or 'Ca' section defines it (ibsim needs a section \
             for every node a port line names)"
        );
    }

    #[test]
    fn port_out_of_range() {
        assert_eq!(
            err("Switch 8 \"a\"\n[9] \"h\"[1]\n"),
            "t.net:2: port 9 is out of range for node 'a', which has ports 1..=8"
        );
        assert_eq!(
            err("Switch 8 \"a\"\n[1] \"h\"[3]\n\nCa 2 \"h\"\n"),
            "t.net:2: port 3 is out of range for node 'h', which has ports 1..=2 (section at t.net:4)"
        );
        assert_eq!(
            err("Switch 8 \"a\"\n[0] \"h\"[1]\n"),
            "t.net:2: port 0 is the switch's management port and cannot be cabled"
        );
    }

    #[test]
    fn inconsistent_and_duplicate_links() {
        // b[1] says it goes to a[2], but a[1] already claimed b[1].
        assert_eq!(
            err("Switch 8 \"a\"\n[1] \"b\"[1]\n\nSwitch 8 \"b\"\n[1] \"a\"[2]\n"),
            "t.net:5: inconsistent link: this line cables port 1 of 'b' to 'a'[2], but it is already \
             cabled to 'a'[1] ('b'[1] by t.net:2)"
        );
        // Two ports of a claim the same port of b.
        assert_eq!(
            err("Switch 8 \"a\"\n[1] \"b\"[1]\n[2] \"b\"[1]\n\nSwitch 8 \"b\"\n"),
            "t.net:3: inconsistent link: port 1 of 'b' is already cabled to 'a'[1] ('b'[1] by t.net:2)"
        );
        assert_eq!(
            err("Switch 8 \"a\"\n[1] \"b\"[1]\n[1] \"b\"[1]\n\nSwitch 8 \"b\"\n"),
            "t.net:3: port 1 of 'a' is listed twice (first at t.net:2)"
        );
        assert_eq!(
            err("Switch 8 \"a\"\n[1] \"b\"[1] w=4\n\nSwitch 8 \"b\"\n[1] \"a\"[1] w=12\n"),
            "t.net:5: link width 12x disagrees with 4x given at t.net:2"
        );
        assert_eq!(err("Switch 8 \"a\"\n\nSwitch 4 \"a\"\n"), "t.net:3: node 'a' already has a section at t.net:1");
    }

    #[test]
    fn do_and_unsupported_directives() {
        assert!(err("do set \"a\" 1\n").starts_with("t.net:1: 'do' runs an ibsim console command"));
        assert!(err("width=2\n").starts_with("t.net:1: ibsim's global 'width=' setting is not supported"));
        assert_eq!(err("Rt 2 \"r\"\n"), "t.net:1: routers ('Rt' nodes) are not supported");
        assert_eq!(err("rtguid=0x10\n"), "t.net:1: routers ('rtguid=') are not supported");
        assert_eq!(err("module=m\n"), "t.net:1: ibsim's 'module=' name prefixes are not supported");
    }

    #[test]
    fn include_is_relative_to_the_including_file() {
        let dir = std::env::temp_dir().join(format!("ibnetsim-netfile-inc-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/hcas.net"), "Hca 1 \"h\"\n[1] \"s\"[1]\n").unwrap();
        std::fs::write(dir.join("sub/bad.net"), "\n\nbogus\n").unwrap();
        std::fs::write(dir.join("cyc.net"), "include cyc.net\n").unwrap();
        let main = dir.join("main.net");
        std::fs::write(&main, "Switch 4 \"s\"\n[1] \"h\"[1]\n\ninclude sub/hcas.net\n").unwrap();
        let t = read_text(&main).unwrap();
        let f = parse_netfile(&t, Some(&main)).unwrap().fabric;
        assert_eq!((f.num_nodes(), f.links().len()), (2, 1));
        // Errors in an included file name that file.
        let e = parse_netfile("include \"sub/bad.net\"\n", Some(&main)).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:3: unrecognised line", dir.join("sub/bad.net").display())), "{e}");
        let e = parse_netfile("include nothere.net\n", Some(&main)).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:1: include: ", main.display())), "{e}");
        let cyc = dir.join("cyc.net");
        let e = parse_netfile("include cyc.net\n", Some(&cyc)).unwrap_err().to_string();
        assert!(e.contains("include cycle"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn writer_output_is_ibnetdiscover_style() {
        let mut f = Fabric::new();
        let s = f.add_node(NodeKind::Switch, "sw", 4, Some(0x10)).unwrap();
        let h = f.add_node(NodeKind::Hca, "h1", 2, Some(0x200)).unwrap();
        f.set_description(h, "host \"one\"");
        f.connect(s, 3, h, 2, LinkSpec::new(LinkWidth::X4, LinkSpeed::Qdr)).unwrap();
        let mut out = Vec::new();
        write_netfile(&f, Some(&[(s, 0, 1, 0), (h, 2, 7, 1)]), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let expected = "#\n# Topology file: written by ibnetsim in ibnetdiscover format\n#\n\
\nsysimgguid=0x10\nswitchguid=0x10(10)\n\
Switch\t4 \"sw\"\t\t# \"sw\" enhanced port 0 lid 1 lmc 0\n\
[3]\t\"h1\"[2](202) \tw=4\t\t# \"host 'one'\" lid 7 4xQDR\n\
\nsysimgguid=0x200\ncaguid=0x200\n\
Ca\t2 \"h1\"\t\t# \"host 'one'\"\n\
[2](202) \t\"sw\"[3]\tw=4\t\t# lid 7 lmc 1 \"sw\" lid 1 4xQDR\n";
        assert_eq!(text, expected);
        let back = parse_netfile(&text, None).unwrap();
        assert_eq!(back.lids, vec![(s, 0, 1, 0), (h, 2, 7, 1)]);
        let mut bad = Fabric::new();
        bad.add_switch("a\"b", 2).unwrap();
        assert!(write_netfile(&bad, None, Vec::new()).is_err());
    }
}
