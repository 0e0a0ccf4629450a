//! Where to cut one logical stream into physical pieces: GE's greedy loop (`compat=ge`) and the
//! default plan (fewest pieces, cut points that existing syncs already order).
//!
//! Positions index the stream's nodes in execution order; a cut at `p` starts a new piece with
//! node `p`. `cap` is the task room of a piece: the stream limit minus `kReservedTaskNum`.

use std::collections::BTreeMap;

/// One cut of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// First position of the new piece.
    pub pos: usize,
    /// Position whose count triggered the cut (GE numbers new streams in trigger order).
    pub trigger: usize,
    /// The split must add a sync from `pos - 1` to `pos`; `false` when an existing sync already
    /// orders the two pieces.
    pub sync: bool,
}

fn prefix_sums(c: &[u64]) -> Vec<u64> {
    let mut prefix = Vec::with_capacity(c.len() + 1);
    prefix.push(0);
    let mut acc = 0u64;
    for &x in c {
        acc += x;
        prefix.push(acc);
    }
    prefix
}

/// Tasks the split adds at the head of a piece it opens: the wait (and reset) of its own event.
pub const SPLIT_RECV_TASKS: u64 = 2;
/// Tasks the split adds at the tail of a piece it closes: the record of its own event.
pub const SPLIT_SEND_TASKS: u64 = 1;

/// The tasks of piece `[a, b)` of a stream of `m` positions, with the split's own event wait
/// at its head (when it is not the first piece) and record at its tail (when it is not the
/// last). Every cut is charged its event, even one an existing sync makes free.
fn piece_tasks(prefix: &[u64], a: usize, b: usize) -> u64 {
    let m = prefix.len() - 1;
    let head = if a > 0 { SPLIT_RECV_TASKS } else { 0 };
    let tail = if b < m { SPLIT_SEND_TASKS } else { 0 };
    prefix[b] - prefix[a] + head + tail
}

/// GE's `SplitStreams` loop for one stream (§8): cut at a node when the running count plus the
/// reserve exceeds the limit, unless the node is the stream's first task or may not start a
/// stream; a node with a continuous label pulls the cut back to the first node of its label in
/// the current piece.
///
/// The count is every task the piece will hold: GE counts the Send/Recv nodes that exist when
/// it splits (in `c`) but not the event it adds at each cut, so a GE piece can end up to 3
/// tasks over the limit (its closing record, and the wait that opens it). Here the running
/// count starts with that wait and keeps room for the closing record unless the rest of the
/// stream fits in the piece: the cut points are GE's wherever GE's own pieces stay within the
/// limit, and a cut comes one node earlier where GE's would overflow.
///
/// GE moves only the labelled nodes (from every stream); here the whole tail of the piece from
/// the first labelled node moves, which is the same when labels are contiguous (the case GE relies
/// on) and keeps the stream's order otherwise. A label whose run starts the piece cannot move
/// back; the cut then falls at the node, keeping the limit.
pub fn ge_greedy(c: &[u64], forbidden: &[bool], labels: &[Option<&str>], cap: u64) -> Vec<Cut> {
    let prefix = prefix_sums(c);
    let m = c.len();
    let mut cuts = Vec::new();
    let mut start = 0usize;
    let mut first = true;
    let mut first_label: BTreeMap<&str, usize> = BTreeMap::new();
    for p in 0..m {
        if let Some(l) = labels[p] {
            first_label.entry(l).or_insert(p);
        }
        let was_first = first;
        first &= c[p] == 0;
        // The piece [start, p] and, when the rest of the stream does not fit in it, its record.
        let fits = piece_tasks(&prefix, start, m) <= cap || piece_tasks(&prefix, start, p + 1) <= cap;
        if was_first || fits || forbidden[p] {
            continue;
        }
        let mut cut = p;
        if let Some(&f) = labels[p].and_then(|l| first_label.get(l)) {
            if f > start && !forbidden[f] {
                cut = f;
            }
        }
        cuts.push(Cut { pos: cut, trigger: p, sync: true });
        start = cut;
        first = c[cut..=p].iter().all(|&x| x == 0);
        first_label.clear();
        for (q, l) in labels.iter().enumerate().take(p + 1).skip(cut) {
            if let Some(l) = l {
                first_label.entry(l).or_insert(q);
            }
        }
    }
    cuts
}

/// Latest cuts (GE's greedy without labels) and whether some piece still exceeds `cap`.
fn forward(c: &[u64], forbidden: &[bool], cap: u64) -> (Vec<usize>, bool) {
    let prefix = prefix_sums(c);
    let m = c.len();
    let mut cuts = Vec::new();
    let mut start = 0usize;
    let mut first = true;
    for p in 0..m {
        let was_first = first;
        first &= c[p] == 0;
        let fits = piece_tasks(&prefix, start, m) <= cap || piece_tasks(&prefix, start, p + 1) <= cap;
        if !was_first && !fits && !forbidden[p] {
            cuts.push(p);
            start = p;
            first = c[p] == 0;
        }
    }
    let mut bounds = cuts.clone();
    bounds.push(m);
    let mut a = 0;
    let overflow = bounds.iter().any(|&b| {
        let over = piece_tasks(&prefix, a, b) > cap;
        a = b;
        over
    });
    (cuts, overflow)
}

/// Earliest cuts: pieces filled from the end. `None` when the stream cannot be cut within `cap`.
fn backward(prefix: &[u64], forbidden: &[bool], cap: u64) -> Option<Vec<usize>> {
    let mut cuts = Vec::new();
    let mut end = prefix.len() - 1;
    while piece_tasks(prefix, 0, end) > cap {
        // The first q whose piece [q, end) fits (piece tasks fall as q grows), then the first
        // allowed cut from there.
        let tail = if end < prefix.len() - 1 { SPLIT_SEND_TASKS } else { 0 };
        let fit = prefix.partition_point(|&x| x + cap < prefix[end] + SPLIT_RECV_TASKS + tail).max(1);
        let q = (fit..end).find(|&q| !forbidden[q])?;
        cuts.push(q);
        end = q;
    }
    cuts.reverse();
    Some(cuts)
}

/// The default plan: as few pieces as GE's greedy needs (the minimum for cut points in order),
/// each cut chosen inside the window every minimum plan allows, preferring a point where `free`
/// says an existing sync already orders the pieces (asked lazily: only points inside a window), else the latest allowed point (most room for
/// the next piece). `None` when some piece cannot stay within `cap` (a node alone over the limit,
/// or forbidden cut points): the caller falls back to GE's loop. Pieces are counted with the
/// split's own events ([`piece_tasks`]).
pub fn min_sync(c: &[u64], forbidden: &[bool], free: &mut dyn FnMut(usize) -> bool, cap: u64) -> Option<Vec<Cut>> {
    let (latest, overflow) = forward(c, forbidden, cap);
    if overflow {
        return None;
    }
    if latest.is_empty() {
        return Some(Vec::new());
    }
    let prefix = prefix_sums(c);
    let earliest = backward(&prefix, forbidden, cap)?;
    if earliest.len() != latest.len() {
        return None;
    }
    let m = c.len();
    let mut cuts = Vec::with_capacity(latest.len());
    let mut prev = 0usize;
    for &e in &earliest {
        let lo = e.max(prev + 1);
        // Largest q < m whose piece [prev, q) fits.
        let room = prefix[prev] + cap;
        let head_tail = if prev > 0 { SPLIT_RECV_TASKS } else { 0 } + SPLIT_SEND_TASKS;
        let hi = prefix.partition_point(|&x| x + head_tail <= room).saturating_sub(1).min(m - 1);
        if lo > hi {
            return None;
        }
        let mut fallback = None;
        let mut chosen = None;
        for q in (lo..=hi).rev() {
            if forbidden[q] {
                continue;
            }
            fallback.get_or_insert(q);
            if free(q) {
                chosen = Some(q);
                break;
            }
        }
        let (q, sync) = match (chosen, fallback) {
            (Some(q), _) => (q, false),
            (None, Some(q)) => (q, true),
            (None, None) => return None,
        };
        cuts.push(Cut { pos: q, trigger: q, sync });
        prev = q;
    }
    (piece_tasks(&prefix, prev, m) <= cap).then_some(cuts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(c: &[u64], cuts: &[Cut]) -> Vec<u64> {
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c.pos).collect();
        bounds.push(c.len());
        let mut start = 0;
        bounds
            .into_iter()
            .map(|b| {
                let s = c[start..b].iter().sum();
                start = b;
                s
            })
            .collect()
    }

    #[test]
    fn greedy_matches_ge_examples() {
        let c = vec![3u64; 400];
        let cuts = ge_greedy(&c, &[false; 400], &[None; 400], 1024 - 27);
        assert_eq!(cuts[0].pos, 332, "333rd node starts the second stream");
        // GE's 403 five-task nodes give 199 + 199 + 5 nodes (995, 995, 25), but its middle
        // piece then holds its wait (2) and record (1) too: 998 > 997. Counting them, the first
        // piece keeps 199 nodes (995 + record 1 = 996), the middle one 198 (2 + 990 + 1 = 993),
        // the last 6 (2 + 30).
        let c = vec![5u64; 403];
        let cuts = ge_greedy(&c, &[false; 403], &[None; 403], 1024 - 27);
        assert_eq!(pieces(&c, &cuts), vec![995, 990, 30]);
    }

    #[test]
    fn min_sync_prefers_free_points_within_the_window() {
        // 10 nodes of 1 task, cap 6. With the split's own events counted (the first piece's
        // record 1, a middle piece's wait 2 and record 1, the last piece's wait 2) pieces hold
        // at most 5, 3 and 4 nodes: three pieces, the first cut in [3, 5], the second in [6, 8].
        let c = vec![1u64; 10];
        let mut free = [false; 10];
        free[5] = true;
        let cuts = min_sync(&c, &[false; 10], &mut |q| free[q], 6).unwrap();
        assert_eq!(cuts, vec![Cut { pos: 5, trigger: 5, sync: false }, Cut { pos: 8, trigger: 8, sync: true }]);
        let cuts = min_sync(&c, &[false; 10], &mut |_| false, 6).unwrap();
        assert_eq!(cuts, vec![Cut { pos: 5, trigger: 5, sync: true }, Cut { pos: 8, trigger: 8, sync: true }]);
        // A free point early in the window is taken, and narrows the next window to [6, 6].
        let mut free = [false; 10];
        free[3] = true;
        let cuts = min_sync(&c, &[false; 10], &mut |q| free[q], 6).unwrap();
        assert_eq!(cuts, vec![Cut { pos: 3, trigger: 3, sync: false }, Cut { pos: 6, trigger: 6, sync: true }]);
        // Free point outside the window is not taken.
        let mut free = [false; 10];
        free[2] = true;
        assert_eq!(min_sync(&c, &[false; 10], &mut |q| free[q], 6).unwrap()[0].pos, 5);
    }

    #[test]
    fn min_sync_gives_up_on_overflow() {
        assert_eq!(min_sync(&[1, 9, 1], &[false; 3], &mut |_| false, 5), None);
        let mut forbidden = vec![false; 10];
        forbidden[1..].iter_mut().for_each(|f| *f = true);
        assert_eq!(min_sync(&[1; 10], &forbidden, &mut |_| false, 5), None);
    }

    #[test]
    fn min_sync_piece_count_is_minimal() {
        let c: Vec<u64> = (0..500).map(|i| 1 + (i * 7 % 5) as u64).collect();
        let (latest, _) = forward(&c, &[false; 500], 50);
        let cuts = min_sync(&c, &[false; 500], &mut |_| false, 50).unwrap();
        assert_eq!(cuts.len(), latest.len());
        assert!(pieces(&c, &cuts).iter().all(|&p| p <= 50));
    }
}
