//! Nue's escape paths (OpenSM's `mark_escape_paths` and the functions it
//! calls): a spanning tree of the network, rooted at the switch most central
//! to the layer's destinations, whose channel dependencies are coloured into
//! the cCDG before any destination is routed. The tree's dependencies form no
//! cycle, so a destination whose search gets stuck can always fall back to
//! the tree's paths.
//!
//! 1. The convex hull of the destinations' switches: every switch on some
//!    shortest (hop) path between two of them (`calculate_convex_subnetwork`;
//!    switches added to the hull during the walk serve as endpoints later in
//!    it, as in OpenSM).
//! 2. The hull's most central switch by betweenness centrality (Brandes'
//!    algorithm on the hull, each CA destination counted as a leaf of its
//!    switch; `get_central_node_wrt_subnetwork`); ties go to the first switch
//!    in LID order. Sums are the same floating-point operations in the same
//!    order as OpenSM's.
//! 3. A Dijkstra tree from it under the current link weights
//!    (`calculate_spanning_tree_in_network`), on OpenSM's heap.
//! 4. Its colouring: every tree path toward the root, its reverse where the
//!    path starts at a switch with destinations, the turns between sibling
//!    branches below such paths, and the turns through the root.

use super::graph::{Colors, Graph, ESCAPE, INF, NONE};
use crate::routing::cl_heap::ClHeap;

/// Per-switch scratch of the escape-path computation.
pub(super) struct Escape {
    /// Tree link into each switch from its parent, [`NONE`] at the root.
    pub parent: Vec<u32>,
    pub dist: Vec<u64>,
    in_hull: Vec<bool>,
    has_dest: Vec<bool>,
    heap: ClHeap,
}

impl Escape {
    pub(super) fn new(g: &Graph) -> Self {
        let n = g.nodes.len();
        Escape { parent: vec![NONE; n], dist: vec![INF; n], in_hull: vec![false; n], has_dest: vec![false; n], heap: ClHeap::new(n) }
    }

    /// Colours the escape paths of a layer whose destinations, all CA ports
    /// (switches are none, OpenSM's `nue_include_switches FALSE`), hang off
    /// `dest_switches` (one entry per destination). Returns the root, or
    /// `None` if some switch cannot be reached.
    pub(super) fn mark(&mut self, g: &Graph, weight: &[u64], colors: &mut Colors, dest_switches: &[u32]) -> Option<u32> {
        self.convex_hull(g, dest_switches);
        let root = self.central(g, dest_switches);
        self.tree(g, weight, root);
        if self.parent.iter().filter(|&&p| p == NONE).count() > 1 {
            return None;
        }
        let mut into_root: Vec<u32> = Vec::new();
        for n1 in 0..g.nodes.len() {
            let mut cur = self.parent[n1];
            while cur != NONE {
                let n2 = g.links[cur as usize].from;
                colors.chan[cur as usize] = ESCAPE;
                let next = self.parent[n2 as usize];
                if next == NONE {
                    if !into_root.contains(&cur) {
                        into_root.push(cur);
                    }
                    break;
                }
                colors.chan[next as usize] = ESCAPE;
                paint(g, colors, next, cur);
                if self.has_dest[n1] {
                    let rev_cur = g.links[cur as usize].reverse;
                    let rev_next = g.links[next as usize].reverse;
                    colors.chan[rev_cur as usize] = ESCAPE;
                    colors.chan[rev_next as usize] = ESCAPE;
                    paint(g, colors, rev_cur, rev_next);
                    for &l in &g.nodes[n2 as usize].links {
                        let sibling = self.parent[g.links[l as usize].to as usize];
                        if sibling == NONE {
                            continue;
                        }
                        let (c, s) = (g.links[cur as usize], g.links[sibling as usize]);
                        if c.from == s.from && c.to != s.to {
                            paint(g, colors, rev_cur, sibling);
                        }
                    }
                }
                cur = next;
            }
        }
        for &a in &into_root {
            for &b in &into_root {
                if a == b {
                    continue;
                }
                let rev_b = g.links[b as usize].reverse;
                colors.chan[a as usize] = ESCAPE;
                colors.chan[rev_b as usize] = ESCAPE;
                paint(g, colors, rev_b, a);
            }
        }
        Some(root)
    }

    fn convex_hull(&mut self, g: &Graph, dest_switches: &[u32]) {
        let n = g.nodes.len();
        self.in_hull.fill(false);
        self.has_dest.fill(false);
        for &s in dest_switches {
            self.in_hull[s as usize] = true;
            self.has_dest[s as usize] = true;
        }
        let mut processed = vec![false; n];
        let mut queue: Vec<u32> = Vec::with_capacity(n);
        for n1 in 0..n {
            if !self.in_hull[n1] {
                continue;
            }
            self.dist.fill(INF);
            processed.fill(false);
            self.dist[n1] = 0;
            processed[n1] = true;
            queue.clear();
            queue.push(n1 as u32);
            let mut head = 0;
            while head < queue.len() {
                let u = queue[head];
                head += 1;
                for &l in &g.nodes[u as usize].links {
                    let v = g.links[l as usize].to as usize;
                    if self.dist[v] == INF {
                        self.dist[v] = self.dist[u as usize] + 1;
                        queue.push(v as u32);
                    }
                }
            }
            for n2 in 0..n {
                if !self.in_hull[n2] || processed[n2] {
                    continue;
                }
                processed[n2] = true;
                queue.clear();
                queue.push(n2 as u32);
                let mut head = 0;
                while head < queue.len() {
                    let v = queue[head] as usize;
                    head += 1;
                    for &l in &g.nodes[v].links {
                        let u = g.links[l as usize].to as usize;
                        if processed[u] {
                            continue;
                        }
                        if self.dist[u] != INF && self.dist[u] + 1 == self.dist[v] {
                            self.in_hull[u] = true;
                            processed[u] = true;
                            queue.push(u as u32);
                        }
                    }
                }
            }
        }
    }

    /// The hull switch of highest betweenness (first in LID order on ties).
    fn central(&mut self, g: &Graph, dest_switches: &[u32]) -> u32 {
        let n = g.nodes.len();
        let mut betweenness = vec![0.0f64; n];
        let mut adj_terminals = vec![0u32; n];
        for &s in dest_switches {
            adj_terminals[s as usize] += 1;
        }
        let mut sigma = vec![0u64; n];
        let mut delta = vec![0.0f64; n];
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut fifo: Vec<u32> = Vec::with_capacity(n);
        for s in 0..n {
            if !self.in_hull[s] {
                continue;
            }
            for v in 0..n {
                preds[v].clear();
                sigma[v] = 0;
                self.dist[v] = INF;
            }
            sigma[s] = 1;
            self.dist[s] = 0;
            fifo.clear();
            fifo.push(s as u32);
            let mut head = 0;
            while head < fifo.len() {
                let u = fifo[head] as usize;
                head += 1;
                for &l in &g.nodes[u].links {
                    let v = g.links[l as usize].to as usize;
                    if !self.in_hull[v] {
                        continue;
                    }
                    if self.dist[v] == INF {
                        self.dist[v] = self.dist[u] + 1;
                        fifo.push(v as u32);
                    }
                    if self.dist[v] == self.dist[u] + 1 {
                        sigma[v] += sigma[u];
                        preds[v].push(u as u32);
                    }
                }
            }
            // The source stands for itself (j = 0) and, in turn, for each of
            // its CA destinations (j > 0), as OpenSM has no CA nodes to start from.
            for j in 0..=adj_terminals[s] {
                delta.fill(0.0);
                for &v in fifo.iter().rev() {
                    let v = v as usize;
                    let extra = if v != s || j == 0 { adj_terminals[v] } else { adj_terminals[v].saturating_sub(1) };
                    // OpenSM adds sigma/sigma once per CA: exactly 1.0 each time.
                    for _ in 0..extra {
                        delta[v] += 1.0;
                    }
                    for &u in &preds[v] {
                        let u = u as usize;
                        delta[u] += sigma[u] as f64 / sigma[v] as f64 * (1.0 + delta[v]);
                    }
                    if j > 0 || v != s {
                        betweenness[v] += delta[v];
                    }
                }
            }
        }
        let mut best = (NONE, -1.0f64);
        for (v, &b) in betweenness.iter().enumerate() {
            if self.in_hull[v] && best.1 < b {
                best = (v as u32, b);
            }
        }
        best.0
    }

    /// Cheapest paths from `root` under `weight`, as a tree of parent links.
    pub(super) fn tree(&mut self, g: &Graph, weight: &[u64], root: u32) {
        self.heap.clear();
        for v in 0..g.nodes.len() {
            self.dist[v] = INF;
            self.parent[v] = NONE;
            self.heap.insert(INF, v as u32);
        }
        self.dist[root as usize] = 0;
        self.heap.set_key(root, 0);
        while let Some((_, u)) = self.heap.pop() {
            for &l in &g.nodes[u as usize].links {
                let v = g.links[l as usize].to;
                let d = self.dist[u as usize].saturating_add(weight[l as usize]);
                if d < self.dist[v as usize] {
                    self.parent[v as usize] = l;
                    self.dist[v as usize] = d;
                    self.heap.set_key(v, d);
                }
            }
        }
    }

    /// The tree's paths turned toward `dest` (OpenSM's
    /// `use_escape_paths_to_solve_impass`): each switch's link toward its
    /// parent, reversed on the way from `dest` up to the root.
    pub(super) fn paths_to(&self, g: &Graph, dest: u32, used: &mut [u32]) {
        used.copy_from_slice(&self.parent);
        let mut cur = used[dest as usize];
        used[dest as usize] = NONE;
        while cur != NONE {
            let up = g.links[cur as usize].from as usize;
            let rev = g.links[cur as usize].reverse;
            cur = used[up];
            used[up] = rev;
        }
    }
}

/// Colours the dependency from channel `a` to channel `b` as an escape path.
fn paint(g: &Graph, colors: &mut Colors, a: u32, b: u32) {
    if let Some(d) = g.dep(a, b) {
        colors.dep[d] = ESCAPE;
    }
}
