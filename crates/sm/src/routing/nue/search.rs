//! Nue's search for one destination (OpenSM's
//! `route_via_modified_dijkstra_on_ccdg` and its helpers): a Dijkstra run on
//! the complete CDG from the destination switch's fake channel, which takes a
//! channel dependency only if the layer's dependencies stay acyclic.
//!
//! The run settles channels, not switches: a switch is reached through the
//! channel that enters it, and its route toward the destination is that
//! channel backwards (channel dependencies are taken in reverse, which keeps
//! the same cycles). From each settled channel, dependencies already in use
//! (coloured) are tried before unused ones. A dependency is taken if it is in
//! use already; or if its far channel is in another subgraph (the subgraphs
//! merge); or if no path of coloured dependencies leads back from its far
//! channel (else it is blocked for the rest of the layer). A switch is
//! re-reached only by a strictly cheaper channel; a switch reached at equal
//! cost through a coloured dependency keeps that channel on a stack of
//! alternatives.
//!
//! When the heap runs dry with switches unreached, a local backtracking step
//! looks for an unreached switch whose neighbour can switch to one of its
//! alternative channels such that the neighbour's dependants stay legal, and
//! routes the switch through it; the search then resumes from there, and
//! switches reached before the step may take a shortcut through switches
//! reached after it. If no step is found, the destination falls back to the
//! escape paths. Each of these follows OpenSM step for step, including which
//! dependency colours it resets; where OpenSM's code resets other
//! dependencies than its comment describes, the code is followed (see
//! [`Search::shortcut`]).

use super::escape::Escape;
use super::graph::{Colors, Graph, BLOCKED, ESCAPE, INF, NONE, UNUSED};
use crate::routing::cl_heap::ClHeap;

/// Per-destination search state, reused between destinations.
pub(super) struct Search {
    /// Per switch: path cost to the destination, the link it is reached by
    /// (its route is that link backwards), alternatives, and the backtracking
    /// step it was first reached in (-1: none).
    pub dist: Vec<u64>,
    pub used: Vec<u32>,
    stack: Vec<Vec<u32>>,
    found_after: Vec<i32>,
    /// Per channel: path cost.
    cdist: Vec<u64>,
    heap: ClHeap,
    /// Reachability scratch: the search that last visited each channel.
    seen: Vec<u32>,
    epoch: u32,
    todo: Vec<u32>,
}

impl Search {
    pub(super) fn new(g: &Graph) -> Self {
        let n = g.nodes.len();
        Search {
            dist: vec![INF; n],
            used: vec![NONE; n],
            stack: vec![Vec::new(); n],
            found_after: vec![-1; n],
            cdist: vec![0; g.channels()],
            heap: ClHeap::new(g.channels()),
            seen: vec![0; g.channels()],
            epoch: 0,
            todo: Vec::new(),
        }
    }

    /// Routes every switch toward switch `dest` with dependencies of colour
    /// `color`; `used` then holds each switch's link. Returns whether the
    /// escape paths had to be used.
    pub(super) fn route(&mut self, g: &Graph, weight: &[u64], colors: &mut Colors, escape: &Escape, dest: u32, color: u32) -> bool {
        let n = g.nodes.len();
        self.dist.fill(INF);
        self.used.fill(NONE);
        self.found_after.fill(-1);
        for s in &mut self.stack {
            s.clear();
        }
        self.heap.clear();
        let mut fallback = false;
        self.dist[dest as usize] = 0;
        let mut found = 1usize;
        let source = g.fake(dest);
        // OpenSM's change_fake_ccdg_node_color.
        let fc = colors.chan[source as usize];
        if colors.real[fc as usize] > UNUSED {
            colors.real[fc as usize] = color;
        } else {
            colors.chan[source as usize] = color;
        }
        self.cdist[source as usize] = 0;
        let mut step: i32 = 0;
        let mut curr = Some(source);
        while let Some(c) = curr {
            let deps = g.deps(c);
            for used_pass in [true, false] {
                for d in deps.clone() {
                    let dc = colors.of_dep(d);
                    if used_pass && dc < ESCAPE || !used_pass && dc != UNUSED {
                        continue;
                    }
                    let next = g.dep_to[d];
                    let nd = self.cdist[c as usize].saturating_add(weight[next as usize]);
                    let reached = g.links[next as usize].to as usize;
                    if nd < self.dist[reached] {
                        if self.closes_cycle(g, colors, c, d, color) {
                            continue;
                        }
                        if step != 0 && self.used[reached] != NONE && step != self.found_after[reached] {
                            if !self.shortcut(g, colors, reached, next, color) {
                                continue;
                            }
                        } else {
                            if self.used[reached] != NONE {
                                // OpenSM deletes at the old channel's recorded heap position.
                                let old = self.used[reached];
                                if let Some(old) = self.heap.delete_at_position_of(old) {
                                    let up = g.links[old as usize].from as usize;
                                    if self.used[up] != NONE {
                                        if let Some(od) = g.dep(self.used[up], old) {
                                            colors.reset_dep(od);
                                        }
                                    }
                                }
                            } else {
                                found += 1;
                                self.found_after[reached] = step;
                            }
                            self.cdist[next as usize] = nd;
                            self.heap.insert(nd, next);
                        }
                        self.dist[reached] = nd;
                        self.used[reached] = next;
                    } else if colors.of_dep(d) > UNUSED {
                        if step != 0 && self.used[reached] != NONE {
                            continue;
                        }
                        self.cdist[next as usize] = nd;
                        push_unique(&mut self.stack[reached], next);
                    }
                }
            }
            curr = self.heap.pop().map(|(_, e)| e);
            if curr.is_none() && found != n {
                curr = self.backtrack(g, weight, colors, dest, color);
                if curr.is_some() {
                    found += 1;
                    step += 1;
                } else {
                    escape.paths_to(g, dest, &mut self.used);
                    fallback = true;
                    step = 0;
                }
            }
        }
        self.fix_colors(g, colors, dest);
        fallback
    }

    /// Whether taking dependency `d` out of channel `head` would close a
    /// cycle (OpenSM's `using_edge_induces_cycle_in_ccdg`); if not, it is
    /// painted (and the far channel's subgraph joined), else blocked.
    ///
    /// The cycle search runs only when the far channel reads the search's
    /// own colour; a far channel of another colour is taken to be in a
    /// disjoint subgraph and merged. As in OpenSM, a merge points the other
    /// colour at `head`'s colour *index*, read one level deep: when the
    /// destination's switch was coloured by an earlier search, that index is
    /// the earlier colour (now pointing at this search's), so a subgraph
    /// merged this way reads the earlier colour until the search ends. No
    /// credit loop came of it on any fabric tried (see the tests).
    fn closes_cycle(&mut self, g: &Graph, colors: &mut Colors, head: u32, d: usize, color: u32) -> bool {
        let tail = g.dep_to[d];
        if colors.of_dep(d) > UNUSED {
            return false;
        }
        if color == colors.of_chan(tail) {
            if self.reaches(g, colors, tail, head) {
                colors.dep[d] = BLOCKED;
                return true;
            }
            colors.add_dep(head, d);
        } else if colors.of_chan(tail) == UNUSED {
            colors.chan[tail as usize] = colors.chan[head as usize];
            colors.chan_wet[tail as usize] = true;
            colors.add_dep(head, d);
        } else {
            let t = colors.chan[tail as usize] as usize;
            colors.real[t] = colors.chan[head as usize];
            colors.add_dep(head, d);
        }
        false
    }

    /// Whether coloured dependencies lead from channel `from` to `to`
    /// (OpenSM's depth-first search; only the answer matters).
    fn reaches(&mut self, g: &Graph, colors: &Colors, from: u32, to: u32) -> bool {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.seen.fill(0);
            self.epoch = 1;
        }
        self.todo.clear();
        self.todo.push(from);
        self.seen[from as usize] = self.epoch;
        while let Some(c) = self.todo.pop() {
            for d in g.deps(c) {
                if colors.of_dep(d) <= UNUSED {
                    continue;
                }
                let next = g.dep_to[d];
                if next == to {
                    return true;
                }
                if self.seen[next as usize] != self.epoch {
                    self.seen[next as usize] = self.epoch;
                    self.todo.push(next);
                }
            }
        }
        false
    }

    /// OpenSM's `attempt_local_backtracking`: the first unreached switch (in
    /// LID order) that can be reached through a neighbour's alternative
    /// channel; returns the channel it is reached by.
    fn backtrack(&mut self, g: &Graph, weight: &[u64], colors: &mut Colors, dest: u32, color: u32) -> Option<u32> {
        let mut found: Option<u32> = None;
        for u in 0..g.nodes.len() {
            if self.dist[u] != INF {
                continue;
            }
            // (link from u to its neighbour, the neighbour's alternative channel)
            let mut candidates: Vec<(u32, u32)> = Vec::new();
            for &l1 in &g.nodes[u].links {
                let adj = g.links[l1 as usize].to as usize;
                if self.dist[adj] == INF {
                    continue;
                }
                let dependants: Vec<u32> = g.nodes[adj]
                    .links
                    .iter()
                    .map(|&l2| self.used[g.links[l2 as usize].to as usize])
                    .filter(|&w| w != NONE && g.links[w as usize].from as usize == adj)
                    .collect();
                for &alt in &self.stack[adj] {
                    let ok = dependants.iter().all(|&dep| {
                        !g.opposite(alt, dep) && g.dep(alt, dep).is_some_and(|e| colors.of_dep(e) >= ESCAPE)
                    });
                    if ok {
                        candidates.push((l1, alt));
                    }
                }
            }
            if candidates.is_empty() {
                continue;
            }
            // glibc's qsort merge-sorts, keeping equal distances in order.
            candidates.sort_by_key(|&(_, alt)| self.cdist[alt as usize]);
            for &(l1, pre) in &candidates {
                let c = g.links[l1 as usize].reverse;
                let Some(pre_c) = g.dep(pre, c) else { continue };
                if colors.of_dep(pre_c) == BLOCKED {
                    continue;
                }
                let up = g.links[pre as usize].from;
                if up == dest {
                    continue;
                }
                let pre_pre = self.used[up as usize];
                if pre_pre == NONE || g.opposite(pre, pre_pre) {
                    continue;
                }
                let Some(pre_edge) = g.dep(pre_pre, pre) else { continue };
                if colors.of_dep(pre_edge) == BLOCKED {
                    continue;
                }
                let was_wet = colors.dep_wet[pre_edge];
                if self.closes_cycle(g, colors, pre_pre, pre_edge, color) {
                    continue;
                }
                if self.closes_cycle(g, colors, pre, pre_c, color) {
                    if !was_wet {
                        colors.reset_dep(pre_edge);
                    }
                    continue;
                }
                self.cdist[c as usize] = self.cdist[pre as usize].saturating_add(weight[c as usize]);
                if found.is_none() {
                    self.used[u] = c;
                    self.dist[u] = self.cdist[c as usize];
                    let adj = g.links[l1 as usize].to as usize;
                    self.used[adj] = pre;
                    self.dist[adj] = self.cdist[pre as usize];
                    found = Some(c);
                } else {
                    push_unique(&mut self.stack[u], c);
                }
            }
            if found.is_some() {
                break;
            }
        }
        found
    }

    /// OpenSM's `attempt_shortcut_discovery`: whether switch `reached`, found
    /// before the last backtracking step, may switch to channel `next`
    /// without its dependants closing a cycle. On success OpenSM means to
    /// undo the dependencies of the old channel; what its code resets is the
    /// old channel's incoming dependency and the *new* dependencies just
    /// painted (it passes those edges where it names the old ones), and so
    /// does this.
    fn shortcut(&mut self, g: &Graph, colors: &mut Colors, reached: usize, next: u32, color: u32) -> bool {
        let old = self.used[reached];
        let up = g.links[old as usize].from as usize;
        let pre_old = if self.used[up] != NONE { self.used[up] } else { g.fake(up as u32) };
        let mut dependants: Vec<usize> = Vec::new();
        for &l in &g.nodes[reached].links {
            let w = self.used[g.links[l as usize].to as usize];
            if w == NONE || g.links[w as usize].from as usize != reached {
                continue;
            }
            if let Some(e) = g.dep(next, w) {
                dependants.push(e);
            }
        }
        let was_wet: Vec<bool> = dependants.iter().map(|&e| colors.dep_wet[e]).collect();
        let mut broke_at = None;
        for (i, &e) in dependants.iter().enumerate() {
            if colors.of_dep(e) == BLOCKED || self.closes_cycle(g, colors, next, e, color) {
                broke_at = Some(i);
                break;
            }
        }
        match broke_at {
            None => {
                if let Some(e) = g.dep(pre_old, old) {
                    colors.reset_dep(e);
                }
                for &e in &dependants {
                    colors.reset_dep(e);
                }
                true
            }
            Some(k) => {
                for i in 0..k {
                    if colors.of_dep(dependants[i]) != BLOCKED && !was_wet[i] {
                        colors.reset_dep(dependants[i]);
                    }
                }
                false
            }
        }
    }

    /// OpenSM's `fix_ccdg_colors`: the channels and dependencies of the
    /// routes found keep their paint; every other one painted in this search
    /// is undone; merged colours are made final.
    fn fix_colors(&self, g: &Graph, colors: &mut Colors, dest: u32) {
        for v in 0..g.nodes.len() {
            let c = self.used[v];
            if c == NONE {
                continue;
            }
            colors.chan_wet[c as usize] = false;
            let up = g.links[c as usize].from;
            let pre = if up == dest { g.fake(dest) } else { self.used[up as usize] };
            if pre != NONE {
                if let Some(e) = g.dep(pre, c) {
                    colors.dep_wet[e] = false;
                }
            }
        }
        for c in 0..g.channels() {
            if colors.chan_wet[c] {
                colors.chan[c] = UNUSED;
                colors.chan_wet[c] = false;
            }
            for d in g.deps(c as u32) {
                colors.reset_dep(d);
                colors.dep[d] = colors.real[colors.dep[d] as usize];
            }
            colors.chan[c] = colors.real[colors.chan[c] as usize];
        }
    }
}

/// Adds `link` to a switch's alternatives unless it is there already.
fn push_unique(stack: &mut Vec<u32>, link: u32) {
    if !stack.contains(&link) {
        stack.push(link);
    }
}
