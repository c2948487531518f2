//! The one random source: ChaCha8 seeded from a `u64`, with a documented, portable way of
//! turning its output into die faces so any backend can reproduce every draw.
//!
//! Draw order (the contract every backend follows):
//! - a die roll is one call of [`Dice::index`] with the die's number of faces;
//! - expressions draw depth first, left operand before right, call arguments left to right;
//! - a pool of `n` dice draws `n` rolls in order; `reroll` draws its second roll only when the
//!   first lands in the reroll range;
//! - a modifier stack walks its entries in order: `when` first, then (only if it holds) the
//!   value, then `per`;
//! - `if` draws for its condition, then only for the branch taken; `and`/`or` short-circuit.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

/// Words of generator output buffered at once. Compiled code reads the buffer directly, so
/// its layout is fixed (`repr(C)`) and its offsets are exported below.
pub const BUFFER_WORDS: u64 = 64;

#[derive(Debug, Clone)]
#[repr(C)]
pub struct Dice {
    /// Next unread word of `buf`; `BUFFER_WORDS` or more means "refill first". Scripted dice
    /// keep it there so every draw takes the slow path.
    pos: u64,
    /// The next words of the ChaCha8 stream, in order.
    buf: [u32; BUFFER_WORDS as usize],
    draws: u64,
    rng: ChaCha8Rng,
    /// Scripted indices replace the generator (brute-force enumeration, backend agreement).
    script: Option<Script>,
    /// While watched (a logged game), every die the interpreter rolls: (die id, face).
    rolls: Option<Vec<(u32, i64)>>,
}

#[derive(Debug, Clone)]
struct Script {
    indices: Vec<u32>,
    next: usize,
    /// Faces of the first draw past the end of the script, if any.
    overflow: Option<u32>,
}

impl Dice {
    pub fn new(seed: u64) -> Self {
        Dice {
            pos: BUFFER_WORDS,
            buf: [0; BUFFER_WORDS as usize],
            draws: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
            script: None,
            rolls: None,
        }
    }

    /// The next word of the stream. Buffering changes nothing in the sequence: the buffer is
    /// refilled with the generator's next words, in order.
    fn next_word(&mut self) -> u32 {
        if self.pos >= BUFFER_WORDS {
            for w in self.buf.iter_mut() {
                *w = self.rng.next_u32();
            }
            self.pos = 0;
        }
        let w = self.buf[self.pos as usize];
        self.pos += 1;
        w
    }

    /// Dice that return the given face indices in order. Past the end they return 0 and
    /// remember how many faces the first missing draw had: an enumerator extends the script
    /// with each possible index and runs again.
    pub fn scripted(indices: Vec<u32>) -> Self {
        let mut d = Dice::new(0);
        d.script = Some(Script {
            indices,
            next: 0,
            overflow: None,
        });
        d
    }

    /// For scripted dice: the number of faces of the first draw the script did not cover.
    pub fn overflow(&self) -> Option<u32> {
        self.script.as_ref().and_then(|s| s.overflow)
    }

    /// A uniform index in `0..n` (`n >= 1`): Lemire's multiply-and-reject on 32-bit words,
    /// so the result depends only on the ChaCha8 stream.
    pub fn index(&mut self, n: u32) -> u32 {
        debug_assert!(n >= 1);
        self.draws += 1;
        let n = n.max(1);
        if let Some(s) = &mut self.script {
            let i = s.next;
            s.next += 1;
            return match s.indices.get(i) {
                Some(x) => (*x).min(n - 1),
                None => {
                    if s.overflow.is_none() && i == s.indices.len() {
                        s.overflow = Some(n);
                    }
                    0
                }
            };
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let x = self.next_word();
            let m = u64::from(x) * u64::from(n);
            if (m as u32) >= threshold {
                return (m >> 32) as u32;
            }
        }
    }

    /// Where the stream stands, in a form any build can restore: the generator's seed and
    /// how many words of its stream have been used (the buffer is refilled from there).
    /// Scripted dice have no such form.
    pub fn portable(&self) -> Option<DiceState> {
        if self.script.is_some() {
            return None;
        }
        let unread = BUFFER_WORDS.saturating_sub(self.pos) as u128;
        let used = self.rng.get_word_pos() - unread;
        Some(DiceState {
            seed: self
                .rng
                .get_seed()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            words: u64::try_from(used).ok()?,
            draws: self.draws,
        })
    }

    /// Dice that go on exactly where [`Dice::portable`] left them.
    pub fn from_portable(s: &DiceState) -> Result<Self, String> {
        let bad = || format!("a dice state's seed is not 64 hex digits: `{}`", s.seed);
        if s.seed.len() != 64 || !s.seed.is_ascii() {
            return Err(bad());
        }
        let mut seed = [0u8; 32];
        for (k, b) in seed.iter_mut().enumerate() {
            *b = u8::from_str_radix(&s.seed[2 * k..2 * k + 2], 16).map_err(|_| bad())?;
        }
        let mut rng = ChaCha8Rng::from_seed(seed);
        rng.set_word_pos(u128::from(s.words));
        Ok(Dice {
            pos: BUFFER_WORDS,
            buf: [0; BUFFER_WORDS as usize],
            draws: s.draws,
            rng,
            script: None,
            rolls: None,
        })
    }

    /// Byte offsets of the fields compiled code touches.
    pub(crate) const POS_OFFSET: i32 = std::mem::offset_of!(Dice, pos) as i32;
    pub(crate) const BUF_OFFSET: i32 = std::mem::offset_of!(Dice, buf) as i32;
    pub(crate) const DRAWS_OFFSET: i32 = std::mem::offset_of!(Dice, draws) as i32;

    /// Start keeping the dice rolled (if not kept already): returns whether this call started
    /// it and how many are kept so far, to hand back to [`Dice::watched`].
    pub fn watch(&mut self) -> (bool, usize) {
        match &self.rolls {
            Some(r) => (false, r.len()),
            None => {
                self.rolls = Some(Vec::new());
                (true, 0)
            }
        }
    }

    /// The rolls kept since [`Dice::watch`] returned `(started, from)`; stops keeping them if
    /// that call started it.
    pub fn watched(&mut self, started: bool, from: usize) -> Vec<(u32, i64)> {
        let seen = self
            .rolls
            .as_ref()
            .map_or(Vec::new(), |r| r.get(from..).unwrap_or_default().to_vec());
        if started {
            self.rolls = None;
        }
        seen
    }

    /// Keep a roll when watched (see [`Dice::watch`]).
    pub(crate) fn saw(&mut self, die: u32, face: i64) {
        if let Some(r) = &mut self.rolls {
            r.push((die, face));
        }
    }

    /// How many rolls have been drawn: backends must agree on this too.
    pub fn draws(&self) -> u64 {
        self.draws
    }
}

/// A dice stream's position as saved with a game (see [`Dice::portable`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiceState {
    /// The ChaCha8 seed, 32 bytes in hex.
    pub seed: String,
    /// Words of the stream used so far.
    pub words: u64,
    /// Rolls drawn so far.
    pub draws: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watching_keeps_the_rolls_of_each_span_and_stops_with_the_outermost() {
        let mut d = Dice::new(3);
        d.saw(0, 1);
        let outer = d.watch();
        assert_eq!(outer, (true, 0));
        d.saw(0, 4);
        let inner = d.watch();
        assert_eq!(inner, (false, 1));
        d.saw(1, 6);
        assert_eq!(d.watched(inner.0, inner.1), vec![(1, 6)]);
        d.saw(0, 2);
        assert_eq!(d.watched(outer.0, outer.1), vec![(0, 4), (1, 6), (0, 2)]);
        // Unwatched again: nothing is kept (bulk simulation pays nothing).
        d.saw(0, 5);
        assert!(d.rolls.is_none());
    }

    #[test]
    fn a_restored_stream_goes_on_with_the_same_rolls() {
        for used in [0, 1, 63, 64, 65, 200] {
            let mut a = Dice::new(9);
            for _ in 0..used {
                a.index(6);
            }
            let mut b = Dice::from_portable(&a.portable().unwrap()).unwrap();
            let ra: Vec<u32> = (0..300).map(|_| a.index(1000)).collect();
            let rb: Vec<u32> = (0..300).map(|_| b.index(1000)).collect();
            assert_eq!(ra, rb, "after {used} rolls");
            assert_eq!(a.draws(), b.draws());
        }
        assert!(Dice::scripted(vec![1]).portable().is_none());
        let mut bad = Dice::new(1).portable().unwrap();
        bad.seed.pop();
        assert!(Dice::from_portable(&bad).is_err());
    }

    #[test]
    fn same_seed_same_rolls() {
        let mut a = Dice::new(7);
        let mut b = Dice::new(7);
        let ra: Vec<u32> = (0..100).map(|_| a.index(6)).collect();
        let rb: Vec<u32> = (0..100).map(|_| b.index(6)).collect();
        assert_eq!(ra, rb);
        assert_eq!(a.draws(), 100);
    }

    #[test]
    fn indices_stay_in_range_and_cover_every_face() {
        let mut d = Dice::new(1);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let i = d.index(10);
            seen[i as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800 && c < 1200), "{seen:?}");
    }

    #[test]
    fn the_stream_is_pinned() {
        // A change of generator or of the index algorithm would change every replay.
        let mut d = Dice::new(42);
        let got: Vec<u32> = (0..8).map(|_| d.index(10)).collect();
        assert_eq!(got, PINNED);
    }
    const PINNED: [u32; 8] = [2, 6, 1, 9, 7, 4, 3, 6];
}
