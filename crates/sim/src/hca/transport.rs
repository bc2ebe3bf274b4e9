//! The transport layer at the HCAs: flows (queue pairs), messages, and the
//! replies a destination sends back through the fabric.
//!
//! A *flow* is one (source host, destination host, SL, class) send queue, as
//! an IBA reliable connection would be; its data packets carry consecutive
//! PSNs from 0. A *message* is a run of PSNs: a trace message or a
//! closed-loop message split into MTU-sized packets, or (when replies are on)
//! one open-loop packet. The destination keeps per-flow state (the next PSN it
//! expects, packets seen out of order, and how many packets of each message
//! are still to come).
//!
//! Replies are packets of their own kind (ACK, NACK, CN) on `reply_sl`,
//! counted as traffic in the class `transport`. With `ack = "packet"` the
//! destination acknowledges every data packet, with `ack = "message"` every
//! complete message; a message then completes when its acknowledgement is back
//! at the source, otherwise when its last packet is delivered. The completion
//! time (generation of the message → completion) is a per-class metric.
//!
//! There is no retransmission: a message one of whose packets (or
//! acknowledgements) is dropped — by a lifetime limit, a routing hole — is
//! given up as lost (counted in `SimResults.transport.lost_messages`), and a
//! closed-loop source sends its next message as after a completion.
//!
//! Flows are found by a hash lookup once per message, never per packet, and
//! their state grows only when a new (source, destination) pair first talks.

use std::collections::{HashMap, VecDeque};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::packet::{Packet, PacketKind};

/// Which acknowledgements a destination sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AckMode {
    /// None: a message completes when its last packet is delivered.
    #[default]
    None,
    /// One ACK per data packet; a message completes when all its ACKs are back.
    Packet,
    /// One ACK per complete message, when its last packet is delivered.
    Message,
}

impl AckMode {
    /// Registry names.
    pub const NAMES: &'static [&'static str] = &["none", "packet", "message"];
}

/// The transport layer (`[transport]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TransportConfig {
    /// Acknowledgements: `none`, `packet` or `message`.
    pub ack: AckMode,
    /// SL of replies (ACKs, NACKs and congestion notifications), 0..=15.
    #[schemars(range(max = 15))]
    pub reply_sl: u8,
    /// Payload bytes of a reply: the AETH (4 B) by default, so a reply is
    /// 30 B on the wire before extra headers.
    pub reply_payload_bytes: u32,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig { ack: AckMode::None, reply_sl: 0, reply_payload_bytes: 4 }
    }
}

/// What names a flow: source and destination hosts, SL and class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FlowKey {
    pub src: u32,
    pub dst: u32,
    pub sl: u8,
    pub class: u8,
}

/// One message not yet complete.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outstanding {
    first_psn: u32,
    last_psn: u32,
    gen_time: Time,
    /// Earliest injection among its packets delivered so far: once all are
    /// in, when its first packet's first byte went onto the source link.
    first_inject: Time,
    /// Packets not yet delivered at the destination.
    packets_left: u32,
    /// Acknowledgements not yet back at the source.
    acks_left: u32,
    /// Closed-loop source to tell on completion, or `NONE`.
    source: u32,
}

impl Outstanding {
    /// Whether `psn` is one of this message's packets (PSNs wrap at 2^32).
    #[inline]
    fn holds(&self, psn: u32) -> bool {
        psn.wrapping_sub(self.first_psn) <= self.last_psn.wrapping_sub(self.first_psn)
    }
}

/// One flow's state at both ends.
#[derive(Debug, Clone)]
pub(crate) struct Flow {
    pub class: u8,
    /// Next PSN the source gives.
    next_psn: u32,
    /// Next PSN the destination expects in order.
    expected_psn: u32,
    /// Data packets that arrived out of PSN order.
    pub out_of_order: u64,
    /// Incomplete messages, in PSN order.
    msgs: VecDeque<Outstanding>,
}

/// What the destination sends back for a delivered packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reply {
    pub kind: PacketKind,
    pub flow: u32,
    pub psn: u32,
}

/// A message that has just completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completion {
    pub class: u8,
    pub gen_time: Time,
    /// Closed-loop source to tell, or `NONE`.
    pub source: u32,
}

/// A message whose last packet has just reached its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arrival {
    pub class: u8,
    pub gen_time: Time,
    /// Its first packet's injection (ib_flit_sim's message network latency
    /// runs from there to this arrival).
    pub first_inject: Time,
}

/// What a delivery leads to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub reply: Option<Reply>,
    pub arrival: Option<Arrival>,
    pub completion: Option<Completion>,
}

/// Every flow of a simulation.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    pub ack: AckMode,
    pub reply_sl: u8,
    pub reply_payload: u32,
    /// Class the replies count in (`u8::MAX`: no replies configured).
    pub reply_class: u8,
    pub flows: Vec<Flow>,
    index: HashMap<FlowKey, u32>,
    /// Congestion notifications that reached their source.
    pub congestion_notifications: u64,
    /// Messages given up because one of their packets or acknowledgements
    /// was dropped.
    pub lost: u64,
}

impl Transport {
    pub fn new(cfg: &TransportConfig, reply_class: u8) -> Self {
        Transport {
            ack: cfg.ack,
            reply_sl: cfg.reply_sl,
            reply_payload: cfg.reply_payload_bytes,
            reply_class,
            flows: Vec::new(),
            index: HashMap::new(),
            congestion_notifications: 0,
            lost: 0,
        }
    }

    /// Whether every data packet must belong to a flow (replies are on).
    #[inline]
    pub fn replies(&self) -> bool {
        self.ack != AckMode::None
    }

    /// Opens a message of `packets` packets on flow `key` generated at `now`;
    /// returns its flow and first PSN (the packets take consecutive PSNs).
    pub fn open_message(&mut self, key: FlowKey, packets: u32, now: Time, source: u32) -> (u32, u32) {
        debug_assert!(packets > 0);
        let flows = &mut self.flows;
        let class = key.class;
        let f = *self.index.entry(key).or_insert_with(|| {
            flows.push(Flow { class, next_psn: 0, expected_psn: 0, out_of_order: 0, msgs: VecDeque::new() });
            (flows.len() - 1) as u32
        });
        let flow = &mut self.flows[f as usize];
        let first = flow.next_psn;
        flow.next_psn = first.wrapping_add(packets);
        let acks = match self.ack {
            AckMode::None => 0,
            AckMode::Packet => packets,
            AckMode::Message => 1,
        };
        flow.msgs.push_back(Outstanding {
            first_psn: first,
            last_psn: first.wrapping_add(packets - 1),
            gen_time: now,
            first_inject: Time::MAX,
            packets_left: packets,
            acks_left: acks,
            source,
        });
        (f, first)
    }

    /// The destination has consumed data packet `p` of a flow.
    pub fn on_data_delivered(&mut self, p: &Packet) -> Outcome {
        let ack = self.ack;
        let flow = &mut self.flows[p.flow as usize];
        if p.psn == flow.expected_psn {
            flow.expected_psn = flow.expected_psn.wrapping_add(1);
        } else {
            flow.out_of_order += 1;
            // PSNs are compared modulo 2^32: ahead means less than half the
            // space ahead.
            if p.psn.wrapping_sub(flow.expected_psn) < 1 << 31 {
                flow.expected_psn = p.psn.wrapping_add(1);
            }
        }
        // A packet of a message already given up as lost (see `on_lost`) has
        // no message any more.
        let Some(i) = flow.msgs.iter().position(|m| m.holds(p.psn)) else {
            return Outcome::default();
        };
        let m = &mut flow.msgs[i];
        m.packets_left -= 1;
        // Adaptive routing may deliver the message's packets in any order, so
        // the first injection is the least seen, not the first delivered's.
        m.first_inject = m.first_inject.min(p.inject_time);
        let mut out = Outcome::default();
        if m.packets_left == 0 {
            out.arrival = Some(Arrival { class: flow.class, gen_time: m.gen_time, first_inject: m.first_inject });
        }
        match ack {
            AckMode::Packet => out.reply = Some(Reply { kind: PacketKind::Ack, flow: p.flow, psn: p.psn }),
            AckMode::Message if m.packets_left == 0 => out.reply = Some(Reply { kind: PacketKind::Ack, flow: p.flow, psn: m.last_psn }),
            AckMode::Message => {}
            AckMode::None if m.packets_left == 0 => {
                let m = flow.msgs.remove(i).expect("found above");
                out.completion = Some(Completion { class: flow.class, gen_time: m.gen_time, source: m.source });
            }
            AckMode::None => {}
        }
        out
    }

    /// The source has received acknowledgement `p`.
    pub fn on_ack_delivered(&mut self, p: &Packet) -> Option<Completion> {
        let flow = &mut self.flows[p.flow as usize];
        let i = flow.msgs.iter().position(|m| m.holds(p.psn))?;
        let m = &mut flow.msgs[i];
        m.acks_left -= 1;
        if m.acks_left > 0 {
            return None;
        }
        debug_assert_eq!(m.packets_left, 0, "every packet is delivered before its last acknowledgement");
        let m = flow.msgs.remove(i).expect("found above");
        Some(Completion { class: flow.class, gen_time: m.gen_time, source: m.source })
    }

    /// A data packet or acknowledgement `p` of a flow was dropped: there is
    /// no retransmission, so its message can never complete. It is given up
    /// as lost (its closed-loop source gets its window slot back); `None`
    /// when the message is already gone.
    pub fn on_lost(&mut self, p: &Packet) -> Option<Completion> {
        let flow = self.flows.get_mut(p.flow as usize)?;
        let i = flow.msgs.iter().position(|m| m.holds(p.psn))?;
        let m = flow.msgs.remove(i).expect("found above");
        self.lost += 1;
        Some(Completion { class: flow.class, gen_time: m.gen_time, source: m.source })
    }

    /// Data packets delivered out of PSN order, over all flows.
    pub fn out_of_order(&self) -> u64 {
        self.flows.iter().map(|f| f.out_of_order).sum()
    }

    /// Messages not complete yet.
    pub fn open_messages(&self) -> u64 {
        self.flows.iter().map(|f| f.msgs.len() as u64).sum()
    }
}
