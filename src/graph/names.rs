//! An index of names by position: an open-addressing table of `u32` positions keyed by a fast
//! hash of the name's bytes. The names themselves stay where they are (in the node specs, then
//! in the model's nodes); a lookup reads them through a `name_of` function. One `u64` per slot:
//! 32 bits of the hash, which also place the slot, and the position. So a million names take
//! 16 MB, most misses never touch a name, and the table grows without reading a name.
//! Deterministic: no random seed.

use std::collections::TryReserveError;

/// Names `0..len` of a table, each looked up by its text.
#[derive(Clone, Debug, Default)]
pub struct NameIndex {
    /// `tag << 32 | (position + 1)`; 0 is an empty slot.
    slots: Vec<u64>,
    len: usize,
}

const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// A fast, seedless hash of `bytes` (FxHash-like over 8-byte words, then a final mix).
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 32)
}

impl NameIndex {
    /// An index for about `n` names; an error when the process cannot get the table.
    pub fn with_capacity(n: usize) -> Result<Self, TryReserveError> {
        let mut slots = Vec::new();
        let size = Self::size_for(n);
        slots.try_reserve_exact(size)?;
        slots.resize(size, 0);
        Ok(NameIndex { slots, len: 0 })
    }

    fn size_for(n: usize) -> usize {
        (n.saturating_mul(2)).max(16).next_power_of_two()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The 32 bits of a name's hash that the table keeps (never 0 in a used slot: the
    /// position part is at least 1).
    #[inline]
    fn tag(name: &str) -> u64 {
        hash(name.as_bytes()) >> 32
    }

    /// The position of `name`, if indexed.
    #[inline]
    pub fn get<'a>(&self, name: &str, name_of: impl Fn(u32) -> &'a str) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.probe(name, Self::tag(name), name_of).ok()
    }

    /// Walks `name`'s probe sequence from the slot its `tag` picks: `Ok(position)` where the
    /// name is indexed, `Err(slot)` at the first empty slot (the table is never full).
    #[inline]
    fn probe<'a>(&self, name: &str, tag: u64, name_of: impl Fn(u32) -> &'a str) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut i = tag as usize & mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return Err(i);
            }
            if s >> 32 == tag {
                let pos = (s as u32) - 1;
                if name_of(pos) == name {
                    return Ok(pos);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Looks up `keys` together into `out` (cleared first), in three passes over them: their
    /// first slots, then the names those slots hold, then the comparisons. The loads of a pass
    /// do not wait on each other, so their cache misses overlap (on a large graph nearly every
    /// one misses). A key whose first slot holds another name is probed as [`get`](Self::get)
    /// does.
    pub fn get_batch<'a>(&self, keys: &[&str], name_of: impl Fn(u32) -> &'a str, out: &mut Vec<Option<u32>>) {
        out.clear();
        if self.slots.is_empty() {
            out.resize(keys.len(), None);
            return;
        }
        let mask = self.slots.len() - 1;
        let tags: Vec<u64> = keys.iter().map(|k| Self::tag(k)).collect();
        let first: Vec<u64> = tags.iter().map(|&t| self.slots[t as usize & mask]).collect();
        let found: Vec<&str> = first
            .iter()
            .zip(&tags)
            .map(|(&s, &t)| if s != 0 && s >> 32 == t { name_of((s as u32) - 1) } else { "" })
            .collect();
        for (i, key) in keys.iter().enumerate() {
            let s = first[i];
            out.push(if s == 0 {
                None
            } else if s >> 32 == tags[i] && found[i] == *key {
                Some((s as u32) - 1)
            } else {
                self.get(key, &name_of)
            });
        }
    }

    /// Indexes `name` at `pos`; when the name is there already, keeps the first position and
    /// returns it. `name_of` gives the name at every position indexed so far.
    pub fn insert<'a>(
        &mut self,
        name: &str,
        pos: u32,
        name_of: impl Fn(u32) -> &'a str,
    ) -> Result<Option<u32>, TryReserveError> {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow()?;
        }
        let tag = Self::tag(name);
        match self.probe(name, tag, name_of) {
            Ok(old) => Ok(Some(old)),
            Err(slot) => {
                self.slots[slot] = (tag << 32) | (u64::from(pos) + 1);
                self.len += 1;
                Ok(None)
            }
        }
    }

    /// Indexes `keys` at positions `first, first + 1, …`, reading their slots in one pass
    /// first (the misses overlap; the inserts then hit the cache). Returns the position of the
    /// first key already indexed, if any, having indexed the keys before it.
    pub fn insert_batch<'a>(
        &mut self,
        first: u32,
        keys: &[&str],
        name_of: impl Fn(u32) -> &'a str,
    ) -> Result<Option<u32>, TryReserveError> {
        // Nothing to index: an empty table has no slot to mask with.
        if keys.is_empty() {
            return Ok(None);
        }
        while (self.len + keys.len()) * 2 > self.slots.len() {
            self.grow()?;
        }
        let mask = self.slots.len() - 1;
        let tags: Vec<u64> = keys.iter().map(|k| Self::tag(k)).collect();
        let warm = tags.iter().fold(0u64, |acc, &t| acc ^ self.slots[t as usize & mask]);
        std::hint::black_box(warm);
        for (k, (key, tag)) in keys.iter().zip(tags).enumerate() {
            let pos = first + k as u32;
            let Err(slot) = self.probe(key, tag, &name_of) else { return Ok(Some(pos)) };
            self.slots[slot] = (tag << 32) | (u64::from(pos) + 1);
            self.len += 1;
        }
        Ok(None)
    }

    fn grow(&mut self) -> Result<(), TryReserveError> {
        let size = Self::size_for(self.len + 1).max(self.slots.len() * 2);
        let mut slots = Vec::new();
        slots.try_reserve_exact(size)?;
        slots.resize(size, 0);
        let mask = size - 1;
        for s in std::mem::take(&mut self.slots).into_iter().filter(|&s| s != 0) {
            let mut i = (s >> 32) as usize & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = s;
        }
        self.slots = slots;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph without nodes indexes no name: the empty table has no slot, and nothing to mask.
    #[test]
    fn an_empty_batch_on_an_empty_table_indexes_nothing() {
        let mut idx = NameIndex::default();
        assert_eq!(idx.insert_batch(0, &[], |_| ""), Ok(None));
        assert_eq!(idx.len(), 0);
        assert_eq!(idx.insert_batch(0, &["a"], |_| "a"), Ok(None));
        assert_eq!(idx.get("a", |_| "a"), Some(0));
    }

    #[test]
    fn finds_every_name_and_keeps_the_first() {
        let names: Vec<String> = (0..5000).map(|i| format!("node_{i}")).collect();
        let mut idx = NameIndex::with_capacity(10).unwrap();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(idx.insert(n, i as u32, |p| names[p as usize].as_str()).unwrap(), None);
        }
        assert_eq!(idx.len(), names.len());
        for (i, n) in names.iter().enumerate() {
            assert_eq!(idx.get(n, |p| names[p as usize].as_str()), Some(i as u32));
        }
        assert_eq!(idx.get("node_5000", |p| names[p as usize].as_str()), None);
        let mut batched = NameIndex::default();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        for (c, chunk) in refs.chunks(300).enumerate() {
            assert_eq!(batched.insert_batch((c * 300) as u32, chunk, |p| refs[p as usize]).unwrap(), None);
        }
        assert!(refs.iter().enumerate().all(|(i, n)| batched.get(n, |p| refs[p as usize]) == Some(i as u32)));
        let again = ["fresh", "node_9", "later"];
        let all: Vec<&str> = refs.iter().copied().chain(again).collect();
        assert_eq!(batched.insert_batch(5000, &again, |p| all[p as usize]).unwrap(), Some(5001));
        assert_eq!(batched.get("fresh", |p| all[p as usize]), Some(5000));
        let keys: Vec<&str> = ["node_3", "none", "node_4999", "", "node_0"].into();
        let mut out = Vec::new();
        idx.get_batch(&keys, |p| names[p as usize].as_str(), &mut out);
        let one_by_one: Vec<Option<u32>> = keys.iter().map(|k| idx.get(k, |p| names[p as usize].as_str())).collect();
        assert_eq!(out, one_by_one);
        assert_eq!(out, vec![Some(3), None, Some(4999), None, Some(0)]);
        assert_eq!(idx.get("", |p| names[p as usize].as_str()), None);
        let mut with_dup = names.clone();
        with_dup.push("node_7".into());
        assert_eq!(idx.insert("node_7", 5000, |p| with_dup[p as usize].as_str()).unwrap(), Some(7));
        assert_eq!(NameIndex::default().get("x", |_| ""), None);
    }

    #[test]
    fn hash_is_seedless_and_length_aware() {
        assert_eq!(hash(b"abc"), hash(b"abc"));
        assert_ne!(hash(b"a"), hash(b"a\0"));
        assert_ne!(hash(b""), hash(b"\0"));
    }
}
