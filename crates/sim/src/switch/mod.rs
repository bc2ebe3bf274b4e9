//! The IBA switch: input buffers per (port, VL), routing overlapped with
//! reception (cut-through), a crossbar with round-robin arbitration, optional
//! output buffers per (port, VL), and IBA output VL arbitration.
//!
//! * [`input`] — input queues, one FIFO per (port, VL slot); only the head
//!   competes for the crossbar (head-of-line blocking, as in a real IBA VL buffer).
//! * [`route`] — the forwarding-table lookup that yields routing options.
//! * [`crossbar`] — arbitration among input heads, selection among options,
//!   and the transfer, multiplexed (one crossbar port per physical port, papers
//!   000/001) or per VL (papers 002/003), with a configurable speedup.
//! * [`output`] — output buffers and their link, with VL arbitration.
//!
//! # Timing and the zero-load latency
//!
//! Let a packet of `W` wire bytes start on the link into switch `s` at `t_in`
//! (link `i`: serialization `ser_i`, propagation `prop_i`), and leave on link
//! `o`. With `H` = 20 B (LRH + BTH), routing delay `R` and arbitration delay `A`:
//!
//! ```text
//! routed   t_x   = t_in + prop_i + ser_i(H) + R + A      (crossbar request)
//! crossbar x_end = max(t_x + ceil(ser_o(W) / speedup),   (crossbar at speedup × rate of o)
//!                      t_in + prop_i + ser_i(W))          (cannot pass the arriving tail)
//! out      t_out = max(t_x, x_end − ser_o(W))            (cut-through without underrun)
//! ```
//!
//! Without output buffers the crossbar feeds the link directly and
//! `t_out = max(t_x, t_in + prop_i + ser_i(W) − ser_o(W))`. The source HCA
//! starts at generation time; the sink has consumed the packet at
//! `t_out(last) + prop + ser(W)` of the last link. So for a path of `k`
//! switches with equal links and speedup ≥ 1, in both modes,
//!
//! ```text
//! zero-load latency = k · (prop + ser(H) + R + A) + prop + ser(W)
//! ```
//!
//! which `tests/it/zero_load.rs` checks to the picosecond for 1, 2 and 3
//! switches, with and without output buffers, and for mixed link rates.

pub mod crossbar;
pub mod input;
pub mod output;
pub mod route;
