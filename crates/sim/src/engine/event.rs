//! The event enum: every state change of the data plane is one of these.
//!
//! Events are small and `Copy` (no `Box`, no payload on the heap): a packet is
//! referred to by its arena index and a port by its global port index, so
//! scheduling never allocates.

/// A scheduled state change. `port` is a global port index (one per
/// `(node, port)` of the fabric), `slot` a VL slot at that port (data VLs
/// `0..data_vls`, then VL15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Traffic source `source` generates its next packet.
    Generate {
        /// Source index.
        source: u32,
    },
    /// Trace `trace` sends its next message.
    TraceNext {
        /// Index of the trace.
        trace: u32,
    },
    /// Closed-loop source `source` sends its next message.
    MessageNext {
        /// Index of the closed-loop source.
        source: u32,
    },
    /// Connection `conn` generates its next packet.
    ConnNext {
        /// Index of the connection.
        conn: u32,
    },
    /// The header of the packet at the head of a switch input queue has been
    /// routed (routing and arbitration delays have elapsed).
    Routed {
        /// Input port.
        port: u32,
        /// Input queue (VL slot and buffer partition) at that port.
        queue: u8,
        /// The switch (dense index), so that its handler starts from the
        /// switch without first reading the port's description.
        switch: u32,
        /// The packet routed: a hint only (the handler arbitrates whatever
        /// heads are there), which lets it fetch the packet's line while it
        /// reads the queue's.
        packet: u32,
    },
    /// A crossbar transfer has ended: its input and output ports are free.
    XbarDone {
        /// Input port (global index).
        input: u32,
        /// The switch (dense index).
        switch: u32,
        /// Output port number on the switch.
        out_port: u8,
        /// VL slot at the input.
        in_slot: u8,
        /// VL slot at the output.
        out_slot: u8,
    },
    /// The transmitter at `port` has sent the last byte of its packet.
    LinkFree {
        /// Output port.
        port: u32,
        /// Its switch (dense index), `NONE` for a CA port: the handler starts
        /// from the switch without reading the port's description (on a
        /// large fabric a cache miss per transmission).
        switch: u32,
    },
    /// The head of an output queue at `port` may start without underrunning.
    OutputReady {
        /// Output port.
        port: u32,
    },
    /// Flow-control credits arrive back at the transmitter `port`.
    Credit {
        /// Transmitter port.
        port: u32,
        /// Input queue (VL slot and buffer partition) of the receiver the
        /// credits are for.
        queue: u8,
        /// 64-byte blocks returned.
        blocks: u16,
    },
    /// The last byte of `packet` has been consumed by the sink of the CA at `port`.
    Deliver {
        /// Receiving CA port.
        port: u32,
        /// Input queue at that port.
        queue: u8,
        /// The packet (checked against the queue head).
        packet: u32,
    },
    /// A packet scheduled with `Simulation::inject` is generated.
    Inject {
        /// The packet, already in the arena.
        packet: u32,
    },
    /// Re-arbitrate switch `switch` (a blocked packet becomes eligible).
    SwitchWake {
        /// Switch node index.
        switch: u32,
    },
    /// A crossbar transfer and the transmission of the same packet on the
    /// output link `out_port` end at once (it left the output buffer as it
    /// arrived there): `XbarDone`, then `LinkFree` of that port, as one event.
    XbarLinkDone {
        /// Input port (global index).
        input: u32,
        /// The switch (dense index).
        switch: u32,
        /// Output port number on the switch, whose transmitter is free too.
        out_port: u8,
        /// VL slot at the input.
        in_slot: u8,
        /// VL slot at the output.
        out_slot: u8,
    },
    /// Credits freed in input queue `queue` of `port` are due to be
    /// advertised in a flow-control packet (`flow_control.rs`).
    FcpDue {
        /// Receiving port, which sends the flow-control packet.
        port: u32,
        /// Its input queue.
        queue: u8,
        /// 64-byte blocks freed.
        blocks: u16,
    },
    /// `port` may start a flow-control packet if its link is idle.
    FcpStart {
        /// The port.
        port: u32,
    },
}

impl Event {
    /// Names of the event kinds, in the order of [`Event::kind`] (results'
    /// `events_by_kind`).
    pub const KIND_NAMES: [&'static str; 15] = [
        "Generate", "TraceNext", "MessageNext", "ConnNext", "Routed", "XbarDone", "LinkFree", "OutputReady", "Credit", "Deliver", "Inject", "SwitchWake", "XbarLinkDone",
        "FcpDue", "FcpStart",
    ];

    /// Index of this event's kind in [`Event::KIND_NAMES`].
    // The variants are declared in this order, so the match is the
    // discriminant itself and the run loop counts events by kind without a
    // table lookup: keep the two orders the same.
    #[inline]
    pub fn kind(&self) -> usize {
        match self {
            Event::Generate { .. } => 0,
            Event::TraceNext { .. } => 1,
            Event::MessageNext { .. } => 2,
            Event::ConnNext { .. } => 3,
            Event::Routed { .. } => 4,
            Event::XbarDone { .. } => 5,
            Event::LinkFree { .. } => 6,
            Event::OutputReady { .. } => 7,
            Event::Credit { .. } => 8,
            Event::Deliver { .. } => 9,
            Event::Inject { .. } => 10,
            Event::SwitchWake { .. } => 11,
            Event::XbarLinkDone { .. } => 12,
            Event::FcpDue { .. } => 13,
            Event::FcpStart { .. } => 14,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn events_stay_small() {
        // With the 16-byte key, a queue entry stays 32 bytes (the key's
        // alignment pads a 12-byte event to the same size).
        assert!(std::mem::size_of::<super::Event>() <= 16);
        assert_eq!(std::mem::size_of::<super::super::Entry>(), 32);
    }

    #[test]
    fn kind_names_match_the_variants() {
        use super::Event;
        let samples = [
            Event::Generate { source: 0 },
            Event::TraceNext { trace: 0 },
            Event::MessageNext { source: 0 },
            Event::ConnNext { conn: 0 },
            Event::Routed { port: 0, queue: 0, switch: 0, packet: 0 },
            Event::XbarDone { input: 0, switch: 0, out_port: 1, in_slot: 0, out_slot: 0 },
            Event::LinkFree { port: 0, switch: 0 },
            Event::OutputReady { port: 0 },
            Event::Credit { port: 0, queue: 0, blocks: 0 },
            Event::Deliver { port: 0, queue: 0, packet: 0 },
            Event::Inject { packet: 0 },
            Event::SwitchWake { switch: 0 },
            Event::XbarLinkDone { input: 0, switch: 0, out_port: 1, in_slot: 0, out_slot: 0 },
            Event::FcpDue { port: 0, queue: 0, blocks: 0 },
            Event::FcpStart { port: 0 },
        ];
        for (i, e) in samples.iter().enumerate() {
            assert_eq!(e.kind(), i);
            assert!(format!("{e:?}").starts_with(Event::KIND_NAMES[i]), "{e:?} is not {}", Event::KIND_NAMES[i]);
        }
    }
}
