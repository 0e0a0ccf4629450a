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

/// GE's `SplitStreams` loop for one stream (§8): cut at a node when the running count plus the
/// reserve exceeds the limit, unless the node is the stream's first task or may not start a
/// stream; a node with a continuous label pulls the cut back to the first node of its label in
/// the current piece.
///
/// GE moves only the labelled nodes (from every stream); here the whole tail of the piece from
/// the first labelled node moves, which is the same when labels are contiguous (the case GE relies
/// on) and keeps the stream's order otherwise. A label whose run starts the piece cannot move
/// back; the cut then falls at the node, keeping the limit.
pub fn ge_greedy(c: &[u64], forbidden: &[bool], labels: &[Option<&str>], cap: u64) -> Vec<Cut> {
    let prefix = prefix_sums(c);
    let mut cuts = Vec::new();
    let mut count = 0u64;
    let mut start = 0usize;
    let mut first_label: BTreeMap<&str, usize> = BTreeMap::new();
    for p in 0..c.len() {
        let first = count == 0;
        count += c[p];
        if let Some(l) = labels[p] {
            first_label.entry(l).or_insert(p);
        }
        if first || count <= cap || forbidden[p] {
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
        count = prefix[p + 1] - prefix[cut];
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
    let mut cuts = Vec::new();
    let mut count = 0u64;
    let mut overflow = false;
    for p in 0..c.len() {
        let first = count == 0;
        count += c[p];
        if !first && count > cap && !forbidden[p] {
            cuts.push(p);
            count = c[p];
        }
        overflow |= count > cap;
    }
    (cuts, overflow)
}

/// Earliest cuts: pieces filled from the end. `None` when the stream cannot be cut within `cap`.
fn backward(prefix: &[u64], forbidden: &[bool], cap: u64) -> Option<Vec<usize>> {
    let m = prefix.len() - 1;
    let mut cuts = Vec::new();
    let mut end = m;
    let mut cand: Option<usize> = None;
    for p in (1..m).rev() {
        loop {
            if prefix[end] - prefix[p] <= cap {
                if !forbidden[p] {
                    cand = Some(p);
                }
                break;
            }
            let q = cand.take()?;
            cuts.push(q);
            end = q;
        }
    }
    if prefix[end] > cap {
        let q = cand?;
        cuts.push(q);
        if prefix[q] > cap {
            return None;
        }
    }
    cuts.reverse();
    Some(cuts)
}

/// The default plan: as few pieces as GE's greedy needs (the minimum for cut points in order),
/// each cut chosen inside the window every minimum plan allows, preferring a point where `free`
/// says an existing sync already orders the pieces (asked lazily: only points inside a window), else the latest allowed point (most room for
/// the next piece). `None` when some piece cannot stay within `cap` (a node alone over the limit,
/// or forbidden cut points): the caller falls back to GE's loop.
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
        // Largest q with prefix[q] - prefix[prev] <= cap: the piece [prev, q) fits.
        let hi = prefix.partition_point(|&x| x <= prefix[prev] + cap).saturating_sub(1).min(m - 1);
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
    (prefix[m] - prefix[prev] <= cap).then_some(cuts)
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
        let c = vec![5u64; 403];
        let cuts = ge_greedy(&c, &[false; 403], &[None; 403], 1024 - 27);
        assert_eq!(pieces(&c, &cuts), vec![995, 995, 25]);
    }

    #[test]
    fn min_sync_prefers_free_points_within_the_window() {
        // 10 nodes of 1 task, cap 6: two pieces; any cut in [4, 6] works.
        let c = vec![1u64; 10];
        let mut free = [false; 10];
        free[5] = true;
        let cuts = min_sync(&c, &[false; 10], &mut |q| free[q], 6).unwrap();
        assert_eq!(cuts, vec![Cut { pos: 5, trigger: 5, sync: false }]);
        let cuts = min_sync(&c, &[false; 10], &mut |_| false, 6).unwrap();
        assert_eq!(cuts, vec![Cut { pos: 6, trigger: 6, sync: true }]);
        // Free point outside the window is not taken.
        let mut free = [false; 10];
        free[2] = true;
        assert_eq!(min_sync(&c, &[false; 10], &mut |q| free[q], 6).unwrap()[0].pos, 6);
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
