//! GE: `RefreshContinuousEvents` / `RefreshContinuousNotifies` (ge-compiler.md §6.4). The
//! runtime wants ids `0..n-1`; GE numbers them by first appearance in the send lists, walking
//! nodes in execution order, main syncs first and attached-stream syncs after.

use std::collections::BTreeSet;

use super::SyncState;

/// Renumbers the kept syncs of one phase from `base`, by first appearance in send order; pairs
/// that shared an id keep sharing it. Returns the next free id.
fn renumber(st: &mut SyncState<'_>, attached_phase: bool, base: u32) -> u32 {
    let mut map: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut next = base;
    let sends = st.send_lists();
    for &n in &st.order {
        for &r in sends.of(n) {
            let s = &mut st.syncs[r as usize];
            if !s.alive || s.attached_phase != attached_phase {
                continue;
            }
            let new = *map.entry(s.id).or_insert_with(|| {
                next += 1;
                next - 1
            });
            s.id = new;
        }
    }
    next
}

/// Renumbers every kept sync densely: main syncs from 0, attached-stream syncs after them.
/// Returns the number of distinct ids.
pub fn refresh_continuous_events(st: &mut SyncState<'_>) -> u32 {
    let main = renumber(st, false, 0);
    renumber(st, true, main)
}

/// Numbers only the attached-stream syncs, after `main_count` main ids that are already final
/// (GE numbers the attached maps after the multi-dims reuse of the main ones).
pub fn refresh_continuous_events_keep_main(st: &mut SyncState<'_>, main_count: u32) -> u32 {
    renumber(st, true, main_count)
}

/// Number of distinct ids in use.
pub fn distinct_ids(st: &SyncState<'_>) -> u32 {
    st.alive().map(|(_, s)| s.id).collect::<BTreeSet<_>>().len() as u32
}
