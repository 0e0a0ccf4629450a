//! Typed indices. Every table in the crate is indexed by one of these, never by a bare
//! `usize`, so a node index can not be used where a stream id is meant.
//!
//! [`define_index!`] makes each one, as regalloc2's macro of that name does
//! (bytecodealliance/regalloc2 `src/index.rs`): a `u32` newtype with `new`, `index` and an
//! `invalid()` value (`u32::MAX`) that a table uses for "none" instead of a private sentinel.

use std::fmt;

macro_rules! define_index {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[repr(transparent)]
        pub struct $name(pub u32);

        #[allow(dead_code)]
        impl $name {
            /// Wraps a table position. Panics only if the table outgrew `u32`, which the loader refuses first.
            #[inline]
            pub fn new(index: usize) -> Self {
                $name(u32::try_from(index).expect(concat!(stringify!($name), " overflow")))
            }
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
            /// The "none" value: no table is this long (the loader refuses `u32::MAX` entries).
            #[inline]
            pub const fn invalid() -> Self {
                $name(u32::MAX)
            }
            #[inline]
            pub fn is_valid(self) -> bool {
                self.0 != u32::MAX
            }
            #[inline]
            pub fn is_invalid(self) -> bool {
                self.0 == u32::MAX
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}{}", stringify!($name), self.0)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }

        impl $crate::graph::ids::Idx for $name {
            #[inline]
            fn from_index(i: usize) -> Self {
                $name::new(i)
            }
            #[inline]
            fn to_index(self) -> usize {
                self.index()
            }
        }

        /// Written as the bare number, as GE writes ids.
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_u32(self.0)
            }
        }
    };
}

/// Other modules define their private indices with it (a stream of one schedule, a group).
pub(crate) use define_index;

define_index!(
    /// A node of any graph of a model (root or nested): ids are global across the model.
    NodeId
);
define_index!(
    /// An edge of any graph of a model.
    EdgeId
);
define_index!(
    /// A graph of a model; `GraphId(0)` is always the root.
    GraphId
);
define_index!(
    /// A row of the engine table.
    EngineId
);
define_index!(
    /// An engine subgraph produced by the partitioner (GE's `SubGraphInfo`).
    SubgraphId
);
define_index!(
    /// A logical, physical or attached stream id, as GE numbers them.
    StreamId
);
define_index!(
    /// An event or notify id.
    EventId
);
define_index!(
    /// A node the pipeline inserted (Send, Recv, StreamActive, ...): its position in the
    /// allocation's inserted-node table.
    InsertedId
);

define_index!(
    /// A root node's place in the root graph's topological order (the policies' `order`):
    /// what the policies' list schedules index their tables by.
    Pos
);

impl GraphId {
    pub const ROOT: GraphId = GraphId(0);
}

/// A dense vector indexed by a typed id.
#[derive(Clone, PartialEq, Eq)]
pub struct IdVec<I, T> {
    items: Vec<T>,
    _marker: std::marker::PhantomData<fn(I) -> I>,
}

impl<I, T: fmt::Debug> fmt::Debug for IdVec<I, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.items.fmt(f)
    }
}

impl<I, T> Default for IdVec<I, T> {
    fn default() -> Self {
        IdVec { items: Vec::new(), _marker: std::marker::PhantomData }
    }
}

pub trait Idx: Copy {
    fn from_index(i: usize) -> Self;
    fn to_index(self) -> usize;
}

/// Positions in an order (a graph's topological order, a stream's entries): dense tables
/// indexed by position, where no typed id applies.
impl Idx for u32 {
    #[inline]
    fn from_index(i: usize) -> Self {
        u32::try_from(i).expect("position overflow")
    }
    #[inline]
    fn to_index(self) -> usize {
        self as usize
    }
}

impl<I: Idx, T> IdVec<I, T> {
    pub fn new() -> Self {
        IdVec { items: Vec::new(), _marker: std::marker::PhantomData }
    }
    pub fn with_capacity(n: usize) -> Self {
        Self::from_vec(Vec::with_capacity(n))
    }
    pub fn from_vec(items: Vec<T>) -> Self {
        IdVec { items, _marker: std::marker::PhantomData }
    }
    pub fn filled(len: usize, value: T) -> Self
    where
        T: Clone,
    {
        Self::from_vec(vec![value; len])
    }
    pub fn push(&mut self, item: T) -> I {
        let id = I::from_index(self.items.len());
        self.items.push(item);
        id
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.items.iter_mut()
    }
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = I> + ExactSizeIterator + use<I, T> {
        (0..self.items.len()).map(I::from_index)
    }
    pub fn enumerate(&self) -> impl DoubleEndedIterator<Item = (I, &T)> + Clone {
        self.items.iter().enumerate().map(|(i, t)| (I::from_index(i), t))
    }
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }
    pub fn into_vec(self) -> Vec<T> {
        self.items
    }
    pub fn get(&self, id: I) -> Option<&T> {
        self.items.get(id.to_index())
    }
}

impl<I: Idx, T> std::ops::Index<I> for IdVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, id: I) -> &T {
        &self.items[id.to_index()]
    }
}

impl<I: Idx, T> std::ops::IndexMut<I> for IdVec<I, T> {
    #[inline]
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.items[id.to_index()]
    }
}

impl<I: Idx, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> Self {
        Self::from_vec(iter.into_iter().collect())
    }
}

impl<'a, I: Idx, T> IntoIterator for &'a IdVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<I: Idx, T> Extend<T> for IdVec<I, T> {
    fn extend<It: IntoIterator<Item = T>>(&mut self, iter: It) {
        self.items.extend(iter);
    }
}
