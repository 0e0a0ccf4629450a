//! The iteration order of GCC's `std::unordered_map<std::string, T>` (libstdc++, LP64), which
//! GE's passes expose where they walk such a map (attached-stream groups, ge-compiler.md §4.13).
//!
//! Three pieces, each as libstdc++ does it:
//! * the hash, `std::hash<std::string>` = `std::_Hash_bytes(data, len, 0xc70f6907)`: the 64-bit
//!   MurmurHash2 variant of libstdc++'s `hash_bytes.cc` ([`hash_string`]);
//! * the bucket counts of `_Prime_rehash_policy` (maximum load factor 1): one bucket when
//!   empty, then 13, and each time the element count would pass the bucket count, the next
//!   count of its prime table at or above twice the old one ([`REHASH_BUCKETS`]);
//! * where `_Hashtable` links a node: a new key goes first in its bucket when the bucket has
//!   nodes, else first in the whole list (the old first node's bucket then starts after it);
//!   a rehash walks the list in order and relinks each node the same way, into the new buckets.
//!
//! Iteration walks that singly linked list from its head. Checked against g++ 12 output in the
//! tests below.

use crate::bail;
use crate::error::Result;

/// `_Hash_bytes`'s multiplier.
const MUL: u64 = (0xc6a4_a793_u64 << 32) + 0x5bd1_e995;
/// The seed `std::hash<std::string>` passes.
const SEED: u64 = 0xc70f_6907;

fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

/// libstdc++'s `std::hash<std::string>` on a 64-bit target.
pub fn hash_string(s: &str) -> u64 {
    let b = s.as_bytes();
    let mut hash = SEED ^ (b.len() as u64).wrapping_mul(MUL);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let data = shift_mix(u64::from_le_bytes(c.try_into().expect("8 bytes")).wrapping_mul(MUL)).wrapping_mul(MUL);
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // load_bytes: the tail's bytes, last one most significant.
        let data = rest.iter().rev().fold(0u64, |acc, &x| (acc << 8) + u64::from(x));
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    hash = shift_mix(hash).wrapping_mul(MUL);
    shift_mix(hash)
}

/// Bucket counts a default-constructed map grows through: with `n` elements it has the first
/// count `>= n` of this list (one bucket when empty). The rehash happens while inserting the
/// element that would make the count exceed the buckets. (g++ 12, `bucket_count()` after each
/// insertion.)
pub const REHASH_BUCKETS: [u64; 19] = [
    13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933, 351061, 712697, 1447153, 2938679,
    5967347,
];

/// The order GCC's `std::unordered_map<std::string, T>` iterates its keys in, given the keys
/// in the order they were first inserted (repeats are ignored, as `operator[]` / `emplace` of
/// a present key add no node).
pub fn iteration_order<S: AsRef<str>>(keys_in_insertion_order: &[S]) -> Result<Vec<usize>> {
    let mut list: Vec<usize> = Vec::new(); // the linked list, head first: indexes into `keys`
    let mut hashes: Vec<u64> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut buckets: u64 = 1;
    for (i, k) in keys_in_insertion_order.iter().enumerate() {
        if !seen.insert(k.as_ref()) {
            continue;
        }
        hashes.resize(i + 1, 0);
        hashes[i] = hash_string(k.as_ref());
        let n = list.len() as u64 + 1;
        if n > buckets || buckets == 1 {
            let Some(&next) = REHASH_BUCKETS.iter().find(|&&b| b >= n) else {
                bail!(Limit, "more than {} keys in one unordered map", REHASH_BUCKETS[REHASH_BUCKETS.len() - 1]);
            };
            if next != buckets {
                buckets = next;
                let old = std::mem::take(&mut list);
                for node in old {
                    link(&mut list, &hashes, node, buckets);
                }
            }
        }
        link(&mut list, &hashes, i, buckets);
    }
    Ok(list)
}

/// Links `node` as `_Hashtable` does: first in its bucket when the bucket has nodes (right
/// after the node that precedes the bucket's first), else at the head of the list.
fn link(list: &mut Vec<usize>, hashes: &[u64], node: usize, buckets: u64) {
    let bucket = hashes[node] % buckets;
    match list.iter().position(|&m| hashes[m] % buckets == bucket) {
        Some(first) => list.insert(first, node),
        None => list.insert(0, node),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_libstdcxx() {
        // std::hash<std::string>{}(s), printed by a g++ 12 program on x86-64.
        for (s, h) in [
            ("", 6142509188972423790u64),
            ("a", 4993892634952068459),
            ("group0", 6259254568146055997),
            ("_default_stream_info_group", 4902742713884234989),
            ("abcdefgh", 8664279048047335611),
            ("abcdefghi", 13036955925923793583),
            ("g1", 12925487870028119644),
        ] {
            assert_eq!(hash_string(s), h, "hash of {s:?}");
        }
    }

    #[test]
    fn two_keys_iterate_last_inserted_first() {
        let order = iteration_order(&["_default_stream_info_group", "group0"]).unwrap();
        assert_eq!(order, vec![1, 0]);
        assert_eq!(iteration_order(&["x", "x"]).unwrap(), vec![0]);
    }

    #[test]
    fn forty_keys_across_two_rehashes_iterate_as_gxx() {
        // Iterating an unordered_map<string, int> after emplacing "group0".."group39" (g++ 12):
        // the map went from 13 to 29 to 59 buckets on the way.
        let keys: Vec<String> = (0..40).map(|i| format!("group{i}")).collect();
        let want = [
            39, 38, 35, 34, 30, 29, 12, 11, 10, 2, 32, 9, 8, 33, 14, 6, 7, 24, 23, 28, 4, 1, 5, 19, 36, 16, 0, 13, 15,
            22, 17, 18, 3, 20, 37, 31, 27, 21, 25, 26,
        ];
        assert_eq!(iteration_order(&keys).unwrap(), want);
    }
}
