//! `fa`: fully adaptive minimal routing with an up*/down* escape path, as
//! paper 002 (Martínez et al., "Supporting Fully Adaptive Routing in
//! InfiniBand Networks", IPDPS 2003, §3 and §4.1–4.4) fills the forwarding
//! tables.
//!
//! A CA port owns `2^LMC` LIDs, `base + o` for path-bits offset `o`. The
//! switch of paper 002 reads the entries of all of them at once, each entry
//! one routing option for the packet ([`crate::labels`] says how the data
//! plane uses them):
//!
//! * Offset 0 (DLID least significant bit 0) is the escape option, routed
//!   exactly as the `updn` engine routes a port's base LID, with the same
//!   roots and options ([`UpDn::route_base_lids`]). Switch LIDs (one LID
//!   each) are routed by up*/down* too.
//! * Offsets `k = 1 .. 2^LMC - 1` are adaptive options on minimal paths: the
//!   fewest switch hops to the destination's switch, up*/down* restrictions
//!   ignored. At each switch, offset `k` takes the `k`-th of the switch's
//!   minimal next-hop ports toward that switch: first those other than the
//!   escape port, in ascending order, then the escape port if it is minimal,
//!   cycling when there are fewer minimal ports than adaptive offsets. At the
//!   destination's own switch every offset gives the CA's port. So a switch
//!   offers at most `min(2^LMC - 1, #minimal ports)` adaptive options plus the
//!   escape one (MR in the paper's tables), fewer when the escape port is also
//!   a minimal one.
//!
//! The result carries [`PathLabels::escape_first`]: offset 0 `Escape`, the
//! others `Adaptive`. Every offset alone is loop-free (each adaptive hop lowers
//! the distance by one); offset 0 alone is deadlock-free. The adaptive entries
//! alone are not, which is why the data plane must keep the escape option.
//!
//! Switches named in the option `non_adaptive` (paper 002's switches
//! without adaptive support in a mixed fabric) hold the escape port at every
//! LID of a destination, so an adaptive packet follows the escape path there.
//!
//! LMC 0 is an error: there would be no adaptive LID. Options used: `roots`
//! (as `updn`), `non_adaptive`.

use std::collections::BTreeMap;

use ibnetsim_fabric::{Fabric, PortNum};

use super::updn::UpDn;
use super::{Routing, RoutingEngine, RoutingOptions};
use crate::error::SmError;
use crate::hops::{attachment, SwitchHops, UNREACHABLE};
use crate::labels::PathLabels;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};
use crate::path_sl::PathSl;

/// Registry name.
pub const NAME: &str = "fa";

/// The fully adaptive engine: up*/down* escape, minimal adaptive options.
#[derive(Debug, Clone, Default)]
pub struct Fa {
    /// The escape function (its roots are the engine's `roots` option).
    pub updn: UpDn,
    /// Switches without adaptive support (option `non_adaptive`, names or
    /// GUIDs): every LID of a destination gets the escape port there.
    pub non_adaptive: Vec<String>,
}

/// Registry constructor.
pub(crate) fn build(options: &RoutingOptions) -> Result<Box<dyn RoutingEngine>, SmError> {
    Ok(Box::new(Fa { updn: UpDn::from_options(options)?, non_adaptive: options.non_adaptive.clone() }))
}

impl RoutingEngine for Fa {
    fn name(&self) -> &'static str {
        NAME
    }

    fn route(&self, fabric: &Fabric, lids: &LidMap) -> Result<Routing, SmError> {
        if lids.lmc() == 0 {
            return Err(SmError::option(
                "lmc",
                "fa needs LMC ≥ 1 (2^LMC LIDs per port: one escape, the others adaptive)",
            ));
        }
        let escape = self.updn.route_base_lids(fabric, lids)?;
        let mut tables = escape.tables;
        let hops = SwitchHops::compute(fabric);
        let mut plain = vec![false; hops.num_switches()];
        for name in &self.non_adaptive {
            let node = fabric.resolve(name).map_err(|e| SmError::option("non_adaptive_switches", e.to_string()))?;
            let i = hops.index_of(node).ok_or_else(|| SmError::option("non_adaptive_switches", format!("'{name}' is not a switch")))?;
            plain[i] = true;
        }
        fill_adaptive(fabric, lids, &hops, &plain, &mut tables)?;
        let dist = option_distribution(fabric, lids, &tables);
        let pairs: usize = dist.iter().map(|&(_, c)| c).sum();
        let options: usize = dist.iter().map(|&(d, c)| d * c).sum();
        let mean = if pairs == 0 { 0.0 } else { options as f64 / pairs as f64 };
        let root = if escape.roots.len() == 1 { "root" } else { "roots" };
        let adaptive = match (1u32 << lids.lmc()) - 1 {
            1 => "offset 1".to_string(),
            last => format!("offsets 1..{last}"),
        };
        let mut notes = vec![format!(
            "fa: escape = up*/down* ({root} {}), adaptive = minimal ({adaptive}); \
             {mean:.2} distinct options per (switch, destination) on average",
            escape.root_names,
        )];
        notes.extend(escape.notes);
        Ok(Routing {
            tables,
            notes,
            labels: PathLabels::escape_first(lids.lmc()),
            path_sl: PathSl::none(),
            not_in_dump: Vec::new(),
            sl2vl: None,
        })
    }
}

/// Fills offsets `1 .. 2^LMC` of every CA port at every switch with minimal
/// next hops (see the module docs).
fn fill_adaptive(fabric: &Fabric, lids: &LidMap, hops: &SwitchHops, plain: &[bool], tables: &mut ForwardingTables) -> Result<(), SmError> {
    let n = hops.num_switches();
    // CA ports by the switch they are cabled to: (base LID, LIDs, switch port).
    let mut at: Vec<Vec<(Lid, u32, PortNum)>> = vec![Vec::new(); n];
    for p in lids.ca_ports(fabric) {
        // A CA port cabled to no switch has already failed up*/down* routing.
        if let Some(sw) = attachment(fabric, p.end) {
            at[hops.index_of(sw.node).expect("attachment is a switch")].push((p.base, p.count(), sw.port));
        }
    }
    let mut minimal: Vec<PortNum> = Vec::new();
    for (si, &sw) in hops.switches().iter().enumerate() {
        let mut neighbours: Vec<(PortNum, usize)> =
            fabric.switch_neighbors(sw).map(|(port, peer)| (port, hops.index_of(peer.node).expect("switch"))).collect();
        neighbours.sort_unstable();
        for (t, dests) in at.iter().enumerate() {
            if dests.is_empty() {
                continue;
            }
            minimal.clear();
            if t != si {
                let d = hops.by_index(si, t);
                if d != UNREACHABLE {
                    minimal.extend(neighbours.iter().filter(|&&(_, q)| hops.by_index(q, t) == d - 1).map(|&(p, _)| p));
                }
            }
            for &(base, count, ca_port) in dests {
                if plain[si] {
                    // No adaptive support: the escape port at every LID.
                    if let Some(esc) = tables.get(sw, base) {
                        for k in 1..count {
                            tables.set(sw, (base as u32 + k) as Lid, esc);
                        }
                    }
                    continue;
                }
                // Minimal ports other than the escape one first, so that the
                // adaptive options add routing freedom before repeating it.
                if let Some(esc) = tables.get(sw, base) {
                    minimal.sort_by_key(|&p| (p == esc, p));
                }
                for k in 1..count {
                    let lid = (base as u32 + k) as Lid;
                    let port = if t == si {
                        ca_port
                    } else if minimal.is_empty() {
                        let owner = lids.owner(lid).expect("a CA port's LID").end;
                        return Err(SmError::Unroutable {
                            switch: fabric.node(sw).name.clone(),
                            lid,
                            target: format!("{} port {}", fabric.node(owner.node).name, owner.port),
                        });
                    } else {
                        minimal[(k as usize - 1) % minimal.len()]
                    };
                    tables.set(sw, lid, port);
                }
            }
        }
    }
    Ok(())
}

/// How many distinct output ports the LIDs of a destination have at a
/// switch: for every switch and every destination CA port (the pairs at the
/// destination's own switch included), the number of distinct ports among
/// the entries of the port's `2^LMC` LIDs (entries without a path not
/// counted). Returned as `(distinct ports, number of (switch, destination)
/// pairs)`, by ascending number of ports, only numbers that occur.
///
/// For `fa` this is the number of routing options per (switch, destination)
/// of paper 002's Table 2. That table's percentages leave out the destination's
/// own switch (its 8-switch rows are multiples of 1/7), so subtract one pair
/// with a single option per cabled CA port first.
pub fn option_distribution(fabric: &Fabric, lids: &LidMap, tables: &ForwardingTables) -> Vec<(usize, usize)> {
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    let mut ports: Vec<PortNum> = Vec::new();
    for sw in fabric.switches() {
        for p in lids.ca_ports(fabric) {
            ports.clear();
            ports.extend(p.lids().filter_map(|lid| tables.get(sw, lid)));
            ports.sort_unstable();
            ports.dedup();
            *counts.entry(ports.len()).or_default() += 1;
        }
    }
    counts.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyze, AnalysisOptions, LidSelection, SlView};
    use crate::labels::RouteLabel;
    use crate::routing::build_engine;
    use crate::routing::testfab::{self, check_routes};
    use crate::subnet::{SmConfig, SubnetManager};
    use ibnetsim_fabric::gen::IrregularParams;
    use ibnetsim_fabric::{LinkSpec, NodeId};
    use proptest::prelude::*;

    fn fa(roots: &[&str]) -> Fa {
        Fa { updn: UpDn { roots: roots.iter().map(|r| r.to_string()).collect() }, non_adaptive: Vec::new() }
    }

    /// Five switches, one host each (h{i} on port 4 of s{i}); switch links
    /// s0-s1, s0-s2, s0-s4, s1-s2, s1-s3, s2-s3, s3-s4:
    ///
    /// ```text
    ///   s0: 1→s1 2→s2 3→s4      s1: 1→s0 2→s2 3→s3      s2: 1→s0 2→s1 3→s3
    ///   s3: 1→s1 2→s2 3→s4      s4: 1→s0 2→s3
    /// ```
    ///
    /// With root s0, ranks are s0 0, s1 s2 s4 1, s3 2, and GUIDs follow
    /// creation order, so "down" is s0→s1, s0→s2, s0→s4, s1→s2, s1→s3,
    /// s2→s3, s4→s3. Six pairs are two hops apart: s0↔s3 (three minimal
    /// ports each way), s1→s4, s2→s4, s4→s1, s4→s2 (two each). Of the last
    /// four, the way through s3 is illegal for up*/down* (down to s3, then up).
    /// LIDs at LMC 2: h0..h4 = 4, 8, 12, 16, 20 (+0..3), s0..s4 = 24..28.
    fn five() -> Fabric {
        let mut f = Fabric::new();
        let s: Vec<NodeId> = (0..5).map(|i| f.add_switch(format!("s{i}"), 4).unwrap()).collect();
        for (a, pa, b, pb) in [(0, 1, 1, 1), (0, 2, 2, 1), (0, 3, 4, 1), (1, 2, 2, 2), (1, 3, 3, 1), (2, 3, 3, 2), (3, 3, 4, 2)] {
            f.connect(s[a], pa, s[b], pb, LinkSpec::default()).unwrap();
        }
        for (i, &sw) in s.iter().enumerate() {
            let h = f.add_hca(format!("h{i}"), 1).unwrap();
            f.connect(sw, 4, h, 1, LinkSpec::default()).unwrap();
        }
        f
    }

    /// The entries of switch `sw` for the LIDs of host `h`, by offset.
    fn entries(f: &Fabric, lids: &LidMap, t: &ForwardingTables, sw: &str, h: &str) -> Vec<u8> {
        let p = lids.of_port(f.node_by_name(h).unwrap(), 1).unwrap();
        p.lids().map(|l| t.get(f.node_by_name(sw).unwrap(), l).unwrap()).collect()
    }

    /// Offset 0 of every port and every switch LID are updn's entries.
    fn escape_is_updn(f: &Fabric, lids: &LidMap, fa_tables: &ForwardingTables, updn: &UpDn) -> Result<(), String> {
        let u = updn.route(f, lids).map_err(|e| e.to_string())?;
        for sw in f.switches() {
            for p in lids.ports() {
                if fa_tables.get(sw, p.base) != u.tables.get(sw, p.base) {
                    return Err(format!("{} LID {}: fa {:?}, updn {:?}", f.node(sw).name, p.base, fa_tables.get(sw, p.base), u.tables.get(sw, p.base)));
                }
            }
        }
        Ok(())
    }

    /// Every offset k ≥ 1 entry is a minimal next hop: the CA's port at its
    /// own switch, elsewhere a switch one hop closer to the CA's switch.
    fn adaptive_is_minimal(f: &Fabric, lids: &LidMap, t: &ForwardingTables) -> Result<(), String> {
        let hops = SwitchHops::compute(f);
        for sw in f.switches() {
            for p in lids.ca_ports(f) {
                let home = attachment(f, p.end).unwrap();
                let d = hops.distance(sw, home.node).unwrap();
                for lid in p.lids().skip(1) {
                    let port = t.get(sw, lid).ok_or(format!("{} has no entry for LID {lid}", f.node(sw).name))?;
                    let ok = if sw == home.node {
                        port == home.port
                    } else {
                        f.peer(sw, port).and_then(|peer| hops.distance(peer.node, home.node)) == Some(d - 1)
                    };
                    if !ok {
                        return Err(format!("{} LID {lid}: port {port} is not a minimal next hop", f.node(sw).name));
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn five_switches_by_hand() {
        let f = five();
        let lids = LidMap::assign(&f, 2).unwrap();
        let r = fa(&["s0"]).route(&f, &lids).unwrap();
        let e = |sw: &str, h: &str| entries(&f, &lids, &r.tables, sw, h);
        // Offsets 0 (escape), 1, 2, 3. s4 -> h1: escape up to s0 and down
        // (s4 -> s3 -> s1 would go down, then up); the adaptive offsets take
        // the other minimal port (2) first, then the escape port, in turn.
        assert_eq!(e("s4", "h1"), [1, 2, 1, 2]);
        assert_eq!(e("s4", "h2"), [1, 2, 1, 2]);
        assert_eq!(e("s1", "h4"), [1, 3, 1, 3]);
        assert_eq!(e("s2", "h4"), [1, 3, 1, 3]);
        // s0 -> h3: three legal minimal ports. updn balances: at s0, h1 took
        // port 1 and h2 port 2 before h3, so the escape is port 3.
        assert_eq!(e("s0", "h3"), [3, 1, 2, 3]);
        // s3 -> h0: h0 is routed first, every port unused: the escape is port
        // 1, so the adaptive offsets take 2, 3, then 1.
        assert_eq!(e("s3", "h0"), [1, 2, 3, 1]);
        // One hop away: one option. At the host's own switch: its port.
        assert_eq!(e("s0", "h1"), [1, 1, 1, 1]);
        assert_eq!(e("s3", "h4"), [3, 3, 3, 3]);
        assert_eq!(e("s2", "h2"), [4, 4, 4, 4]);
        // s4's whole row, hosts h0..h4.
        let s4: Vec<u8> = ["h0", "h1", "h2", "h3", "h4"].iter().flat_map(|h| e("s4", h)).collect();
        assert_eq!(s4, [1, 1, 1, 1, 1, 2, 1, 2, 1, 2, 1, 2, 2, 2, 2, 2, 4, 4, 4, 4]);
        escape_is_updn(&f, &lids, &r.tables, &fa(&["s0"]).updn).unwrap();
        // Switch LIDs are up*/down*'s, too, routed after the hosts: at s3,
        // h0 and h1 took port 1, h2 port 2, h4 port 3, so s0 (LID 24) takes
        // port 2, the first least-loaded of its three up ports.
        assert_eq!(r.tables.get(f.node_by_name("s3").unwrap(), 24), Some(2));
        adaptive_is_minimal(&f, &lids, &r.tables).unwrap();
        check_routes(&f, &lids, &r.tables).unwrap();
        assert_eq!(r.labels, PathLabels::escape_first(2));
        assert_eq!(r.labels.of_lid(&lids, 16), Some(RouteLabel::Escape));
        assert_eq!(r.labels.of_lid(&lids, 19), Some(RouteLabel::Adaptive));
        assert!(r.path_sl.is_none());
        // 25 (switch, host) pairs: 5 local and 14 one hop away with one
        // option; s1→h4, s2→h4, s4→h1, s4→h2 with two; s0→h3, s3→h0 with three.
        assert_eq!(option_distribution(&f, &lids, &r.tables), [(1, 19), (2, 4), (3, 2)]);
        // (19 + 8 + 6) / 25 = 1.32.
        assert_eq!(
            r.notes[0],
            "fa: escape = up*/down* (root s0), adaptive = minimal (offsets 1..3); 1.32 distinct options per (switch, destination) on average"
        );
        assert_eq!(r.notes[1], "updn roots (given): s0; max rank 2");
    }

    #[test]
    fn lmc1_gives_one_adaptive_option_a_minimal_port_other_than_the_escape() {
        let f = five();
        let lids = LidMap::assign(&f, 1).unwrap();
        let r = fa(&["s0"]).route(&f, &lids).unwrap();
        let e = |sw: &str, h: &str| entries(&f, &lids, &r.tables, sw, h);
        assert_eq!(e("s0", "h3"), [3, 1]);
        assert_eq!(e("s3", "h0"), [1, 2]);
        assert_eq!(e("s4", "h1"), [1, 2]);
        // Every pair with two or more minimal ports gets a second option:
        // s0→h3, s3→h0, s4→h1, s4→h2, s1→h4, s2→h4; (19 + 2·6) / 25 = 1.24.
        assert_eq!(option_distribution(&f, &lids, &r.tables), [(1, 19), (2, 6)]);
        assert!(r.notes[0].contains("adaptive = minimal (offset 1); 1.24 distinct options"), "{}", r.notes[0]);
        escape_is_updn(&f, &lids, &r.tables, &fa(&["s0"]).updn).unwrap();
    }

    #[test]
    fn a_switch_without_adaptive_support_repeats_its_escape_port() {
        let f = five();
        let lids = LidMap::assign(&f, 2).unwrap();
        let plain = Fa { non_adaptive: vec!["s0".into()], ..fa(&["s0"]) };
        let r = plain.route(&f, &lids).unwrap();
        let e = |sw: &str, h: &str| entries(&f, &lids, &r.tables, sw, h);
        // s0 -> h3 had three options ([3, 1, 2, 3]); now only its escape.
        assert_eq!(e("s0", "h3"), [3, 3, 3, 3]);
        // So has every other destination at s0: its own host (port 4), h1 and
        // h2 straight across, h4 down to s4 (the root's escape ports).
        for (h, port) in [("h0", 4), ("h1", 1), ("h2", 2), ("h4", 3)] {
            assert_eq!(e("s0", h), [port; 4], "s0 -> {h}");
        }
        // Other switches are unchanged.
        assert_eq!(e("s3", "h0"), [1, 2, 3, 1]);
        escape_is_updn(&f, &lids, &r.tables, &plain.updn).unwrap();
        let bad = Fa { non_adaptive: vec!["h1".into()], ..fa(&["s0"]) };
        assert_eq!(bad.route(&f, &lids).unwrap_err().to_string(), "invalid option 'non_adaptive_switches': 'h1' is not a switch");
        let options = RoutingOptions { non_adaptive: vec!["s0".into()], ..Default::default() };
        let e = build_engine("updn", &options).err().unwrap().to_string();
        assert_eq!(e, "invalid option 'non_adaptive_switches': lists switches for the 'fa' engine only, not for 'updn'");
    }

    #[test]
    fn lmc0_is_an_error_naming_the_option() {
        let f = five();
        let lids = LidMap::assign(&f, 0).unwrap();
        let err = Fa::default().route(&f, &lids).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid option 'lmc': fa needs LMC ≥ 1 (2^LMC LIDs per port: one escape, the others adaptive)"
        );
        let config = SmConfig { routing_engine: "fa".into(), lmc: 0, ..SmConfig::default() };
        assert_eq!(SubnetManager::new(config).configure(&f).unwrap_err().to_string(), err);
    }

    #[test]
    fn registered_with_options_and_through_the_subnet_manager() {
        assert!(crate::routing::ENGINES.iter().any(|e| e.name == "fa" && e.summary.contains("LMC ≥ 1")));
        let opts = RoutingOptions { roots: vec![" ".into()], ..Default::default() };
        assert!(build_engine("fa", &opts).is_err());
        let f = five();
        let options = RoutingOptions { roots: vec!["s2".into()], ..Default::default() };
        let config = SmConfig { routing_engine: "fa".into(), lmc: 2, options, ..SmConfig::default() };
        let s = SubnetManager::new(config).configure(&f).unwrap();
        assert_eq!(s.engine, "fa");
        assert_eq!(s.labels, PathLabels::escape_first(2));
        assert!(s.notes[0].starts_with("fa: escape = up*/down* (root s2)"), "{:?}", s.notes);
        check_routes(&f, &s.lids, &s.tables).unwrap();
        escape_is_updn(&f, &s.lids, &s.tables, &fa(&["s2"]).updn).unwrap();
    }

    #[test]
    fn option_distribution_skips_missing_entries() {
        let f = five();
        let lids = LidMap::assign(&f, 1).unwrap();
        let mut t = ForwardingTables::new(&f, lids.top_lid());
        // Only s0 has entries, for h1: ports 1 and 2. Every other pair has none.
        let s0 = f.node_by_name("s0").unwrap();
        let h1 = lids.of_port(f.node_by_name("h1").unwrap(), 1).unwrap().base;
        t.set(s0, h1, 1);
        t.set(s0, h1 + 1, 2);
        assert_eq!(option_distribution(&f, &lids, &t), [(0, 24), (2, 1)]);
    }

    #[test]
    fn papers_irregular_networks_reach_everything_and_the_escape_is_deadlock_free() {
        // Paper 002's networks: 8-port switches, 4 switch links, 4 hosts each.
        let mut adaptive_cycles = 0;
        for (switches, seed) in [(16, 0), (16, 1), (16, 2), (32, 0), (32, 1)] {
            let f = IrregularParams::with_links_per_switch(switches, 8, 4, 4, seed).build().unwrap();
            for lmc in [1, 2] {
                let lids = LidMap::assign(&f, lmc).unwrap();
                let r = Fa::default().route(&f, &lids).unwrap();
                let what = format!("{switches} switches, seed {seed}, LMC {lmc}");
                // Every LID from every CA port and every switch, no loop.
                let all = AnalysisOptions { dest_lids: LidSelection::All, ..Default::default() };
                let report = analyze(&f, &lids, &r.tables, &SlView::default(), &all).unwrap();
                assert!(report.paths.reach.is_clean(), "{what}: {:?}", report.paths.reach);
                assert!(report.switch_paths.is_clean(), "{what}: {:?}", report.switch_paths);
                check_routes(&f, &lids, &r.tables).unwrap();
                // The escape sub-network alone (base LIDs, switch LIDs too) has no credit loop.
                let base = AnalysisOptions { dest_lids: LidSelection::Base, cdg_switch_lids: true, ..Default::default() };
                let report = analyze(&f, &lids, &r.tables, &SlView::default(), &base).unwrap();
                assert!(!report.credit_loops.has_cycle(), "{what}: {:?}", report.credit_loops.cycle);
                // The adaptive offsets alone are minimal routing, which generally has one.
                let adaptive = AnalysisOptions { dest_lids: LidSelection::Offsets(vec![1]), ..Default::default() };
                let report = analyze(&f, &lids, &r.tables, &SlView::default(), &adaptive).unwrap();
                adaptive_cycles += usize::from(report.credit_loops.has_cycle());
                adaptive_is_minimal(&f, &lids, &r.tables).unwrap();
                escape_is_updn(&f, &lids, &r.tables, &Fa::default().updn).unwrap();
                // 1 to MR options at each of the switches² × 4 (switch, host) pairs.
                let dist = option_distribution(&f, &lids, &r.tables);
                let max = if lmc == 1 { 2 } else { 4 };
                assert!(dist.iter().all(|&(d, _)| (1..=max).contains(&d)), "{what}: {dist:?}");
                assert_eq!(dist.iter().map(|&(_, c)| c).sum::<usize>(), (switches * switches * 4) as usize);
            }
        }
        assert!(adaptive_cycles > 0, "minimal routing alone never had a credit loop: the check would prove nothing");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn random_fabrics_escape_is_updn_adaptive_minimal_all_reachable(
            seed in any::<u64>(), switches in 1usize..14, extra in 0usize..16, lmc in 1u8..4,
        ) {
            let f = testfab::random_connected(seed, switches, extra, 2);
            let lids = LidMap::assign(&f, lmc).unwrap();
            let r = Fa::default().route(&f, &lids).unwrap();
            check_routes(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            escape_is_updn(&f, &lids, &r.tables, &Fa::default().updn).map_err(TestCaseError::fail)?;
            adaptive_is_minimal(&f, &lids, &r.tables).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&r.labels, &PathLabels::escape_first(lmc));
        }
    }
}
