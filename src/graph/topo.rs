//! Stable topological order and cycle reporting.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::csr::Csr;

/// Orders `0..n` topologically under `edges` (src, dst), keeping the given order wherever it is
/// already topological: among ready nodes the smallest index goes first. On a cycle, returns
/// the indices of the nodes on one cycle, in edge order.
pub fn stable_order(n: usize, edges: &[(u32, u32)]) -> Result<Vec<u32>, Vec<u32>> {
    // Fast path: declaration order is already topological (every corpus graph is).
    if edges.iter().all(|&(s, d)| s < d) {
        return Ok((0..n as u32).collect());
    }
    let mut indeg = vec![0u32; n];
    for &(_, d) in edges {
        indeg[d as usize] += 1;
    }
    let succ: Csr<u32, u32> = Csr::group(n, edges.iter().copied());
    let mut heap: BinaryHeap<Reverse<u32>> = (0..n as u32).filter(|&i| indeg[i as usize] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(v)) = heap.pop() {
        order.push(v);
        for &w in succ.of(v) {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                heap.push(Reverse(w));
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    // Every node left has an in-edge from another node left: walk predecessors until one repeats.
    let mut pred = vec![u32::MAX; n];
    for &(s, d) in edges {
        if indeg[s as usize] > 0 && indeg[d as usize] > 0 && pred[d as usize] == u32::MAX {
            pred[d as usize] = s;
        }
    }
    let first = (0..n).find(|&i| indeg[i] > 0).expect("a cycle leaves nodes") as u32;
    let mut seen = vec![false; n];
    let mut v = first;
    while !seen[v as usize] {
        seen[v as usize] = true;
        v = pred[v as usize];
    }
    let mut cycle = vec![v];
    let mut w = pred[v as usize];
    while w != v {
        cycle.push(w);
        w = pred[w as usize];
    }
    cycle.reverse();
    Err(cycle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_topological_input_order() {
        assert_eq!(stable_order(3, &[(0, 1), (1, 2)]).unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn reorders_minimally() {
        // 0 <- 2, 1 free: 1 first? No: smallest ready index first: 1, 2, 0.
        assert_eq!(stable_order(3, &[(2, 0)]).unwrap(), vec![1, 2, 0]);
    }

    #[test]
    fn reports_cycle_members() {
        let cyc = stable_order(4, &[(0, 1), (1, 2), (2, 1), (2, 3)]).unwrap_err();
        let mut c = cyc.clone();
        c.sort();
        assert_eq!(c, vec![1, 2]);
        assert_eq!(stable_order(1, &[(0, 0)]).unwrap_err(), vec![0]);
    }
}
