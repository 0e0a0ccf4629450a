//! Node names. ONNX node names are optional and need not be unique, but tensor names are unique
//! within a graph (each tensor has one producer), so a node is named after what it writes:
//!
//! - an operator node takes the name of its first non-empty output tensor;
//! - a graph input (`Data`) and an initializer (`Const`) take their tensor's name;
//! - a node that writes no named tensor takes its operator type;
//! - the graph's output node is `NetOutput`;
//! - a name already taken in the same graph gets `#2`, `#3`, ... (the first free one), in the
//!   order: inputs, initializers, operators in import order, `NetOutput`.
//!
//! The names depend only on the file, so the same file always yields the same names.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// A hash map keyed by the model's names: foldhash, seeded per process (a model is untrusted
/// input), several times faster than the standard SipHash on short tensor names. Nothing
/// iterates one where its order could reach an output.
pub type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
/// A hash set of the model's names ([`Map`]).
pub type Set<K> = HashSet<K, foldhash::fast::RandomState>;

/// The names taken in one scope. A name borrowed from the model (a tensor's, an operator's) is
/// kept without a copy.
#[derive(Default)]
pub struct Namer<'g> {
    used: Set<Cow<'g, str>>,
}

impl<'g> Namer<'g> {
    /// A namer with room for `n` names.
    pub fn with_capacity(n: usize) -> Namer<'g> {
        Namer { used: Set::with_capacity_and_hasher(n, Default::default()) }
    }

    /// A unique name for a node whose natural name is `base`.
    pub fn take(&mut self, base: impl Into<Cow<'g, str>>) -> String {
        let base: Cow<'g, str> = base.into();
        let base = if base.is_empty() { Cow::Borrowed("node") } else { base };
        if !self.used.contains(base.as_ref()) {
            let name = base.to_string();
            self.used.insert(base);
            return name;
        }
        let mut k = 2u64;
        loop {
            let candidate = format!("{base}#{k}");
            if !self.used.contains(candidate.as_str()) {
                self.used.insert(Cow::Owned(candidate.clone()));
                return candidate;
            }
            k += 1;
        }
    }
}

/// The natural name of an operator node: its first non-empty output, else its op type.
pub fn base_name<'n>(outputs: &'n [String], op_type: &'n str) -> &'n str {
    outputs.iter().find(|o| !o.is_empty()).map_or(op_type, |s| s.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collisions_get_the_first_free_suffix() {
        let mut n = Namer::default();
        assert_eq!(n.take("a"), "a");
        assert_eq!(n.take("a"), "a#2");
        assert_eq!(n.take("a#2"), "a#2#2");
        assert_eq!(n.take("a"), "a#3");
        assert_eq!(n.take(""), "node");
    }

    #[test]
    fn operators_are_named_after_their_first_named_output() {
        let outs = vec![String::new(), "y".to_string()];
        assert_eq!(base_name(&outs, "Split"), "y");
        assert_eq!(base_name(&[], "Split"), "Split");
    }
}
