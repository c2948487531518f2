//! A fast hash for maps keyed by the program's own small integers and values (unknown ids,
//! memo keys, table points): a multiply-and-rotate over the words of a key, the scheme of rustc's
//! `FxHasher`. Such keys never come from an adversary, and the standard SipHash cost more
//! than the look-ups it served.

use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` hashed by [`WordHasher`].
pub type WordMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<WordHasher>>;
/// A `HashSet` hashed by [`WordHasher`].
pub type WordSet<K> = std::collections::HashSet<K, BuildHasherDefault<WordHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_differ_hash_apart_and_a_map_finds_them() {
        let h = |n: u32| {
            let mut s = WordHasher::default();
            s.write_u32(n);
            s.finish()
        };
        assert_ne!(h(1), h(2));
        assert_eq!(h(7), h(7));
        let mut m: WordMap<u32, &str> = WordMap::default();
        for k in 0..1000 {
            m.insert(k, if k % 2 == 0 { "even" } else { "odd" });
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m.get(&998), Some(&"even"));
        assert_eq!(m.get(&1000), None);
    }

    #[test]
    fn byte_keys_hash_by_their_words_tail_included() {
        let h = |b: &[u8]| {
            let mut s = WordHasher::default();
            s.write(b);
            s.finish()
        };
        assert_ne!(h(b"abcdefgh1"), h(b"abcdefgh2"));
    }
}
