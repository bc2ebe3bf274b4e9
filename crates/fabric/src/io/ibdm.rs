//! IBDM topology files (`.topo`): which products (systems) make up a cluster
//! and how their front-panel connectors are cabled.
//!
//! Format: nmorey/ibutils `ibdm/doc/ibdm-topo-file.pod`; behaviour follows
//! `IBFabric::parseTopology` and `IBFabric::addCable` in `ibdm/ibdm/Fabric.cpp`:
//!
//! ```text
//! MTS3600 SW-2-0                       <system type> <system name> [CFG: leaf3=R,...]
//!    P1 -> Cougar H-1 P1               <port> -> <far type> <far system> <far port>
//!    P19 -4X-10G-> MIS5600 SWS_0 L1/P1 optional width/speed tags on the arrow
//!                                      a blank line ends the section
//! ```
//!
//! * Each system type is a TOPSYSTEM of an `.ibnl` netlist ([`super::ibnl`]),
//!   looked up in the `.topo` file's directory, then its `ibnl/` folder, then
//!   the caller's directories, then the built-in netlists.
//! * A system that is only ever a cable's far end (the spines of ibutils'
//!   `4-ary-2-tree.topo`) is made from the type named on that cable line. All
//!   systems are made in order of first appearance; a section's `CFG:` applies
//!   even when the system was first named as a far end.
//! * Nodes are named as IBDM names them: `<system>/<board path>/<node>`
//!   (`SW-2-0/U1`, `SWS_0/leaf1/U1`). A switch's description is
//!   `<system>:<type>/<board path>/<node>`, a CA's `<system> HCA-<k>` (the
//!   convention IBDM reads host names from). All nodes of a system share its
//!   system GUID (the GUID of its first node).
//! * A cable listed from both ends is one link; a port cabled to two different
//!   places is an error naming the line.
//! * Width and speed: see [the module overview](super).

use std::path::Path;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::ibnl::{split_arrow, DefRef, Flat, Library, Tags};
use super::{ReadOptions, Src, Topology, TopologyFormat};
use crate::error::FabricError;
use crate::fabric::{Fabric, LinkEnd, LinkId, NodeId};

/// A section header: `<type> <name> [CFG: ...]`.
struct Section {
    ty: String,
    mods: FxHashMap<String, String>,
    /// Canonical text of the modifiers, part of the flattening cache key.
    cfg_key: String,
    line: usize,
    /// Types given by further sections for the same system, with their lines.
    more: Vec<(String, usize)>,
}

/// A system made in the fabric.
struct Made {
    def: DefRef,
    ty: String,
    flat: Rc<Flat>,
    /// NodeId of the system's first node; the others follow in order.
    base: u32,
    line: usize,
}

/// Parses an IBDM `.topo` file. `file` names it in messages and is where
/// `.ibnl` files are looked for first.
pub fn parse_topo(text: &str, file: Option<&Path>, opts: &ReadOptions) -> Result<Topology, FabricError> {
    let src = Src::new(file);
    let sections = read_sections(text, &src)?;
    let mut b = TopoBuilder {
        src: &src,
        lib: Library::for_topo(file, opts),
        sections,
        made: FxHashMap::default(),
        cache: FxHashMap::default(),
        fabric: Fabric::new(),
        cable_line: FxHashMap::default(),
        defaults: Tags { width: opts.link_width, speed: opts.link_speed },
    };
    let mut cur: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let t = raw.trim();
        if t.is_empty() {
            cur = None;
            continue;
        }
        if t.starts_with('#') {
            continue;
        }
        if t.contains("->") {
            let Some(sys) = cur.clone() else {
                return Err(src.err(
                    no,
                    "cable line outside a system section: expected a '<system type> <system name>' line \
                     before it (a blank line ends a section)",
                ));
            };
            b.cable(&sys, t, no)?;
        } else {
            let (ty, name, _) = header(t).map_err(|m| src.err(no, m))?;
            b.make(name, ty, no)?;
            cur = Some(name.to_string());
        }
    }
    Ok(Topology { fabric: b.fabric, lids: Vec::new(), format: TopologyFormat::Ibdm })
}

/// Splits a header line into type, name and CFG text.
fn header(t: &str) -> Result<(&str, &str, &str), String> {
    let (head, cfg) = match t.find("CFG:") {
        Some(i) => (&t[..i], &t[i + 4..]),
        None => (t, ""),
    };
    let toks: Vec<&str> = head.split_whitespace().collect();
    match toks.as_slice() {
        [ty, name] if !ty.contains('/') && !name.contains('/') => Ok((ty, name, cfg)),
        [_, _] => Err(format!("system type and name cannot contain '/': '{}'", head.trim())),
        _ => Err(format!(
            "unrecognised line '{t}': expected '<system type> <system name> [CFG: <board>=<modifier>,...]' \
             or a cable line '<port> -> <system type> <system name> <port>'"
        )),
    }
}

/// First pass: every section header, so that a system first met as a cable's
/// far end is still built with its own section's type and CFG.
fn read_sections(text: &str, src: &Src) -> Result<FxHashMap<String, Section>, FabricError> {
    let mut sections: FxHashMap<String, Section> = FxHashMap::default();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') || t.contains("->") {
            continue;
        }
        let (ty, name, cfg) = header(t).map_err(|m| src.err(no, m))?;
        let mut mods = FxHashMap::default();
        for item in cfg.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (board, modifier) = item
                .split_once('=')
                .map(|(b, m)| (b.trim(), m.trim()))
                .filter(|(b, m)| !b.is_empty() && !m.is_empty())
                .ok_or_else(|| {
                    src.err(no, format!("bad CFG item '{item}': expected <board>=<modifier>, e.g. leaf3=R"))
                })?;
            mods.insert(board.to_string(), modifier.to_string());
        }
        let mut items: Vec<String> = mods.iter().map(|(b, m)| format!("{b}={m}")).collect();
        items.sort();
        let sec = Section { ty: ty.to_string(), mods, cfg_key: items.join(","), line: no, more: Vec::new() };
        if let Some(prev) = sections.get_mut(name) {
            if prev.cfg_key != sec.cfg_key {
                return Err(src.err(
                    no,
                    format!("system '{name}' already has a section at line {} with a different CFG", prev.line),
                ));
            }
            // Checked against the first section's type once types can be resolved.
            prev.more.push((sec.ty, no));
            continue;
        }
        sections.insert(name.to_string(), sec);
    }
    Ok(sections)
}

struct TopoBuilder<'a> {
    src: &'a Src,
    lib: Library,
    sections: FxHashMap<String, Section>,
    made: FxHashMap<String, Made>,
    cache: FxHashMap<(DefRef, String), Rc<Flat>>,
    fabric: Fabric,
    /// The line that cabled each link, for messages about a port cabled twice.
    cable_line: FxHashMap<LinkId, (usize, Tags)>,
    /// Width and speed for cables that neither the file nor the systems tag.
    defaults: Tags,
}

impl TopoBuilder<'_> {
    fn resolve(&mut self, ty: &str, line: usize) -> Result<DefRef, FabricError> {
        self.lib.lookup(ty)?.ok_or_else(|| {
            self.src.err(
                line,
                format!("unknown system type '{ty}': no TOPSYSTEM of that name; looked in {}", self.lib.searched()),
            )
        })
    }

    /// Makes system `name` (if not made yet) and checks that `ty` is its type.
    fn make(&mut self, name: &str, ty: &str, line: usize) -> Result<(), FabricError> {
        if let Some(m) = self.made.get(name) {
            let (made_ty, made_line, made_def) = (m.ty.clone(), m.line, m.def);
            if ty != made_ty && self.resolve(ty, line)? != made_def {
                return Err(self.src.err(
                    line,
                    format!("system '{name}' is a {made_ty} (line {made_line}), but this line says it is a {ty}"),
                ));
            }
            return Ok(());
        }
        let (sec_ty, cfg_line, mods, cfg_key, mut claims) = match self.sections.get(name) {
            Some(s) => (s.ty.clone(), s.line, s.mods.clone(), s.cfg_key.clone(), s.more.clone()),
            None => (ty.to_string(), line, FxHashMap::default(), String::new(), Vec::new()),
        };
        let def = self.resolve(&sec_ty, cfg_line)?;
        claims.push((ty.to_string(), line));
        for (other, at) in claims {
            if other != sec_ty && self.resolve(&other, at)? != def {
                return Err(self.src.err(
                    at,
                    format!("system '{name}' is a {sec_ty} (line {cfg_line}), but this line says it is a {other}"),
                ));
            }
        }
        let flat = match self.cache.get(&(def, cfg_key.clone())) {
            Some(f) => f.clone(),
            None => {
                let f = Rc::new(self.lib.flatten(def, &mods, &self.src.at(cfg_line))?);
                self.cache.insert((def, cfg_key), f.clone());
                f
            }
        };
        if flat.nodes.is_empty() {
            return Err(self.src.err(line, format!("system '{name}' ({sec_ty}) has no nodes left")));
        }
        let loc = self.src.at(line);
        let base = self.fabric.num_nodes() as u32;
        let mut ca_index = 0;
        for n in &flat.nodes {
            let id = self
                .fabric
                .add_node(n.kind, format!("{name}/{}", n.rel), n.num_ports, None)
                .map_err(|e| e.at(loc.clone()))?;
            let desc = if n.kind.is_switch() {
                format!("{name}:{sec_ty}/{}", n.rel)
            } else {
                ca_index += 1;
                format!("{name} HCA-{ca_index}")
            };
            self.fabric.set_description(id, desc);
        }
        let sys_guid = self.fabric.node(NodeId(base)).guid;
        for i in 0..flat.nodes.len() as u32 {
            self.fabric.set_system_guid(NodeId(base + i), sys_guid);
        }
        for l in &flat.links {
            self.fabric
                .connect(NodeId(base + l.a.0), l.a.1 as u32, NodeId(base + l.b.0), l.b.1 as u32, l.spec)
                .map_err(|e| e.at(loc.clone()))?;
        }
        self.made.insert(name.to_string(), Made { def, ty: sec_ty, flat, base, line });
        Ok(())
    }

    /// The node port behind connector `port` of system `sys`.
    fn port(&self, sys: &str, port: &str, line: usize) -> Result<(LinkEnd, Tags), FabricError> {
        let m = &self.made[sys];
        match m.flat.connectors.get(port) {
            Some(fp) => Ok((LinkEnd { node: NodeId(m.base + fp.node), port: fp.port }, fp.tags)),
            None => Err(self.src.err(
                line,
                format!(
                    "system '{sys}' ({}) has no port '{port}'{}",
                    m.ty,
                    if m.flat.boards_removed { " (its CFG removed some boards)" } else { "" }
                ),
            )),
        }
    }

    fn cable(&mut self, sys: &str, t: &str, no: usize) -> Result<(), FabricError> {
        let (local, tags, far) = split_arrow(t).map_err(|m| self.src.err(no, m))?;
        let [far_ty, far_name, far_port] = far.as_slice() else {
            return Err(self.src.err(no, "expected '<port> -> <system type> <system name> <port>'"));
        };
        if far_name.contains('/') {
            return Err(self.src.err(no, format!("system names cannot contain '/': '{far_name}'")));
        }
        self.make(far_name, far_ty, no)?;
        let (a, a_tags) = self.port(sys, local, no)?;
        let (b, b_tags) = self.port(far_name, far_port, no)?;
        let spec = tags.or(Tags::slower(a_tags, b_tags)).or(self.defaults).spec();
        let f = &self.fabric;
        let name = |e: LinkEnd| format!("{} port {}", f.node(e.node).name, e.port);
        for (end, other) in [(a, b), (b, a)] {
            let Some(l) = f.link_at(end.node, end.port) else { continue };
            let peer = f.link(l).other(end);
            if peer == other {
                // The same cable listed from its other end.
                let (prev_line, prev_tags) = self.cable_line.get(&l).copied().unwrap_or((0, Tags::default()));
                let clash = matches!((prev_tags.width, tags.width), (Some(p), Some(q)) if p != q)
                    || matches!((prev_tags.speed, tags.speed), (Some(p), Some(q)) if p != q);
                if clash {
                    return Err(self
                        .src
                        .err(no, format!("this cable has different width/speed tags than at line {prev_line}")));
                }
                return Ok(());
            }
            let by = match self.cable_line.get(&l) {
                Some((line, _)) => format!("by line {line}"),
                None => "inside its system".to_string(),
            };
            return Err(self.src.err(no, format!("{} is already connected to {} ({by})", name(end), name(peer))));
        }
        let id = self
            .fabric
            .connect(a.node, a.port as u32, b.node, b.port as u32, spec)
            .map_err(|e| e.at(self.src.at(no)))?;
        self.cable_line.insert(id, (no, tags));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::{LinkSpec, LinkSpeed, LinkWidth};

    fn topo(text: &str) -> Result<Topology, FabricError> {
        parse_topo(text, Some(Path::new("/nonexistent/t.topo")), &ReadOptions::default())
    }

    #[test]
    fn small_fabric_with_far_end_only_systems() {
        let t = topo(
            "MTS800 SW-1\n   P1 -> Cougar H-1 P1\n   P2 -4X-10G-> Cougar H-1 P2\n   P8 -> MTS800 SW-0 P1\n\n\
             Cougar H-1\n   P1 -> MTS800 SW-1 P1\n",
        )
        .unwrap();
        let f = &t.fabric;
        assert_eq!(f.num_nodes(), 3);
        assert_eq!(f.links().len(), 3);
        let sw = f.node_by_name("SW-1/U1").unwrap();
        let h = f.node_by_name("H-1/U1").unwrap();
        let spine = f.node_by_name("SW-0/U1").unwrap();
        assert_eq!(f.peer(sw, 8), Some(LinkEnd { node: spine, port: 1 }));
        assert_eq!(f.link(f.link_at(sw, 1).unwrap()).spec, LinkSpec::new(LinkWidth::X4, LinkSpeed::Sdr));
        assert_eq!(f.link(f.link_at(sw, 2).unwrap()).spec, LinkSpec::new(LinkWidth::X4, LinkSpeed::Qdr));
        assert_eq!(f.node(sw).description, "SW-1:MTS800/U1");
        assert_eq!(f.node(h).description, "H-1 HCA-1");
        assert_eq!(t.format, TopologyFormat::Ibdm);
    }

    #[test]
    fn chassis_nodes_share_a_system_guid() {
        let t = topo("MTS14400 SW4 CFG: leaf3=R,leaf4=R,leaf5=R,leaf6=R,leaf7=R,leaf8=R,leaf9=R,leaf10=R,leaf11=R,leaf12=R\n   L1/P1 -> MTS2400 SW1 P13\n").unwrap();
        let f = &t.fabric;
        // 2 leaves + 6 spine ASICs, plus the MTS2400.
        assert_eq!(f.switches().count(), 9);
        let leaf = f.node_by_name("SW4/leaf1/U1").unwrap();
        let spine = f.node_by_name("SW4/spine2/U3").unwrap();
        assert_eq!(f.node(leaf).system_guid, f.node(spine).system_guid);
        assert_eq!(f.node(leaf).system_guid, f.node(NodeId(0)).guid);
        assert_ne!(f.node(f.node_by_name("SW1/U1").unwrap()).system_guid, f.node(leaf).system_guid);
        // leaf1 and leaf2 each have 12 uplinks, plus the one cable.
        assert_eq!(f.links().len(), 25);
        let e = topo("MTS14400 SW4 CFG: leaf3=R\n   L3/P1 -> MTS2400 SW1 P13\n").unwrap_err().to_string();
        assert_eq!(
            e,
            "/nonexistent/t.topo:2: system 'SW4' (MTS14400) has no port 'L3/P1' (its CFG removed some boards)"
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = topo("MTS800 S\n   P1 -> Foo H-1 P1\n").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "/nonexistent/t.topo:2: unknown system type 'Foo': no TOPSYSTEM of that name; looked in \
                 /nonexistent/*.ibnl, /nonexistent/ibnl/*.ibnl, the built-in library (Buffalo,"
            ),
            "{e}"
        );
        let e = topo("MTS800 S\n   P9 -> Cougar H-1 P1\n").unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/t.topo:2: system 'S' (MTS800) has no port 'P9'");
        let e = topo("MTS800 S\n   P1 -> Cougar H-1 P1\n   P2 -> Cougar H-1 P1\n").unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/t.topo:3: H-1/U1 port 1 is already connected to S/U1 port 1 (by line 2)");
        let e = topo("MTS800 S\n   P1 -> Cougar H-1 P1\n\nCougar H-1\n   P1 -> MTS800 S P2\n").unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/t.topo:5: H-1/U1 port 1 is already connected to S/U1 port 1 (by line 2)");
        let e = topo("MTS800 S\n   P1 -> Cougar S P1\n").unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/t.topo:2: system 'S' is a MTS800 (line 1), but this line says it is a Cougar");
        let e = topo("MTS800 S\n\n   P1 -> Cougar H P1\n").unwrap_err().to_string();
        assert!(e.starts_with("/nonexistent/t.topo:3: cable line outside a system section"), "{e}");
        let e = topo("MTS800 S extra\n").unwrap_err().to_string();
        assert!(e.starts_with("/nonexistent/t.topo:1: unrecognised line 'MTS800 S extra'"), "{e}");
        let e = topo("MTS800 S CFG: leaf1\n").unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/t.topo:1: bad CFG item 'leaf1': expected <board>=<modifier>, e.g. leaf3=R");
        let e = topo("MTS800 S CFG: leaf1=R\n").unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/t.topo:1: CFG names 'leaf1' which is not a board of system type 'Buffalo'");
        let e = topo("MTS800 S\n   P1 -> Cougar H P7\n").unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/t.topo:2: system 'H' (Cougar) has no port 'P7'");
    }

    #[test]
    fn a_cable_listed_from_both_ends_is_one_link() {
        let t = topo("MTS800 S\n   P1 -4X-> Cougar H P1\n\nCougar H\n   P1 -> MTS800 S P1\n").unwrap();
        assert_eq!(t.fabric.links().len(), 1);
        // Aliases of the same netlist are the same type.
        let t = topo("MTS800 S\n   P1 -> Buffalo T P1\n\nBuffalo S\n\nMTS800 T\n").unwrap();
        assert_eq!(t.fabric.num_nodes(), 2);
        let e = topo("MTS800 S\n\nCougar S\n").unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/t.topo:3: system 'S' is a MTS800 (line 1), but this line says it is a Cougar");
        let e =
            topo("MTS800 S\n   P1 -4X-> Cougar H P1\n\nCougar H\n   P1 -12X-> MTS800 S P1\n").unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/t.topo:5: this cable has different width/speed tags than at line 2");
    }
}
