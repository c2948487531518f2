//! The open set of a movement-cost search: a ring of buckets, one per cost, over as many
//! costs as one hex may add (Dial's algorithm). Every entry is pushed at most the dearest hex
//! above the cheapest open one, so the ring never wraps onto an open cost, and taking the
//! cheapest is a step along the ring instead of a heap's sift. Entries of one cost come out
//! in any order: the costs a search settles do not depend on it.

#[derive(Default)]
pub(super) struct CostQueue {
    ring: Vec<Vec<usize>>,
    /// No open entry is cheaper than this.
    cheapest: u32,
    open: usize,
}

impl CostQueue {
    /// Empty, for costs of one step from 0 to `step`.
    pub(super) fn reset(&mut self, step: u32) {
        let size = step as usize + 1;
        for b in &mut self.ring {
            b.clear();
        }
        if self.ring.len() != size {
            self.ring.resize_with(size, Vec::new);
        }
        self.cheapest = 0;
        self.open = 0;
    }

    /// Open `at` at cost `d`, which is at least the cheapest open cost and at most one step
    /// above it.
    pub(super) fn push(&mut self, d: u32, at: usize) {
        debug_assert!(d >= self.cheapest && d - self.cheapest < self.ring.len() as u32);
        let n = self.ring.len();
        self.ring[d as usize % n].push(at);
        self.open += 1;
    }

    /// The cheapest open entry.
    pub(super) fn peek(&mut self) -> Option<(u32, usize)> {
        if self.open == 0 {
            return None;
        }
        let n = self.ring.len();
        loop {
            if let Some(&at) = self.ring[self.cheapest as usize % n].last() {
                return Some((self.cheapest, at));
            }
            self.cheapest += 1;
        }
    }

    /// Take the entry [`Self::peek`] gave.
    pub(super) fn pop(&mut self) {
        let n = self.ring.len();
        if self.ring[self.cheapest as usize % n].pop().is_some() {
            self.open -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CostQueue;

    #[test]
    fn gives_the_cheapest_first_across_the_ring() {
        let mut q = CostQueue::default();
        q.reset(3);
        q.push(0, 7);
        assert_eq!(q.peek(), Some((0, 7)));
        q.pop();
        q.push(3, 1);
        q.push(1, 2);
        q.push(2, 3);
        let mut seen = Vec::new();
        while let Some((d, at)) = q.peek() {
            q.pop();
            seen.push((d, at));
            // Pushes up to one step past the cheapest reuse the buckets already passed.
            if at == 2 {
                q.push(4, 9);
            }
        }
        assert_eq!(seen, vec![(1, 2), (2, 3), (3, 1), (4, 9)]);
        assert_eq!(q.peek(), None);
        q.reset(1);
        assert_eq!(q.peek(), None);
    }
}
