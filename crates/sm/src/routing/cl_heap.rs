//! OpenSM's d-ary heap (`complib/cl_heap.c`), shared by the engines that
//! repeat OpenSM's Dijkstra runs (`sssp`, `dfsssp`, `nue`): which of several
//! equal keys leaves the heap first decides which of several equally cheap
//! paths a LID gets, so the heap's moves are reproduced step for step.

/// A 4-ary min-heap of (key, element) whose element positions are tracked, so
/// that a key can be changed or an element deleted in place. Its moves are
/// OpenSM's: a node moves up only past strictly larger keys, moves down only
/// below a strictly smaller child, and of equal smallest children the last
/// one is taken; a deleted slot is filled by the last one, which then moves
/// the way its new parent asks.
pub(crate) struct ClHeap {
    /// (key, element) by heap position.
    slots: Vec<(u64, u32)>,
    /// Heap position of each element (stale once it left the heap).
    pos: Vec<usize>,
    size: usize,
}

impl ClHeap {
    const D: usize = 4;

    /// A heap for elements `0..elements`.
    pub(crate) fn new(elements: usize) -> Self {
        ClHeap { slots: vec![(0, 0); elements], pos: vec![0; elements], size: 0 }
    }

    pub(crate) fn clear(&mut self) {
        self.size = 0;
    }

    fn place(&mut self, at: usize, slot: (u64, u32)) {
        self.slots[at] = slot;
        self.pos[slot.1 as usize] = at;
    }

    /// Adds `element` with `key` (`cl_heap_insert`).
    pub(crate) fn insert(&mut self, key: u64, element: u32) {
        let at = self.size;
        self.place(at, (key, element));
        self.size += 1;
        self.up(at);
    }

    fn up(&mut self, index: usize) {
        if index == 0 {
            return;
        }
        let tmp = self.slots[index];
        let mut parent = index;
        let mut hole = None;
        loop {
            let child = parent;
            parent = (child - 1) / Self::D;
            if tmp.0 < self.slots[parent].0 {
                let moved = self.slots[parent];
                self.place(child, moved);
                hole = Some(parent);
            } else {
                break;
            }
            if parent == 0 {
                break;
            }
        }
        if let Some(h) = hole {
            self.place(h, tmp);
        }
    }

    fn down(&mut self, index: usize) {
        let tmp = self.slots[index];
        let mut parent = index;
        let mut swapped = false;
        while parent * Self::D + 1 < self.size {
            let first = parent * Self::D + 1;
            let mut smallest = first;
            for child in first + 1..(first + Self::D).min(self.size) {
                if self.slots[child].0 <= self.slots[smallest].0 {
                    smallest = child;
                }
            }
            if tmp.0 > self.slots[smallest].0 {
                let moved = self.slots[smallest];
                self.place(parent, moved);
                parent = smallest;
                swapped = true;
            } else {
                break;
            }
        }
        if swapped {
            self.place(parent, tmp);
        }
    }

    /// Gives `element` a new key (`cl_heap_modify_key`).
    pub(crate) fn set_key(&mut self, element: u32, key: u64) {
        let index = self.pos[element as usize];
        let old = self.slots[index].0;
        self.slots[index].0 = key;
        if key < old {
            self.up(index);
        } else if key > old {
            self.down(index);
        }
    }

    /// OpenSM's `cl_heap_delete(heap, element->heap_index)`: deletes whatever
    /// sits at the position last recorded for `element` (its own slot while
    /// it is in the heap), returning that slot's element; `None` if the
    /// position is past the heap's end.
    pub(crate) fn delete_at_position_of(&mut self, element: u32) -> Option<u32> {
        let index = self.pos[element as usize];
        (index < self.size).then(|| self.delete_at(index).1)
    }

    fn delete_at(&mut self, index: usize) -> (u64, u32) {
        let removed = self.slots[index];
        self.size -= 1;
        if self.size == 0 {
            return removed;
        }
        let last = self.slots[self.size];
        self.place(self.size, removed);
        self.place(index, last);
        if index == 0 {
            self.down(0);
        } else if index < self.size {
            let parent = self.slots[(index - 1) / Self::D].0;
            if parent < last.0 {
                self.down(index);
            } else if parent > last.0 {
                self.up(index);
            }
        }
        removed
    }

    /// Removes the root (`cl_heap_extract_root`).
    pub(crate) fn pop(&mut self) -> Option<(u64, u32)> {
        (self.size > 0).then(|| self.delete_at(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INF: u64 = u64::MAX;

    #[test]
    fn cl_heap_moves_as_opensms() {
        // Five elements at infinity; element 3 lowered to 0 is the root.
        let mut h = ClHeap::new(6);
        for e in 1..=5 {
            h.insert(INF, e);
        }
        h.set_key(3, 0);
        assert_eq!(h.pop(), Some((0, 3)));
        // Now [5, 2, 1, 4]: 5 moved up to the root and, equal to all, stayed.
        // Lowering 4 (position 3) first makes it the root; 2 (position 1)
        // then only ties it and stays: 4 leaves before 2, though 2 < 4.
        h.set_key(4, 10);
        h.set_key(2, 10);
        assert_eq!(h.pop(), Some((10, 4)));
        assert_eq!(h.pop(), Some((10, 2)));
        // The other order: 2 becomes the root, 4 ties below it.
        let mut h = ClHeap::new(6);
        for e in 1..=5 {
            h.insert(INF, e);
        }
        h.set_key(3, 0);
        h.pop();
        h.set_key(2, 10);
        h.set_key(4, 10);
        let order: Vec<u32> = std::iter::from_fn(|| h.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec![2, 4, 1, 5]);
    }

    #[test]
    fn delete_refills_from_the_last_slot() {
        // Keys 1..=9 inserted in order form the 4-ary heap
        // [1 | 2 3 4 5 | 6 7 8 9] (children of 2 are 6..9).
        let mut h = ClHeap::new(10);
        for e in 1..=9 {
            h.insert(e as u64, e);
        }
        // Deleting 3 (position 2, a leaf-parent with no children): 9 takes
        // its slot; its parent 1 is smaller, it cannot sink, so stays there.
        assert_eq!(h.delete_at_position_of(3), Some(3));
        assert_eq!(h.pos[9], 2);
        // Deleting 6 (position 5, child of 2): the last slot now holds 8
        // (position 7); above 2, it stays at position 5.
        assert_eq!(h.delete_at_position_of(6), Some(6));
        assert_eq!(h.pos[8], 5);
        let order: Vec<u32> = std::iter::from_fn(|| h.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec![1, 2, 4, 5, 7, 8, 9]);
        // A popped element's recorded position is past the end: nothing to delete.
        assert_eq!(h.delete_at_position_of(4), None);
        assert_eq!(h.pop(), None);
    }
}
