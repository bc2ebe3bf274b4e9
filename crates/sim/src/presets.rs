//! Named parameter sets of the papers' simulators, so an experiment can start
//! from "what paper N used". Each entry says where its numbers come from;
//! values a paper does not give are marked as our assumption. Cable length is
//! a property of the fabric (the topology generator's `LinkSpec`), not of this
//! config, so each preset states it in its notes.

use crate::config::{CrossbarKind, HcaConfig, SimConfig, SwitchConfig};
use crate::error::SimError;

/// One preset.
pub struct PresetInfo {
    /// Name used in configs (`preset = "…"`) and on the command line.
    pub name: &'static str,
    /// The paper it reproduces.
    pub paper: &'static str,
    /// Where each value comes from, and what lives in the fabric instead.
    pub notes: &'static str,
    /// Builds the config.
    pub build: fn() -> SimConfig,
}

/// Every preset.
pub static PRESETS: &[PresetInfo] = &[
    PresetInfo {
        name: "kim2007",
        paper: "000: Kim et al., Exploring IBA Design Space for Improved Performance, TPDS 2007",
        notes: "Table 1: 2.5 Gbps (1x SDR) links, 5-port switches, 16 VLs (15 data + VL15), 26 B of \
                LRH+BTH+CRC, MTU 1024 B (control 256 B), 4200 B input and output VL buffers. §2.2: \
                a pipelined switch reserving one crossbar port per input port (multiplexed), header \
                processing overlapped with reception. Not given, our assumption: 100 ns routing, \
                speedup 1, 4200 B HCA send/receive VL buffers (the 8 MB HCA memory is the unbounded \
                SL queues). Cables: 1 m (not given).",
        build: kim2007,
    },
    PresetInfo {
        name: "alfaro2001",
        paper: "001: Alfaro, Sánchez, Duato, A Strategy to Compute the InfiniBand Arbitration Tables, 2001",
        notes: "§5.1: 8-port switches, at least 11 VLs — §4.1: as 11 is not an IBA count, 15 data VLs \
                (+ VL15) —, per-VL input and output buffers of 4 packets: 1056 B for 256 B packets, \
                16416 B for 4096 B (set input/output_buffer_bytes and mtu_bytes = 4096 for those; \
                ibnetsim.qos_sim does), 8x8 multiplexed crossbar at twice the link speed, 20 ns output \
                arbitration. The paper's packet sizes include the headers: a 256 B packet (230 B of \
                payload) is 4 credits, so 1056 B (16 credits) holds 4; a 256 B payload (282 B) would fit \
                only 3. Routing delay beyond the 20 ns is not given: 0. Cables: 1 m (not given).",
        build: alfaro2001,
    },
    PresetInfo {
        name: "martinez2003",
        paper: "002: Martínez et al., Supporting Fully Adaptive Routing in InfiniBand Networks, IPDPS 2003",
        notes: "§5.1: per-VL crossbar ports, 1 KB input and output buffers, 100 ns routing time (lookup, \
                crossbar arbitration and set-up), 1x links (2.5 Gbaud, 8b/10b), 64 B credits, MTU 256, \
                1 VL. Cables: 20 m at 5 ns/m — set length_m = 20 in the fabric's links.",
        build: martinez2003,
    },
    PresetInfo {
        name: "martinez2005",
        paper: "003: Martínez et al., In-Order Packet Delivery in Interconnection Networks using Adaptive Routing, IPDPS 2005",
        notes: "§4.1: non-multiplexed (per-VL) crossbar, 8 KB input and output buffers, 100 ns routing \
                time, 1x links, 256 B packets (MTU 256), credits of 64 B, 1 VL. Cables: 20 m at 5 ns/m — \
                set length_m = 20 in the fabric's links.",
        build: martinez2005,
    },
    PresetInfo {
        name: "ib_flit_sim",
        paper: "ib_flit_sim: Mellanox's OMNeT++ flit-level IB model, as its example is1_3l_32n sets it",
        notes: "Switches with a queue per output port inside each input VL buffer (voq), up to 3 packets \
                sent at once per input (maxBeingSent), 50 ns input delay + 50 ns VL arbitration, VL0 \
                input buffers of 200 credits (12 800 B) and output buffers of 78 (4 992 B), credit \
                updates every 256 ns, no header bytes (flits carry none), MTU 2048, 1 data VL. Not \
                given, our assumption: a multiplexed crossbar at speedup 1, 8 KiB HCA buffers. In the \
                fabric and the traffic, not here: no propagation delay (cables of 0 m) and closed-loop \
                sources (ibnetsim.traffic.closed_loop; the generator waits for its previous message).",
        build: ib_flit_sim,
    },
];

/// The preset called `name`; the error lists the valid names.
pub fn preset(name: &str) -> Result<SimConfig, SimError> {
    PRESETS.iter().find(|p| p.name == name).map(|p| (p.build)()).ok_or_else(|| {
        SimError::config(
            "preset",
            format!("unknown preset '{name}' (known: {})", PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")),
        )
    })
}

fn kim2007() -> SimConfig {
    SimConfig {
        data_vls: 15,
        mtu_bytes: 1024,
        switch: SwitchConfig {
            routing_delay_ns: 100.0,
            arbitration_delay_ns: 0.0,
            crossbar: CrossbarKind::Multiplexed,
            speedup: 1.0,
            input_buffer_bytes: 4200,
            output_buffer_bytes: 4200,
            vl15_buffer_bytes: 4200,
            ..SwitchConfig::default()
        },
        hca: HcaConfig { send_buffer_bytes: 4200, receive_buffer_bytes: 4200, sl_priority: Vec::new(), ..HcaConfig::default() },
        ..SimConfig::default()
    }
}

fn alfaro2001() -> SimConfig {
    SimConfig {
        data_vls: 15,
        mtu_bytes: 256,
        switch: SwitchConfig {
            routing_delay_ns: 0.0,
            arbitration_delay_ns: 20.0,
            crossbar: CrossbarKind::Multiplexed,
            speedup: 2.0,
            input_buffer_bytes: 1056,
            output_buffer_bytes: 1056,
            vl15_buffer_bytes: 1056,
            ..SwitchConfig::default()
        },
        hca: HcaConfig { send_buffer_bytes: 1056, receive_buffer_bytes: 1056, sl_priority: Vec::new(), ..HcaConfig::default() },
        ..SimConfig::default()
    }
}

fn martinez2003() -> SimConfig {
    SimConfig {
        data_vls: 1,
        mtu_bytes: 256,
        switch: SwitchConfig {
            routing_delay_ns: 100.0,
            arbitration_delay_ns: 0.0,
            crossbar: CrossbarKind::PerVl,
            speedup: 1.0,
            input_buffer_bytes: 1024,
            output_buffer_bytes: 1024,
            vl15_buffer_bytes: 512,
            ..SwitchConfig::default()
        },
        hca: HcaConfig { send_buffer_bytes: 1024, receive_buffer_bytes: 1024, sl_priority: Vec::new(), ..HcaConfig::default() },
        ..SimConfig::default()
    }
}

fn martinez2005() -> SimConfig {
    SimConfig {
        data_vls: 1,
        mtu_bytes: 256,
        switch: SwitchConfig {
            routing_delay_ns: 100.0,
            arbitration_delay_ns: 0.0,
            crossbar: CrossbarKind::PerVl,
            speedup: 1.0,
            input_buffer_bytes: 8192,
            output_buffer_bytes: 8192,
            vl15_buffer_bytes: 512,
            ..SwitchConfig::default()
        },
        hca: HcaConfig { send_buffer_bytes: 8192, receive_buffer_bytes: 8192, sl_priority: Vec::new(), ..HcaConfig::default() },
        ..SimConfig::default()
    }
}

fn ib_flit_sim() -> SimConfig {
    SimConfig {
        data_vls: 1,
        mtu_bytes: 2048,
        header_bytes: 0,
        switch: SwitchConfig {
            routing_delay_ns: 50.0,
            arbitration_delay_ns: 50.0,
            crossbar: CrossbarKind::Multiplexed,
            speedup: 1.0,
            input_buffer_bytes: 200 * crate::credits::CREDIT_BYTES,
            output_buffer_bytes: 78 * crate::credits::CREDIT_BYTES,
            input_buffer: "voq".into(),
            max_transfers_per_input: 3,
            credit_update_ns: 256.0,
            ..SwitchConfig::default()
        },
        hca: HcaConfig { credit_update_ns: 256.0, ..HcaConfig::default() },
        ..SimConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_unique_and_values_follow_the_papers() {
        let mut names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PRESETS.len());
        let k = preset("kim2007").unwrap();
        assert_eq!((k.data_vls, k.mtu_bytes, k.switch.input_buffer_bytes), (15, 1024, 4200));
        let a = preset("alfaro2001").unwrap();
        assert_eq!((a.switch.speedup, a.switch.arbitration_delay_ns, a.switch.input_buffer_bytes), (2.0, 20.0, 1056));
        assert_eq!((a.data_vls, a.switch.crossbar, a.switch.output_buffer_bytes), (15, CrossbarKind::Multiplexed, 1056));
        // 1056 B of credits hold four 256 B packets (headers included, as the paper counts).
        assert_eq!(crate::credits::buffer_blocks(1056) / crate::credits::blocks_for(256) as u32, 4);
        let m = preset("martinez2003").unwrap();
        assert_eq!((m.switch.crossbar, m.switch.routing_delay_ns, m.switch.output_buffer_bytes), (CrossbarKind::PerVl, 100.0, 1024));
        let m5 = preset("martinez2005").unwrap();
        assert_eq!(m5.switch.input_buffer_bytes, 8192);
        let f = preset("ib_flit_sim").unwrap();
        assert_eq!((f.switch.input_buffer.as_str(), f.switch.max_transfers_per_input, f.header_bytes), ("voq", 3, 0));
        assert_eq!((f.switch.input_buffer_bytes, f.switch.output_buffer_bytes, f.switch.credit_update_ns), (12_800, 4_992, 256.0));
        let e = preset("kim").unwrap_err().to_string();
        assert!(e.contains("kim2007, alfaro2001"), "{e}");
    }
}
