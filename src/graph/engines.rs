//! The engine table: GE's `engine_conf.json` flags and `engine_manager.cc` priorities
//! (ge-compiler.md §2.1), overridable per graph through the `engines` field.

use std::collections::BTreeMap;

use super::ids::{EngineId, IdVec};
use crate::error::Result;

/// One engine's allocation flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConf {
    /// GE spelling, e.g. `AIcoreEngine`.
    pub name: String,
    /// Gets its own stream per label in IndependentStreamPass; nobody reuses its stream.
    pub independent: bool,
    /// May reuse any predecessor's stream regardless of engine.
    pub attach: bool,
    /// May end without a stream (UpdateForSkippedEnginePass then places its nodes).
    pub skip_assign_stream: bool,
    /// GE's `compute_cost`: lower is preferred when choosing among reusable predecessors.
    /// `None` sorts after every engine that has one.
    pub priority: Option<i32>,
    /// Scheduler id (`TS_1` for every built-in engine); reuse never crosses schedulers.
    pub scheduler: String,
}

impl EngineConf {
    /// Priority as a sortable key: engines without one come last.
    pub fn priority_key(&self) -> i64 {
        self.priority.map_or(i64::MAX, i64::from)
    }
}

/// GE's real engines: (name, independent, attach, skip_assign_stream, priority).
const BUILTIN: &[(&str, bool, bool, bool, i32)] = &[
    ("AIcoreEngine", false, false, false, 1),
    ("VectorEngine", false, false, false, 2),
    ("DSAEngine", false, false, false, 2),
    ("DNN_HCCL", true, false, false, 2),
    ("DNN_VM_AICPU_ASCEND", false, true, false, 3),
    ("DNN_VM_AICPU", false, true, false, 4),
    ("DNN_VM_AICPU_FFTS_PLUS", false, true, false, 2),
    ("DNN_VM_AICPU_ASCEND_FFTS_PLUS", false, true, false, 2),
    ("DNN_VM_DVPP", false, true, false, 5),
    ("DNN_VM_RTS", false, true, false, 2),
    ("DNN_VM_RTS_FFTS_PLUS", false, true, false, 2),
    ("DNN_VM_GE_LOCAL", false, true, true, 9),
    ("DNN_VM_HOST_CPU", false, true, true, 10),
    ("ffts_plus", false, true, true, 1),
    ("DNN_VM_CUSTOM", false, false, false, 0),
];

/// Kernel-library spellings that graph files use for GE engines.
const ALIASES: &[(&str, &str)] = &[("aicpu_ascend_kernel", "DNN_VM_AICPU_ASCEND"), ("aicpu_tf_kernel", "DNN_VM_AICPU")];

/// The scheduler every built-in engine belongs to.
pub const DEFAULT_SCHEDULER: &str = "TS_1";

/// Name-indexed engine flags. Ids are stable for one table; iteration is in id order.
#[derive(Clone, Debug)]
pub struct EngineTable {
    engines: IdVec<EngineId, EngineConf>,
    by_name: BTreeMap<String, EngineId>,
}

/// A graph file's override of one engine: every field optional.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineOverride {
    pub independent: Option<bool>,
    pub attach: Option<bool>,
    pub skip_assign_stream: Option<bool>,
    /// `Some(None)` clears the priority (JSON `null`).
    pub priority: Option<Option<i32>>,
    pub scheduler: Option<String>,
}

impl Default for EngineTable {
    fn default() -> Self {
        Self::builtin()
    }
}

impl EngineTable {
    /// An empty table, for hosts that install their own engines (as GE's unit tests do).
    pub fn empty() -> Self {
        EngineTable { engines: IdVec::new(), by_name: BTreeMap::new() }
    }

    /// GE's table (ge-compiler.md §2.1).
    pub fn builtin() -> Self {
        let mut t = Self::empty();
        for &(name, independent, attach, skip, prio) in BUILTIN {
            t.insert(EngineConf {
                name: name.to_string(),
                independent,
                attach,
                skip_assign_stream: skip,
                priority: Some(prio),
                scheduler: DEFAULT_SCHEDULER.to_string(),
            });
        }
        t
    }

    /// Adds or replaces an engine; returns its id (unchanged when it existed).
    pub fn insert(&mut self, conf: EngineConf) -> EngineId {
        if let Some(&id) = self.by_name.get(&conf.name) {
            self.engines[id] = conf;
            id
        } else {
            let name = conf.name.clone();
            let id = self.engines.push(conf);
            self.by_name.insert(name, id);
            id
        }
    }

    /// Applies a graph's override: an existing engine keeps the flags it does not name; a new
    /// engine starts from "not independent, not attach, not skipped, no priority, TS_1".
    pub fn apply_override(&mut self, name: &str, o: &EngineOverride) -> Result<EngineId> {
        let canonical = self.canonical_name(name).to_string();
        let mut conf = match self.lookup(&canonical) {
            Some(id) => self.engines[id].clone(),
            None => EngineConf {
                name: canonical,
                independent: false,
                attach: false,
                skip_assign_stream: false,
                priority: None,
                scheduler: DEFAULT_SCHEDULER.to_string(),
            },
        };
        if let Some(v) = o.independent {
            conf.independent = v;
        }
        if let Some(v) = o.attach {
            conf.attach = v;
        }
        if let Some(v) = o.skip_assign_stream {
            conf.skip_assign_stream = v;
        }
        if let Some(v) = o.priority {
            conf.priority = v;
        }
        if let Some(v) = &o.scheduler {
            if v.is_empty() {
                crate::bail!(Field, "engine '{name}': scheduler must not be empty");
            }
            conf.scheduler = v.clone();
        }
        Ok(self.insert(conf))
    }

    fn canonical_name<'a>(&self, name: &'a str) -> &'a str {
        if self.by_name.contains_key(name) {
            return name;
        }
        ALIASES.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, real)| real)
    }

    /// Finds an engine by GE spelling or kernel-library alias.
    pub fn lookup(&self, name: &str) -> Option<EngineId> {
        self.by_name.get(self.canonical_name(name)).copied()
    }

    pub fn get(&self, id: EngineId) -> &EngineConf {
        &self.engines[id]
    }

    pub fn len(&self) -> usize {
        self.engines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.engines.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (EngineId, &EngineConf)> {
        self.engines.enumerate()
    }

    /// Comma-separated names, for error messages.
    pub fn names(&self) -> String {
        self.by_name.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

impl std::ops::Index<EngineId> for EngineTable {
    type Output = EngineConf;
    fn index(&self, id: EngineId) -> &EngineConf {
        &self.engines[id]
    }
}

/// Well-known engine names used by the passes.
pub mod names {
    pub const AICORE: &str = "AIcoreEngine";
    pub const VECTOR: &str = "VectorEngine";
    pub const DSA: &str = "DSAEngine";
    pub const HCCL: &str = "DNN_HCCL";
    pub const AICPU_ASCEND: &str = "DNN_VM_AICPU_ASCEND";
    pub const AICPU: &str = "DNN_VM_AICPU";
    pub const AICPU_FFTS_PLUS: &str = "DNN_VM_AICPU_FFTS_PLUS";
    pub const AICPU_ASCEND_FFTS_PLUS: &str = "DNN_VM_AICPU_ASCEND_FFTS_PLUS";
    pub const RTS: &str = "DNN_VM_RTS";
    pub const GE_LOCAL: &str = "DNN_VM_GE_LOCAL";
    pub const HOST_CPU: &str = "DNN_VM_HOST_CPU";
    pub const DVPP: &str = "DNN_VM_DVPP";
    pub const CUSTOM: &str = "DNN_VM_CUSTOM";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_flags_follow_ge() {
        let t = EngineTable::builtin();
        let hccl = &t[t.lookup("DNN_HCCL").unwrap()];
        assert!(hccl.independent && !hccl.attach);
        let local = &t[t.lookup("DNN_VM_GE_LOCAL").unwrap()];
        assert!(local.attach && local.skip_assign_stream);
        assert_eq!(t[t.lookup("aicpu_tf_kernel").unwrap()].name, "DNN_VM_AICPU");
        assert!(t.lookup("NoSuchEngine").is_none());
    }

    #[test]
    fn override_keeps_unnamed_flags_and_adds_new_engines() {
        let mut t = EngineTable::builtin();
        let id = t
            .apply_override("AIcoreEngine", &EngineOverride { priority: Some(Some(7)), ..Default::default() })
            .unwrap();
        assert_eq!(t[id].priority, Some(7));
        assert!(!t[id].attach);
        let n = t.len();
        let new = t.apply_override("engine1", &EngineOverride { attach: Some(true), ..Default::default() }).unwrap();
        assert_eq!(t.len(), n + 1);
        assert!(t[new].attach && t[new].priority.is_none());
    }
}
