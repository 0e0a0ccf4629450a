//! A node's task counts as the graph gives them (GE's `CollectTaskSize` overrides): facts of
//! the node, read by the sync stage (does a node without a stream still run tasks?) and by the
//! split (how full is each stream?).

use super::engines::names;
use super::{Model, NodeId};
use crate::bail;
use crate::error::Result;

/// A count attribute that must be a non-negative integer when present.
fn count_attr(model: &Model, n: NodeId, name: &str) -> Result<Option<u64>> {
    match model.nodes[n].ge_attrs.int(name) {
        None => Ok(None),
        Some(v) if v >= 0 => Ok(Some(v as u64)),
        Some(v) => bail!(Attribute, "node \"{}\": ge_attrs.{name} = {v} is negative", model.nodes[n].name),
    }
}

fn is_hccl(model: &Model, n: NodeId) -> bool {
    model.engine(n).name == names::HCCL
}

/// `CollectTaskSize` for a node's main stream, without the StreamActive charge and the recvs:
/// `_node_sqe_num`, else `_hccl_task_num` for HCCL ops, else the node's `tasks`.
pub fn main_task_count(model: &Model, n: NodeId) -> Result<u64> {
    if let Some(v) = count_attr(model, n, "_node_sqe_num")? {
        return Ok(v);
    }
    if is_hccl(model, n) {
        if let Some(v) = count_attr(model, n, "_hccl_task_num")? {
            return Ok(v);
        }
    }
    Ok(u64::from(model.nodes[n].tasks))
}

/// Tasks a node puts on its `i`-th attached stream: `_hccl_attached_task_num` for HCCL ops,
/// else `attached_tasks[i]` (0 when the graph gives none).
pub fn attached_task_count(model: &Model, n: NodeId, i: usize) -> Result<u64> {
    if is_hccl(model, n) {
        if let Some(v) = count_attr(model, n, "_hccl_attached_task_num")? {
            return Ok(v);
        }
    }
    Ok(model.nodes[n].attached_tasks.get(i).map_or(0, |&t| u64::from(t)))
}
