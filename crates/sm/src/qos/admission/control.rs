//! Admission control over a routed subnet: a connection's path is its LFT
//! route, and it is accepted only if every output port on it (source CA port
//! included) has the slots and entries (paper 001 §4.2).

use ibnetsim_fabric::{Fabric, LinkEnd, NodeId};

use super::table::{max_be_slots, PortState, Reservation, Shortfall, FRAME_SLOTS};
use super::{priority_of_sl, sl2vl, sl_of, TrafficClass, DATA_VLS};
use crate::analysis::{trace_route, RouteEnd};
use crate::error::SmError;
use crate::qos::vlarb::{VlArbConfig, HIGH_LIMIT_UNLIMITED};
use crate::qos::{PortLayout, Sl2VlMap};
use crate::subnet::Subnet;

/// Which link rate B_link is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateBasis {
    /// Baud × lanes (2.5 Gb/s for 1x SDR), as paper 001's Table 1.
    #[default]
    Signalling,
    /// After 8b/10b or 64b/66b encoding (2 Gb/s for 1x SDR).
    Data,
}

impl RateBasis {
    /// Parses `signalling` or `data`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "signalling" => Some(RateBasis::Signalling),
            "data" => Some(RateBasis::Data),
            _ => None,
        }
    }
}

/// Parameters of the admission control.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdmissionConfig {
    /// Share of the frame set aside for BE, 0..1 (paper: 0.2).
    pub be_share: f64,
    /// What B_link is.
    pub rate_basis: RateBasis,
    /// `LimitOfHighPriority` programmed on every port.
    pub high_limit: u8,
    /// Whether a full arbitration table refuses a connection.
    pub entry_limit: EntryLimit,
    /// Whether the source CA's output port is checked and reserved too.
    pub source_port: SourcePort,
}

/// Whether the 64 entries of a table limit admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EntryLimit {
    /// A connection is refused when its SL's entries and the free entries
    /// cannot hold its slots (IBA: 64 entries of weight at most 255).
    #[default]
    Table,
    /// Only the slot budget refuses; slots beyond the table are counted as
    /// overflow (paper 001 §4.2's claim that entries are no limitation, taken
    /// as the accounting rule).
    None,
    /// As [`EntryLimit::None`], except that a port where the connection's VL
    /// would have no entry at all refuses it: the IBA arbiter never serves a
    /// VL without an entry, so its connections would starve (and block their
    /// VL upstream). Only the last free entry going to another VL triggers it.
    Vl,
}

impl EntryLimit {
    /// Parses `table`, `none` or `vl`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "table" => Some(EntryLimit::Table),
            "none" => Some(EntryLimit::None),
            "vl" => Some(EntryLimit::Vl),
            _ => None,
        }
    }
}

/// Whether admission covers the source CA's output port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourcePort {
    /// Every output port of the path, the source CA port first.
    #[default]
    Checked,
    /// Switch output ports only (paper 001 §4.2 has "the control unit of each
    /// switch" accept or reject): the source CA port reserves nothing.
    Unchecked,
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        AdmissionConfig {
            be_share: 0.2,
            rate_basis: RateBasis::Signalling,
            high_limit: HIGH_LIMIT_UNLIMITED,
            entry_limit: EntryLimit::Table,
            source_port: SourcePort::Checked,
        }
    }
}

impl AdmissionConfig {
    /// BE slots: the share of the frame, to the nearest slot.
    pub fn be_slots(&self) -> Result<u32, SmError> {
        if !(0.0..=1.0).contains(&self.be_share) {
            return Err(SmError::option("be_share", format!("{} is not a fraction in 0..=1", self.be_share)));
        }
        let slots = (self.be_share * FRAME_SLOTS as f64).round() as u32;
        if slots > max_be_slots() {
            return Err(SmError::option(
                "be_share",
                format!(
                    "{} of the frame is {slots} slots, which leaves no table entry for CH traffic (at most {} slots, {:.4})",
                    self.be_share,
                    max_be_slots(),
                    max_be_slots() as f64 / FRAME_SLOTS as f64
                ),
            ));
        }
        Ok(slots)
    }
}

/// A connection request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connection {
    /// Source CA.
    pub src: NodeId,
    /// Destination CA.
    pub dst: NodeId,
    /// Traffic class.
    pub class: TrafficClass,
    /// Mean bandwidth in bit/s.
    pub bw_bps: u64,
}

/// Handle of an accepted connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnId(pub u32);

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejection {
    /// The output port that lacked resources.
    pub at: LinkEnd,
    /// Position of that port on the path (0 = the source CA port).
    pub hop: usize,
    /// What it lacked.
    pub shortfall: Shortfall,
}

/// The outcome of [`Admission::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Accepted, with the SL the source must use.
    Accepted {
        /// Handle for [`Admission::release`].
        id: ConnId,
        /// The connection's SL.
        sl: u8,
    },
    /// Refused; nothing stays reserved.
    Rejected(Rejection),
}

/// One port's use, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortUsage {
    /// The port.
    pub end: LinkEnd,
    /// B_link in bit/s.
    pub link_bps: u64,
    /// Slots reserved by DB/DBTS.
    pub reserved: u32,
    /// Slots DB/DBTS may reserve.
    pub budget: u32,
    /// Entries used in the high table.
    pub high_entries: usize,
    /// Entries used in the low table (BE and CH included).
    pub low_entries: usize,
    /// Reserved slots no table entry holds ([`EntryLimit::None`] only).
    pub overflow: u32,
}

#[derive(Debug, Clone)]
struct Held {
    holds: Vec<(u32, Reservation)>,
}

/// The admission state of a whole subnet.
#[derive(Debug, Clone)]
pub struct Admission<'a> {
    fabric: &'a Fabric,
    subnet: &'a Subnet,
    config: AdmissionConfig,
    layout: PortLayout,
    /// Per port slot: state, `None` for ports without a cable.
    ports: Vec<Option<PortState>>,
    link_bps: Vec<u64>,
    conns: Vec<Option<Held>>,
    free_ids: Vec<u32>,
    empty: PortState,
}

impl<'a> Admission<'a> {
    /// Every cabled port of `fabric` with only its BE and CH entries.
    pub fn new(fabric: &'a Fabric, subnet: &'a Subnet, config: AdmissionConfig) -> Result<Self, SmError> {
        let empty = PortState::new(config.be_slots()?);
        let layout = PortLayout::uniform(fabric, DATA_VLS)?;
        let mut ports = vec![None; layout.num_slots()];
        let mut link_bps = vec![0; layout.num_slots()];
        for n in fabric.ids() {
            for (p, l) in fabric.node(n).connected_ports() {
                let spec = &fabric.link(l).spec;
                let rate = match config.rate_basis {
                    RateBasis::Signalling => spec.signalling_rate_bps(),
                    RateBasis::Data => spec.data_rate_bps(),
                };
                let i = layout.slot(n, p);
                ports[i] = Some(empty.clone());
                link_bps[i] = rate.round() as u64;
            }
        }
        Ok(Admission { fabric, subnet, config, layout, ports, link_bps, conns: Vec::new(), free_ids: Vec::new(), empty })
    }

    /// The configuration.
    pub fn config(&self) -> &AdmissionConfig {
        &self.config
    }

    /// The fabric.
    pub fn fabric(&self) -> &'a Fabric {
        self.fabric
    }

    /// The output ports a connection from `src` to `dst` leaves through, the
    /// source CA port first: the LFT route to `dst`'s base LID.
    pub fn path(&self, src: NodeId, dst: NodeId) -> Result<Vec<LinkEnd>, SmError> {
        let f = self.fabric;
        let name = |n: NodeId| f.node(n).name.clone();
        for (what, n) in [("source", src), ("destination", dst)] {
            if n.index() >= f.num_nodes() || !f.node(n).kind.is_ca() {
                return Err(SmError::option(what, format!("'{}' is not a channel adapter", name(n))));
            }
        }
        if src == dst {
            return Err(SmError::option("destination", format!("'{}' is also the source", name(dst))));
        }
        let port_of = |n: NodeId| {
            f.node(n).connected_ports().next().map(|(p, _)| p).ok_or_else(|| {
                SmError::option("connection", format!("channel adapter '{}' has no cabled port", name(n)))
            })
        };
        let (sport, dport) = (port_of(src)?, port_of(dst)?);
        let dlid = self
            .subnet
            .lids
            .of_port(dst, dport)
            .ok_or_else(|| SmError::option("destination", format!("'{}' has no LID", name(dst))))?
            .base;
        let route = trace_route(f, &self.subnet.lids, &self.subnet.tables, LinkEnd { node: src, port: sport }, dlid);
        match route.end {
            RouteEnd::Delivered(_) => Ok(route.hops),
            end => Err(SmError::option(
                "connection",
                format!("no route from '{}' to '{}' in the forwarding tables ({end:?})", name(src), name(dst)),
            )),
        }
    }

    /// Slots a connection of `bw_bps` needs at output port `end`; `None` for a port without a cable.
    pub fn slots_at(&self, end: LinkEnd, bw_bps: u64) -> Option<u32> {
        match self.link_bps.get(self.layout.slot(end.node, end.port)) {
            Some(&rate) if rate > 0 => Some(super::slots_for(bw_bps, rate)),
            _ => None,
        }
    }

    /// Tries to establish `c`; rejection leaves every port as it was.
    /// Errors are requests that cannot be routed at all.
    pub fn admit(&mut self, c: &Connection) -> Result<Decision, SmError> {
        let path = self.path(c.src, c.dst)?;
        self.admit_on(c, &path)
    }

    /// [`Self::admit`] on a path already traced (from [`Self::path`]).
    pub fn admit_on(&mut self, c: &Connection, path: &[LinkEnd]) -> Result<Decision, SmError> {
        self.admit_on_sl(c, path, sl_of(c.class, c.bw_bps))
    }

    /// [`Self::admit`] with the SL given rather than derived from the
    /// bandwidth: paper 001 §5.2 draws SL 2's bandwidths from 64 kb/s, below
    /// its own §4.1 class limit. `sl` must belong to `c.class` ([`sl_of`] of
    /// some bandwidth).
    pub fn admit_as(&mut self, c: &Connection, sl: u8) -> Result<Decision, SmError> {
        if sl_of(c.class, 0) / 4 != sl / 4 || (!c.class.reserves() && sl != sl_of(c.class, 0)) {
            return Err(SmError::option("sl", format!("SL {sl} does not carry {} traffic", c.class.name())));
        }
        let path = self.path(c.src, c.dst)?;
        self.admit_on_sl(c, &path, sl)
    }

    fn admit_on_sl(&mut self, c: &Connection, path: &[LinkEnd], sl: u8) -> Result<Decision, SmError> {
        let mut holds = Vec::new();
        if c.class.reserves() {
            let prio = priority_of_sl(sl);
            let first = match self.config.source_port {
                SourcePort::Checked => 0,
                SourcePort::Unchecked => 1,
            };
            for (hop, &end) in path.iter().enumerate().skip(first) {
                let i = self.layout.slot(end.node, end.port);
                let slots = super::slots_for(c.bw_bps, self.link_bps[i]);
                let port = self.ports[i].as_mut().expect("a routed port is cabled");
                let tried = match self.config.entry_limit {
                    EntryLimit::Table => port.try_reserve(prio, sl, slots),
                    EntryLimit::None => port.reserve_slots_only(prio, sl, slots),
                    EntryLimit::Vl => port.reserve_slots_with_entry(prio, sl, slots),
                };
                match tried {
                    Ok(r) => holds.push((i as u32, r)),
                    Err(shortfall) => {
                        self.give_back(&holds);
                        return Ok(Decision::Rejected(Rejection { at: end, hop, shortfall }));
                    }
                }
            }
        }
        let held = Held { holds };
        let id = match self.free_ids.pop() {
            Some(id) => {
                self.conns[id as usize] = Some(held);
                id
            }
            None => {
                self.conns.push(Some(held));
                self.conns.len() as u32 - 1
            }
        };
        Ok(Decision::Accepted { id: ConnId(id), sl })
    }

    fn give_back(&mut self, holds: &[(u32, Reservation)]) {
        for (i, r) in holds {
            self.ports[*i as usize].as_mut().expect("held port").release(r);
        }
    }

    /// Tears down an accepted connection; false if `id` is not established.
    pub fn release(&mut self, id: ConnId) -> bool {
        let Some(held) = self.conns.get_mut(id.0 as usize).and_then(Option::take) else { return false };
        self.give_back(&held.holds);
        self.free_ids.push(id.0);
        true
    }

    /// Connections established now.
    pub fn established(&self) -> usize {
        self.conns.iter().filter(|c| c.is_some()).count()
    }

    /// The state of output port `end`, `None` when it has no cable.
    pub fn port(&self, end: LinkEnd) -> Option<&PortState> {
        self.ports.get(self.layout.slot(end.node, end.port)).and_then(Option::as_ref)
    }

    /// Every cabled port with its state, in node and port order.
    pub fn ports(&self) -> impl Iterator<Item = (LinkEnd, &PortState)> + '_ {
        self.fabric.ids().flat_map(move |n| {
            self.fabric.node(n).connected_ports().filter_map(move |(p, _)| {
                let end = LinkEnd { node: n, port: p };
                self.port(end).map(|s| (end, s))
            })
        })
    }

    /// Use of every cabled port.
    pub fn usage(&self) -> Vec<PortUsage> {
        self.ports()
            .map(|(end, s)| PortUsage {
                end,
                link_bps: self.link_bps[self.layout.slot(end.node, end.port)],
                reserved: s.reserved,
                budget: s.budget,
                high_entries: s.high.used_entries(),
                low_entries: s.low.used_entries(),
                overflow: s.overflow,
            })
            .collect()
    }

    /// True when every port is as [`Self::new`] left it.
    pub fn is_empty_state(&self) -> bool {
        self.ports.iter().flatten().all(|p| *p == self.empty)
    }

    /// The arbitration settings to program on `end`.
    pub fn vlarb(&self, end: LinkEnd) -> Option<VlArbConfig> {
        self.port(end).map(|s| VlArbConfig {
            high: s.high.entries().to_vec(),
            low: s.low.entries().to_vec(),
            limit_of_high_priority: self.config.high_limit,
        })
    }

    /// The arbitration settings of a port no connection uses.
    pub fn idle_vlarb(&self) -> VlArbConfig {
        VlArbConfig {
            high: self.empty.high.entries().to_vec(),
            low: self.empty.low.entries().to_vec(),
            limit_of_high_priority: self.config.high_limit,
        }
    }

    /// The SL2VL table of every port.
    pub fn sl2vl(&self) -> Sl2VlMap {
        sl2vl()
    }
}
