//! Channel load of a routing under a traffic matrix, and the throughput bound
//! it implies.
//!
//! Dally & Towles, *Principles and Practices of Interconnection Networks*,
//! §3.3: with every source injecting at rate 1, the load γ_c of channel c is
//! the traffic its routes put on it, and no routing can accept more than
//! 1 / max γ_c of the offered traffic. Here a load is relative to the
//! channel's own data rate and sources inject at their own link's data rate,
//! so a 12x link carries three times what a 4x one does and load 1.0 means the
//! link is exactly full. Traffic follows the forwarding tables (the routes to
//! one LID form a tree, so the whole matrix costs O(LIDs × switches)); pairs
//! whose route is not delivered put no load anywhere and are counted apart.

use ibnetsim_fabric::{Fabric, LinkEnd};
use serde::Serialize;

use super::trace::{port_name, Attach, DestTree, DirLink, Fate, Net, NONE};
use crate::error::SmError;
use crate::lft::ForwardingTables;
use crate::lid::{Lid, LidMap};

/// One entry of a traffic matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flow {
    /// Sending CA port.
    pub src: LinkEnd,
    /// Destination LID (of a CA port).
    pub dlid: Lid,
    /// Rate as a fraction of the source port's link data rate.
    pub rate: f64,
}

/// Which LIDs of a destination port uniform traffic is sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadLids {
    /// The base LID only, as most MPI setups do.
    #[default]
    Base,
    /// An equal share to each of the port's `2^LMC` LIDs.
    Spread,
}

/// Load of every directed link.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelLoads {
    /// Load of each directed link, indexed by [`DirLink`]: 1.0 is the link's data rate.
    pub loads: Vec<f64>,
    /// Sum of the flows' rates (fractions of their sources' link rates).
    pub offered: f64,
    /// Part of `offered` whose routes are not delivered.
    pub unrouted: f64,
}

impl ChannelLoads {
    /// The most loaded directed link, if any carries load. Of links whose loads
    /// differ only by rounding, the first is taken, so equal loads summed in a
    /// different order still name the same link.
    pub fn max(&self) -> Option<(DirLink, f64)> {
        let mut best: Option<(DirLink, f64)> = None;
        for (i, &l) in self.loads.iter().enumerate() {
            let higher = match best {
                None => l > 0.0,
                Some((_, b)) => l > b * (1.0 + 1e-9),
            };
            if higher {
                best = Some((DirLink(i as u32), l));
            }
        }
        best
    }

    /// How far every rate of the matrix can be scaled before some link is full: 1 / max load.
    pub fn max_scale(&self) -> f64 {
        self.max().map_or(f64::INFINITY, |(_, l)| 1.0 / l)
    }

    /// [`Self::max_scale`] capped at 1: the fraction of injection bandwidth
    /// every source can sustain when the matrix is each source's full-rate pattern.
    pub fn throughput_bound(&self) -> f64 {
        self.max_scale().min(1.0)
    }

    /// Mean load over the directed links `keep` selects.
    pub fn mean_over(&self, keep: impl Fn(DirLink) -> bool) -> f64 {
        let (mut sum, mut n) = (0.0, 0usize);
        for (i, &l) in self.loads.iter().enumerate() {
            if keep(DirLink(i as u32)) {
                sum += l;
                n += 1;
            }
        }
        if n == 0 {
            0.0
        } else {
            sum / n as f64
        }
    }
}

/// Bits per second on each directed link and per switch, pushed down a [`DestTree`].
struct Accumulator {
    bps: Vec<f64>,
    flow: Vec<f64>,
}

impl Accumulator {
    fn new(net: &Net<'_>) -> Self {
        Accumulator { bps: vec![0.0; DirLink::count(net.fabric)], flow: vec![0.0; net.switches.len()] }
    }

    /// Carries what `flow` holds at each switch (traffic entering there) to the destination.
    fn push(&mut self, tree: &DestTree) {
        for &s in tree.order.iter().rev() {
            let f = std::mem::take(&mut self.flow[s as usize]);
            if f == 0.0 {
                continue;
            }
            debug_assert!(matches!(tree.fate[s as usize], Fate::Reached(_)));
            let out = tree.out[s as usize];
            if out != NONE {
                self.bps[out as usize] += f;
            }
            let next = tree.next[s as usize];
            if next != NONE {
                self.flow[next as usize] += f;
            }
        }
    }

    fn finish(self, fabric: &Fabric, offered: f64, unrouted: f64) -> ChannelLoads {
        let loads = self
            .bps
            .iter()
            .enumerate()
            .map(|(i, &b)| b / fabric.link(DirLink(i as u32).link()).spec.data_rate_bps())
            .collect();
        ChannelLoads { loads, offered, unrouted }
    }
}

/// Every CA port sends an equal share of its link rate to every other CA port.
pub(crate) fn uniform(net: &Net<'_>, lids: LoadLids) -> ChannelLoads {
    let n = net.endpoints.len();
    let mut acc = Accumulator::new(net);
    if n < 2 {
        return acc.finish(net.fabric, 0.0, 0.0);
    }
    let nsw = net.switches.len();
    let mut cap_at = vec![0.0f64; nsw];
    for s in 0..nsw as u32 {
        cap_at[s as usize] = net.attached(s).iter().map(|&e| net.endpoints[e as usize].rate_bps).sum();
    }
    // Each source's injection link carries the shares of every destination
    // its switch delivers: `routed_at[s]` minus the shares it would send itself.
    let mut routed_at = vec![0.0f64; nsw];
    let mut routed_self = vec![0.0f64; n];
    let mut unrouted = 0.0;
    let mut tree = DestTree::new(nsw);
    for (di, dst) in net.endpoints.iter().enumerate() {
        let (first, count) = match lids {
            LoadLids::Base => (dst.base, 1),
            LoadLids::Spread => (dst.base, dst.lids),
        };
        let w = 1.0 / (n - 1) as f64 / count as f64;
        let home = match dst.attach {
            Attach::Switch(t) => t,
            _ => NONE,
        };
        for k in 0..count {
            let d = first + k as Lid;
            tree.build(net, d);
            for s in 0..nsw as u32 {
                let srcs = net.attached(s).len() - usize::from(s == home);
                if srcs == 0 {
                    continue;
                }
                if let Fate::Reached(_) = tree.fate[s as usize] {
                    let own = if s == home { dst.rate_bps } else { 0.0 };
                    acc.flow[s as usize] = w * (cap_at[s as usize] - own);
                    routed_at[s as usize] += w;
                    if s == home {
                        routed_self[di] += w;
                    }
                } else {
                    unrouted += w * srcs as f64;
                }
            }
            acc.push(&tree);
            for &si in &net.direct {
                let src = &net.endpoints[si as usize];
                if si as usize == di {
                    continue;
                }
                match src.attach {
                    Attach::Switch(_) => {}
                    Attach::Ca(peer) if peer == dst.end => acc.bps[src.up as usize] += w * src.rate_bps,
                    Attach::Ca(_) | Attach::Uncabled => unrouted += w,
                }
            }
        }
    }
    for (si, src) in net.endpoints.iter().enumerate() {
        if let Attach::Switch(s) = src.attach {
            acc.bps[src.up as usize] += src.rate_bps * (routed_at[s as usize] - routed_self[si]);
        }
    }
    acc.finish(net.fabric, n as f64, unrouted)
}

/// Loads of an arbitrary traffic matrix.
pub(crate) fn traffic(net: &Net<'_>, flows: &[Flow]) -> Result<ChannelLoads, SmError> {
    let mut src_ep = Vec::with_capacity(flows.len());
    for (i, f) in flows.iter().enumerate() {
        let key = || format!("traffic[{i}]");
        let e = net
            .lids
            .of_port(f.src.node, f.src.port)
            .filter(|_| f.src.node.index() < net.fabric.num_nodes() && net.fabric.node(f.src.node).kind.is_ca())
            .and_then(|p| net.endpoint_of(p.base))
            .ok_or_else(|| {
                SmError::option(
                    key(),
                    format!("source node {} port {} is not a CA port with a LID", f.src.node.0, f.src.port),
                )
            })?;
        if net.endpoint_of(f.dlid).is_none() {
            return Err(SmError::option(key(), format!("destination LID {:#06x} is not the LID of a CA port", f.dlid)));
        }
        if !(f.rate.is_finite() && f.rate >= 0.0) {
            return Err(SmError::option(
                key(),
                format!("rate {} is not a finite non-negative fraction of the link rate", f.rate),
            ));
        }
        src_ep.push(e);
    }
    let mut by_dlid: Vec<u32> = (0..flows.len() as u32).collect();
    by_dlid.sort_by_key(|&i| flows[i as usize].dlid);
    let mut acc = Accumulator::new(net);
    let mut tree = DestTree::new(net.switches.len());
    let (mut offered, mut unrouted) = (0.0, 0.0);
    for group in by_dlid.chunk_by(|&a, &b| flows[a as usize].dlid == flows[b as usize].dlid) {
        let d = flows[group[0] as usize].dlid;
        let dst = net.endpoint_of(d).expect("checked above");
        tree.build(net, d);
        for &i in group {
            let (f, si) = (&flows[i as usize], src_ep[i as usize]);
            if si == dst {
                // Loopback never leaves the HCA.
                continue;
            }
            offered += f.rate;
            let src = &net.endpoints[si as usize];
            let bps = f.rate * src.rate_bps;
            match src.attach {
                Attach::Switch(s) if matches!(tree.fate[s as usize], Fate::Reached(_)) => {
                    acc.bps[src.up as usize] += bps;
                    acc.flow[s as usize] += bps;
                }
                Attach::Ca(peer) if peer == net.endpoints[dst as usize].end => acc.bps[src.up as usize] += bps,
                _ => unrouted += f.rate,
            }
        }
        acc.push(&tree);
    }
    Ok(acc.finish(net.fabric, offered, unrouted))
}

/// `from/port -> to/port` of a directed link.
pub(crate) fn dirlink_name(fabric: &Fabric, dl: DirLink) -> String {
    format!("{} -> {}", port_name(fabric, dl.from(fabric)), port_name(fabric, dl.to(fabric)))
}

/// The channel-load figures `ibnetsim check` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelLoadReport {
    /// Which LIDs of each destination port the uniform traffic uses.
    pub lids: LoadLids,
    /// Highest load (1.0 = the link's data rate, every source injecting at full rate).
    pub max_load: f64,
    /// The directed link carrying it (`from/port -> to/port`).
    pub max_link: Option<String>,
    /// Mean load over every directed link.
    pub mean_load: f64,
    /// Mean load over directed links between two switches.
    pub mean_switch_link_load: f64,
    /// Directed links carrying some traffic.
    pub loaded_links: u64,
    /// 1 / max load, capped at 1: the uniform traffic every source can sustain.
    pub throughput_bound: f64,
    /// Fraction of the offered traffic whose routes are not delivered.
    pub unrouted_fraction: f64,
}

impl ChannelLoadReport {
    /// Summarises uniform loads.
    pub fn new(fabric: &Fabric, loads: &ChannelLoads, lids: LoadLids) -> Self {
        let max = loads.max();
        let is_switch = |e: LinkEnd| fabric.node(e.node).kind.is_switch();
        ChannelLoadReport {
            lids,
            max_load: max.map_or(0.0, |m| m.1),
            max_link: max.map(|m| dirlink_name(fabric, m.0)),
            mean_load: loads.mean_over(|_| true),
            mean_switch_link_load: loads.mean_over(|dl| is_switch(dl.from(fabric)) && is_switch(dl.to(fabric))),
            loaded_links: loads.loads.iter().filter(|&&l| l > 0.0).count() as u64,
            throughput_bound: loads.throughput_bound(),
            unrouted_fraction: if loads.offered > 0.0 { loads.unrouted / loads.offered } else { 0.0 },
        }
    }
}

/// Uniform all-to-all loads of a configured subnet.
pub fn uniform_loads(
    fabric: &Fabric,
    lids: &LidMap,
    tables: &ForwardingTables,
    which: LoadLids,
) -> Result<ChannelLoads, SmError> {
    Ok(uniform(&Net::new(fabric, lids, tables)?, which))
}

/// Loads of the traffic matrix `flows` (see [`Flow`]); an unknown source or
/// destination, or a negative or non-finite rate, is an error naming the entry.
pub fn traffic_loads(
    fabric: &Fabric,
    lids: &LidMap,
    tables: &ForwardingTables,
    flows: &[Flow],
) -> Result<ChannelLoads, SmError> {
    traffic(&Net::new(fabric, lids, tables)?, flows)
}
