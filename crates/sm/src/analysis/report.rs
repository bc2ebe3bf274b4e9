//! The report `ibnetsim check` prints: every analysis of a configured subnet in
//! one serializable value, with the verdict and a short human-readable form.
//!
//! A defect is something that loses or blocks data traffic: a CA-to-CA route
//! that is not delivered, a forwarding loop in the tables of a CA LID, a
//! credit loop (cycle in the channel dependency graph), or a route whose SL
//! maps to VL15. Switch LIDs carry only management traffic, which a subnet
//! manager sends directed-route, so problems there are warnings.
//! Routes that need an entry a loaded dump leaves out
//! ([`crate::routing::Routing::not_in_dump`]) are unknown, neither delivered
//! nor lost: they are counted apart and make a warning, not a defect.

use std::fmt;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::cdg::CdgReport;
use super::channel_load::{ChannelLoadReport, LoadLids};
use super::paths::{DefectKind, PathReport, Reachability};

/// Sizes of what was checked.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FabricSummary {
    /// Switches.
    pub switches: u64,
    /// CA ports with LIDs (the traffic endpoints).
    pub ca_ports: u64,
    /// Cables.
    pub links: u64,
    /// LIDs of CA ports.
    pub ca_lids: u64,
    /// LIDs of switches.
    pub switch_lids: u64,
    /// LID mask control of CA ports.
    pub lmc: u8,
    /// The SLtoVL tables and route SLs the credit-loop check used.
    pub sl_config: String,
}

/// Everything the analysis found.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisReport {
    /// What was checked.
    pub fabric: FabricSummary,
    /// CA-to-CA routes: reachability, loops, lengths.
    pub paths: PathReport,
    /// Switch-to-switch-LID routes (warnings only).
    pub switch_paths: Reachability,
    /// Uniform all-to-all channel load.
    pub channel_load: ChannelLoadReport,
    /// Channel dependency graph and its cycles.
    pub credit_loops: CdgReport,
    /// The escape channels' dependency graph, when the routing has escape
    /// options (see [`super::AnalysisOptions::escape_offsets`]).
    pub escape: Option<CdgReport>,
}

impl AnalysisReport {
    /// Whether data traffic can be lost or deadlock (see the module docs).
    pub fn has_defects(&self) -> bool {
        let r = &self.paths.reach;
        r.unreachable_pairs > 0
            || r.loop_pairs > 0
            || r.lids_with_loops > 0
            || self.escape.as_ref().unwrap_or(&self.credit_loops).has_cycle()
            || self.credit_loops.vl15_turns > 0
    }

    /// Whether switch LIDs have problems, or a loaded dump leaves out entries
    /// that routes need (not defects; see the module docs).
    pub fn has_warnings(&self) -> bool {
        !self.switch_paths.is_clean() || self.paths.reach.not_in_dump_pairs > 0
    }
}

impl Serialize for AnalysisReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("AnalysisReport", 8)?;
        st.serialize_field("has_defects", &self.has_defects())?;
        st.serialize_field("has_warnings", &self.has_warnings())?;
        st.serialize_field("fabric", &self.fabric)?;
        st.serialize_field("paths", &self.paths)?;
        st.serialize_field("switch_paths", &self.switch_paths)?;
        st.serialize_field("channel_load", &self.channel_load)?;
        st.serialize_field("credit_loops", &self.credit_loops)?;
        st.serialize_field("escape", &self.escape)?;
        st.end()
    }
}

/// `n` with thousands separators, as people read counts.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut groups: Vec<&str> = Vec::new();
    let mut end = digits.len();
    while end > 0 {
        let start = end.saturating_sub(3);
        groups.push(&digits[start..end]);
        end = start;
    }
    groups.reverse();
    groups.join(",")
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// The reachability lines shared by CA and switch routes.
fn write_reach(f: &mut fmt::Formatter<'_>, what: &str, r: &Reachability) -> fmt::Result {
    write!(f, "{what}: {} to {}: ", plural(r.pairs, "pair", "pairs"), plural(r.destination_lids, "LID", "LIDs"))?;
    if r.pairs == r.reachable_pairs {
        f.write_str("all delivered")?;
    } else {
        write!(f, "{} delivered", count(r.reachable_pairs))?;
        if r.unreachable_pairs > 0 {
            let kinds: Vec<String> = [
                (r.no_path_pairs, DefectKind::NoPath),
                (r.uncabled_pairs, DefectKind::Uncabled),
                (r.wrong_node_pairs, DefectKind::WrongNode),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, k)| format!("{} {}", k.label(), count(*n)))
            .collect();
            write!(f, ", {} unreachable ({})", count(r.unreachable_pairs), kinds.join(", "))?;
        }
        if r.loop_pairs > 0 {
            write!(f, ", {} in forwarding loops", count(r.loop_pairs))?;
        }
        if r.not_in_dump_pairs > 0 {
            write!(f, ", {} not in the dump (unknown, see the notes)", count(r.not_in_dump_pairs))?;
        }
    }
    match r.lids_with_loops {
        0 => writeln!(f, ", no forwarding loop")?,
        n => writeln!(f, "; the tables of {} hold a forwarding loop", plural(n, "LID", "LIDs"))?,
    }
    for e in &r.examples {
        let kind = e.kind.map_or("route", |k| k.label());
        writeln!(f, "  {kind} (LID {:#06x} of {}): {}", e.dlid, e.dst, e.route)?;
    }
    Ok(())
}

/// Cycle steps printed before the rest is summarised (the JSON has them all).
const CYCLE_LINES: usize = 24;

/// The lines of one dependency graph: its size, and a cycle if it has one,
/// with what the cycle means.
fn write_cdg(f: &mut fmt::Formatter<'_>, what: &str, k: &CdgReport, consequence: &str) -> fmt::Result {
    let vls: Vec<String> = k.vls_used.iter().map(|v| v.to_string()).collect();
    let sizes = format!(
        "{}, {}, VLs {}; {}",
        plural(k.channels, "channel", "channels"),
        plural(k.dependencies, "dependency", "dependencies"),
        if vls.is_empty() { "none".to_string() } else { vls.join(",") },
        if k.switch_lids { "routes from and to switches included" } else { "CA-to-CA routes" }
    );
    if !k.has_cycle() {
        return writeln!(f, "{what}: none ({sizes})");
    }
    writeln!(
        f,
        "{what}: CYCLE: {} with {} ({sizes}); {consequence}",
        plural(k.cyclic_sccs, "cyclic component", "cyclic components"),
        plural(k.channels_in_cycles, "channel", "channels"),
    )?;
    if let Some(cycle) = &k.cycle {
        writeln!(f, "  cycle of {}, each waiting on the next:", plural(cycle.len() as u64, "channel", "channels"))?;
        for s in cycle.iter().take(CYCLE_LINES) {
            writeln!(f, "    {} -> {} VL{} (routes to LID {:#06x})", s.from, s.to, s.vl, s.dlid)?;
        }
        if cycle.len() > CYCLE_LINES {
            writeln!(f, "    ... {} more", cycle.len() - CYCLE_LINES)?;
        }
    }
    Ok(())
}

impl fmt::Display for AnalysisReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fb = &self.fabric;
        writeln!(
            f,
            "fabric: {}, {}, {}; {} (LMC {}) and {}; {}",
            plural(fb.switches, "switch", "switches"),
            plural(fb.ca_ports, "CA port", "CA ports"),
            plural(fb.links, "link", "links"),
            plural(fb.ca_lids, "CA LID", "CA LIDs"),
            fb.lmc,
            plural(fb.switch_lids, "switch LID", "switch LIDs"),
            fb.sl_config,
        )?;
        write_reach(f, "CA routes", &self.paths.reach)?;
        if !self.switch_paths.is_clean() {
            f.write_str("warning: ")?;
        }
        write_reach(f, "switch-LID routes", &self.switch_paths)?;

        let p = &self.paths;
        if p.reach.reachable_pairs > 0 {
            let hist: Vec<String> = p
                .hop_histogram
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(h, c)| format!("{h}:{}", count(*c)))
                .collect();
            writeln!(
                f,
                "path length (switch hops): min {}, mean {:.3}, max {}; histogram {}",
                p.min_hops,
                p.mean_hops,
                p.max_hops,
                hist.join(" ")
            )?;
            write!(
                f,
                "  non-minimal: {} ({:.2}%), mean stretch {:.3}, max {:.3}",
                plural(p.non_minimal_pairs, "pair", "pairs"),
                100.0 * p.non_minimal_fraction,
                p.mean_stretch,
                p.max_stretch
            )?;
            if let Some(w) = &p.worst_stretch {
                write!(f, " ({} hops where {} would do: {})", w.hops, w.min_hops, w.route.route)?;
            }
            writeln!(f)?;
        }

        let c = &self.channel_load;
        let lids = match c.lids {
            LoadLids::Base => "base LIDs",
            LoadLids::Spread => "spread over all LIDs",
        };
        write!(f, "channel load (uniform all-to-all, {lids}): ")?;
        match &c.max_link {
            Some(l) => write!(f, "max {:.3} on {l}", c.max_load)?,
            None => f.write_str("no traffic")?,
        }
        write!(
            f,
            ", mean {:.3} (switch-to-switch {:.3}); throughput bound {:.4}",
            c.mean_load, c.mean_switch_link_load, c.throughput_bound
        )?;
        if c.unrouted_fraction > 0.0 {
            write!(f, "; {:.2}% of the traffic has no route", 100.0 * c.unrouted_fraction)?;
        }
        writeln!(f)?;

        let k = &self.credit_loops;
        match &self.escape {
            None => write_cdg(f, "credit loops", k, "the routing can deadlock")?,
            Some(e) => {
                write_cdg(f, "credit loops (every LID routed alone)", k, "switches that forward on the DLID's entry alone can deadlock")?;
                write_cdg(
                    f,
                    "escape channels (Duato's condition for fully adaptive switches)",
                    e,
                    "fully adaptive routing can deadlock",
                )?;
            }
        }
        if k.vl15_turns > 0 {
            writeln!(
                f,
                "  {} send data on VL15 (dropped), e.g. {}",
                plural(k.vl15_turns, "turn", "turns"),
                k.vl15_example.as_deref().unwrap_or("?")
            )?;
        }
        write!(
            f,
            "verdict: {}",
            match (self.has_defects(), self.has_warnings()) {
                (true, _) => "DEFECTS FOUND",
                (false, true) if self.paths.reach.not_in_dump_pairs > 0 => {
                    "no defect in what the dump lists (some routes need entries it leaves out)"
                }
                (false, true) => "ok for data traffic (see the switch-LID warning)",
                (false, false) => "ok",
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_get_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(3_777_192), "3,777,192");
        assert_eq!(plural(1, "pair", "pairs"), "1 pair");
        assert_eq!(plural(2, "pair", "pairs"), "2 pairs");
    }
}
