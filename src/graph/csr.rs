//! Lists grouped by a dense key (compressed sparse rows): all lists in one allocation and their
//! bounds in another, where a `Vec` per key would allocate once per key. The model's adjacency,
//! the policies' position adjacency, sync lists per node and the simulator's waiters all use it.

use std::marker::PhantomData;

use super::ids::Idx;

/// The lists of values per key `0..keys`.
#[derive(Clone, Debug, PartialEq)]
pub struct Csr<K, T> {
    start: Vec<u32>,
    list: Vec<T>,
    _key: PhantomData<K>,
}

impl<K, T> Default for Csr<K, T> {
    fn default() -> Self {
        Csr { start: vec![0], list: Vec::new(), _key: PhantomData }
    }
}

impl<K: Idx, T: Copy> Csr<K, T> {
    /// Groups `(key, value)` pairs by key, keys below `keys`, keeping their order within a key.
    /// `pairs` is walked twice: once to count, once to place.
    pub fn group(keys: usize, pairs: impl Iterator<Item = (K, T)> + Clone) -> Self {
        let mut start = vec![0u32; keys + 1];
        let Some((_, filler)) = pairs.clone().next() else {
            return Csr { start, list: Vec::new(), _key: PhantomData };
        };
        for (k, _) in pairs.clone() {
            start[k.to_index() + 1] += 1;
        }
        for i in 0..keys {
            start[i + 1] += start[i];
        }
        let mut fill = start[..keys].to_vec();
        let mut list = vec![filler; start[keys] as usize];
        for (k, v) in pairs {
            let slot = &mut fill[k.to_index()];
            list[*slot as usize] = v;
            *slot += 1;
        }
        Csr { start, list, _key: PhantomData }
    }

    /// Lists already laid out by key: key `k`'s values are `list[start[k]..start[k + 1]]`
    /// (`start` begins at 0, never decreases and ends at `list.len()`).
    pub fn from_parts(start: Vec<u32>, list: Vec<T>) -> Self {
        debug_assert!(start.first() == Some(&0) && start.is_sorted() && start.last() == Some(&(list.len() as u32)));
        Csr { start, list, _key: PhantomData }
    }

    /// The values of `key`, in the order they were given.
    #[inline]
    pub fn of(&self, key: K) -> &[T] {
        let k = key.to_index();
        &self.list[self.start[k] as usize..self.start[k + 1] as usize]
    }

    /// Values over all keys.
    pub fn entries(&self) -> usize {
        self.list.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Csr;

    #[test]
    fn groups_keep_their_order_and_empty_keys_stay_empty() {
        let c: Csr<u32, char> = Csr::group(4, [(2, 'a'), (0, 'b'), (2, 'c'), (3, 'd'), (2, 'e')].into_iter());
        assert_eq!(c.of(0), ['b']);
        assert!(c.of(1).is_empty());
        assert_eq!(c.of(2), ['a', 'c', 'e']);
        assert_eq!(c.of(3), ['d']);
        assert_eq!(c.entries(), 5);
        let empty: Csr<u32, char> = Csr::group(3, std::iter::empty());
        assert!(empty.of(2).is_empty());
        assert_eq!(empty.entries(), 0);
    }
}
