//! Step 1 of building: the configuration alone, validated and resolved into
//! the parameters the components are built from. Every error names the config
//! key as the user wrote it.

use crate::arbitration::VlArbiter;
use crate::config::{ns_to_ps, CrossbarKind, SimConfig, VlArbitrationConfig, MTU_BYTES};
use crate::engine::{Queue, Time};
use crate::error::SimError;
use crate::layout::Layout;
use crate::metrics::{MeasuredWindows, WarmupDetector};
use crate::selection::Selection;
use crate::sim::Params;
use crate::switch::arbiter::CrossbarArbiter;
use crate::switch::organisation::InputBuffer;

/// The configuration's own parameters, checked.
pub(super) struct Resolved {
    pub layout: Layout,
    pub params: Params,
    pub routing_ps: Time,
    pub arbitration_ps: Time,
    pub warmup_ps: Time,
    pub detector: Option<WarmupDetector>,
    pub measured: MeasuredWindows,
    pub queue: Queue,
    pub selection: Selection,
    pub arbiter: VlArbiter,
}

pub(crate) fn check_data_vls(v: u8) -> Result<(), SimError> {
    if !(1..=15).contains(&v) {
        return Err(SimError::config("data_vls", format!("must be 1..=15 (VL15 is added for management), got {v}")));
    }
    Ok(())
}

pub(super) fn resolve(c: &SimConfig) -> Result<Resolved, SimError> {
    check_data_vls(c.data_vls)?;
    if !MTU_BYTES.contains(&c.mtu_bytes) {
        return Err(SimError::config("mtu_bytes", format!("must be 256, 512, 1024, 2048 or 4096, got {}", c.mtu_bytes)));
    }
    if c.extra_header_bytes > crate::config::MAX_HEADER_BYTES {
        return Err(SimError::config("extra_header_bytes", format!("{} is beyond any IBA header stack", c.extra_header_bytes)));
    }
    if c.header_bytes > crate::config::MAX_HEADER_BYTES {
        return Err(SimError::config("header_bytes", format!("{} is beyond any IBA header stack (IBA's is 26)", c.header_bytes)));
    }
    let sc = &c.switch;
    if !sc.speedup.is_finite() || sc.speedup <= 0.0 {
        return Err(SimError::config("switch.speedup", format!("must be a finite number > 0, got {}", sc.speedup)));
    }
    let input_buffer = InputBuffer::from_name(&sc.input_buffer, "switch.input_buffer")?;
    if input_buffer == InputBuffer::Voq && sc.output_buffer_bytes == 0 {
        return Err(SimError::config(
            "switch.input_buffer",
            "'voq' needs output buffers (switch.output_buffer_bytes > 0): without them an output hears one request per input VL",
        ));
    }
    let max_transfers = match u8::try_from(sc.max_transfers_per_input) {
        Ok(n) if n >= 1 => n,
        _ => return Err(SimError::config("switch.max_transfers_per_input", format!("must be 1..=255, got {}", sc.max_transfers_per_input))),
    };
    let crossbar_arbiter = CrossbarArbiter::from_name(&sc.crossbar_arbiter, "switch.crossbar_arbiter")?;
    if crossbar_arbiter == CrossbarArbiter::Islip && (sc.output_buffer_bytes == 0 || input_buffer != InputBuffer::Fifo) {
        return Err(SimError::config(
            "switch.crossbar_arbiter",
            "'islip' matches FIFO input heads to output buffers: it needs switch.output_buffer_bytes > 0 and switch.input_buffer = 'fifo'",
        ));
    }
    let routing_ps = ns_to_ps("switch.routing_delay_ns", sc.routing_delay_ns)?;
    let arbitration_ps = ns_to_ps("switch.arbitration_delay_ns", sc.arbitration_delay_ns)?;
    let switch_credit_period_ps = ns_to_ps("switch.credit_update_ns", sc.credit_update_ns)?;
    let hca_credit_period_ps = ns_to_ps("hca.credit_update_ns", c.hca.credit_update_ns)?;
    let mut credit_packet_bytes = [0u16; 2];
    for (i, (key, bytes)) in [("switch.credit_packet_bytes", sc.credit_packet_bytes), ("hca.credit_packet_bytes", c.hca.credit_packet_bytes)].into_iter().enumerate() {
        credit_packet_bytes[i] = u16::try_from(bytes).ok().filter(|&b| b <= 1024).ok_or_else(|| {
            SimError::config(key, format!("{bytes} bytes is beyond any flow-control packet (IBA's is 6; 0 = not charged)"))
        })?;
    }
    let mut warmup_ps = ns_to_ps("warmup_ns", c.warmup_ns)?;
    let detector = match &c.auto_warmup {
        None => None,
        Some(a) => {
            if warmup_ps != 0 {
                return Err(SimError::config("warmup_ns", "must be 0 when auto_warmup is set (the warm-up is detected)"));
            }
            let window_ps = ns_to_ps("auto_warmup.window_ns", a.window_ns)?;
            if window_ps == 0 {
                return Err(SimError::config("auto_warmup.window_ns", "must be > 0"));
            }
            if a.windows < 3 {
                return Err(SimError::config("auto_warmup.windows", format!("must be at least 3 to see a trend, got {}", a.windows)));
            }
            if !(a.tolerance > 0.0 && a.tolerance < 1.0) {
                return Err(SimError::config("auto_warmup.tolerance", format!("must be a fraction in (0, 1), got {}", a.tolerance)));
            }
            let max_ps = ns_to_ps("auto_warmup.max_ns", a.max_ns)?;
            if max_ps < window_ps * a.windows as u64 {
                return Err(SimError::config(
                    "auto_warmup.max_ns",
                    format!("{} ns is shorter than the windows looked at (windows × window_ns = {} ns)", a.max_ns, a.window_ns * a.windows as f64),
                ));
            }
            warmup_ps = Time::MAX;
            Some(WarmupDetector::new(window_ps, a.windows as usize, a.tolerance, max_ps))
        }
    };
    // The measurement is sampled in the detector's windows, or with a fixed
    // warm-up in the default ones.
    let sampling = c.auto_warmup.clone().unwrap_or_default();
    let measured = MeasuredWindows::new(ns_to_ps("auto_warmup.window_ns", sampling.window_ns)?, sampling.tolerance, warmup_ps);
    let watchdog_ps = ns_to_ps("watchdog_ns", c.watchdog_ns)?;
    if watchdog_ps == 0 {
        return Err(SimError::config("watchdog_ns", "must be > 0"));
    }
    let queue = Queue::from_name(&c.event_queue).ok_or_else(|| {
        SimError::config(
            "event_queue",
            format!("unknown event queue '{}' (known: {})", c.event_queue, Queue::NAMES.join(", ")),
        )
    })?;
    let selection = Selection::from_config(&c.selection, "selection")?;
    let arbiter = match c.vl_arbitration {
        VlArbitrationConfig::Iba(_) => VlArbiter::from_name("iba", "vl_arbitration.kind")?,
        VlArbitrationConfig::RoundRobin => VlArbiter::from_name("round-robin", "vl_arbitration.kind")?,
    };
    let plain_arbitration = crossbar_arbiter == CrossbarArbiter::RoundRobin
        && input_buffer == InputBuffer::Fifo
        && matches!(selection, Selection::Deterministic(_));
    let params = Params {
        switch_delay_ps: routing_ps + arbitration_ps,
        switch_credit_period_ps,
        hca_credit_period_ps,
        credit_packet_bytes,
        speedup: sc.speedup,
        output_buffers: sc.output_buffer_bytes > 0,
        credits_at_grant: sc.output_buffer_bytes > 0 && selection.escape_paths(),
        fully_adaptive: selection.escape_paths(),
        crossbar: sc.crossbar,
        xbar_slot_mask: match sc.crossbar {
            CrossbarKind::Multiplexed => 0,
            CrossbarKind::PerVl => u8::MAX,
        },
        input_buffer,
        max_transfers,
        crossbar_arbiter,
        plain_arbitration,
        offer_at_transfer_end: plain_arbitration && sc.output_buffer_bytes > 0 && max_transfers == 1 && c.mechanisms.lifetime.is_none(),
        one_vl_sends_head: c.data_vls == 1 && !selection.escape_paths(),
        lazy_host_free: crate::config::ns_to_ps("series_interval_ns", c.series_interval_ns)? == 0,
        watchdog_ps,
        sl_order: sl_order(&c.hca.sl_priority)?,
        mtu_bytes: c.mtu_bytes,
        header_bytes: c.header_bytes + c.extra_header_bytes,
        cut_through_bytes: c.header_bytes.min(crate::link::CUT_THROUGH_HEADER_BYTES),
    };
    let parts = c.switch.input_partition_bytes.len().clamp(1, crate::layout::MAX_PARTITIONS);
    Ok(Resolved { layout: Layout::partitioned(c.data_vls, parts), params, routing_ps, arbitration_ps, warmup_ps, detector, measured, queue, selection, arbiter })
}

/// The HCA's SL service order: the listed SLs first, then the others ascending.
fn sl_order(priority: &[u8]) -> Result<[u8; 16], SimError> {
    let mut order = [0u8; 16];
    let mut seen = [false; 16];
    let mut k = 0;
    for (i, &sl) in priority.iter().enumerate() {
        if sl > 15 || seen[sl as usize] {
            return Err(SimError::config(
                format!("hca.sl_priority[{i}]"),
                format!("SL {sl} is {}", if sl > 15 { "not an SL (0..=15)" } else { "listed twice" }),
            ));
        }
        seen[sl as usize] = true;
        order[k] = sl;
        k += 1;
    }
    for sl in 0..16u8 {
        if !seen[sl as usize] {
            order[k] = sl;
            k += 1;
        }
    }
    Ok(order)
}
