//! Thread safety, as docs/reliability.md states it: compile sessions (a `Model` and `allocate`
//! on it, or a C `sa_graph` handle per thread) run concurrently and give byte-identical results
//! to a single-threaded run; one `ReusableStreamPool` serves 16 threads with balanced counts and
//! no stream held twice by one owner (nor, without reuse, by two owners at once).

use crate::{common, fake_rt};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use stream_alloc::memory::AllocationDocument;

use parking_lot::Mutex;
use stream_alloc::allocate;
use stream_alloc::capi::allocation::SA_STAGE_ALL;
use stream_alloc::capi::allocation::{sa_allocation_free, sa_allocation_to_json};
use stream_alloc::capi::graph::{sa_graph_allocate, sa_graph_free, sa_graph_from_json_file, sa_graph_set_option};
use stream_alloc::capi::{SA_OK, sa_string_free};
use stream_alloc::compile::Stage;
use stream_alloc::graph::json;
use stream_alloc::runtime::consts::*;
use stream_alloc::runtime::{PoolOptions, ReusableStreamPool};

const THREADS: usize = 16;

/// Corpus graphs, each with options that exercise several streams, sync and split.
fn inputs() -> Vec<(PathBuf, Vec<(&'static str, &'static str)>)> {
    let g = common::corpus_graph;
    vec![
        (g("resnet50.json"), vec![("max_parallel_num", "AIcoreEngine:4"), ("max_task_count", "64")]),
        (g("googlenet.json"), vec![("max_parallel_num", "AIcoreEngine:3,VectorEngine:2"), ("event", "notify")]),
        (g("resnet50.json"), vec![("compat", "ge"), ("max_task_count", "40")]),
        (g("googlenet.json"), vec![("enable_single_stream", "true")]),
    ]
}

fn rust_session(path: &Path, opts: &[(&str, &str)]) -> String {
    let mut b = json::builder_from_slice(&std::fs::read(path).unwrap()).unwrap();
    for (k, v) in opts {
        b.options.set_str(k, v).unwrap();
    }
    let model = b.build().unwrap();
    allocate(&model, Stage::All).unwrap().to_json_string_new_plan(&model)
}

fn c_session(path: &Path, opts: &[(&str, &str)]) -> String {
    let p = CString::new(path.to_str().unwrap()).unwrap();
    unsafe {
        let mut g = std::ptr::null_mut();
        assert_eq!(sa_graph_from_json_file(p.as_ptr(), &mut g), SA_OK);
        for (k, v) in opts {
            let (k, v) = (CString::new(*k).unwrap(), CString::new(*v).unwrap());
            assert_eq!(sa_graph_set_option(g, k.as_ptr(), v.as_ptr()), SA_OK);
        }
        let mut a = std::ptr::null_mut();
        assert_eq!(sa_graph_allocate(g, SA_STAGE_ALL, &mut a), SA_OK);
        sa_graph_free(g);
        let mut s = std::ptr::null_mut();
        assert_eq!(sa_allocation_to_json(a, &mut s), SA_OK);
        let out = CStr::from_ptr(s).to_str().unwrap().to_string();
        sa_string_free(s);
        sa_allocation_free(a);
        out
    }
}

#[test]
fn sixteen_compile_sessions_match_single_threaded_runs() {
    let inputs = Arc::new(inputs());
    let reference: Arc<Vec<String>> = Arc::new(inputs.iter().map(|(p, o)| rust_session(p, o)).collect());
    for (i, (p, o)) in inputs.iter().enumerate() {
        let c = c_session(p, o);
        let (a, b): (serde_json::Value, serde_json::Value) =
            (serde_json::from_str(&c).unwrap(), serde_json::from_str(&reference[i]).unwrap());
        assert_eq!(a, b, "C ABI and Rust API differ on {}", p.display());
    }
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (inputs, reference, start) = (inputs.clone(), reference.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                // Each thread walks the inputs from its own offset, half through the C ABI.
                for k in 0..inputs.len() {
                    let i = (t + k) % inputs.len();
                    let (p, o) = &inputs[i];
                    if t % 2 == 0 {
                        assert_eq!(rust_session(p, o), reference[i], "thread {t}, {}", p.display());
                    } else {
                        let c: serde_json::Value = serde_json::from_str(&c_session(p, o)).unwrap();
                        let r: serde_json::Value = serde_json::from_str(&reference[i]).unwrap();
                        assert_eq!(c, r, "thread {t} (C ABI), {}", p.display());
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// One `Model` shared by 16 threads, each allocating it: `allocate` takes `&Model`, so sharing
/// is safe and every result is the same.
#[test]
fn one_model_shared_by_sixteen_threads() {
    let (p, o) = &inputs()[0];
    let mut b = json::builder_from_slice(&std::fs::read(p).unwrap()).unwrap();
    for (k, v) in o {
        b.options.set_str(k, v).unwrap();
    }
    let model = Arc::new(b.build().unwrap());
    let reference = allocate(&model, Stage::All).unwrap().to_json_string_new_plan(&model);
    let outs: Vec<String> = (0..THREADS)
        .map(|_| {
            let m = model.clone();
            std::thread::spawn(move || allocate(&m, Stage::All).unwrap().to_json_string_new_plan(&m))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    assert!(outs.iter().all(|o| *o == reference));
}

fn pool_stress(reuse: bool) {
    let (rt, fake) = fake_rt::new_fake();
    let pool = Arc::new(ReusableStreamPool::with_runtime(PoolOptions { reuse, task_limit: None }, rt.clone()));
    // handle -> owners (thread-model ids) holding it right now.
    let owners: Arc<Mutex<BTreeMap<usize, BTreeSet<u32>>>> = Arc::default();
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS as u32)
        .map(|t| {
            let (pool, owners, start) = (pool.clone(), owners.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut mine = Vec::new();
                for i in 0..300u32 {
                    let model = t * 4 + i % 4;
                    if i % 3 == 2 && !mine.is_empty() {
                        let (s, m): (usize, u32) = mine.swap_remove((i as usize * 7) % mine.len());
                        // Leave the owner set before the pool can grant the stream again.
                        owners.lock().get_mut(&s).unwrap().remove(&m);
                        pool.destroy(s as *mut std::ffi::c_void, false).unwrap();
                        continue;
                    }
                    if mine.iter().any(|&(_, m)| m == model) {
                        continue; // a model asks for one stream at a time here
                    }
                    let (s, _) = pool.get_or_create(model, 0, RT_STREAM_PERSISTENT, 1 + i % 50).unwrap();
                    let mut o = owners.lock();
                    let set = o.entry(s as usize).or_default();
                    assert!(set.insert(model), "stream {s:p} granted twice to model {model}");
                    if !reuse {
                        assert_eq!(set.len(), 1, "stream {s:p} held by two owners at once: {set:?}");
                    }
                    drop(o);
                    mine.push((s as usize, model));
                }
                for (s, m) in mine {
                    owners.lock().get_mut(&s).unwrap().remove(&m);
                    pool.destroy(s as *mut std::ffi::c_void, false).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let st = pool.stats();
    assert_eq!((st.live, st.grants), (0, 0), "{st:?}");
    assert_eq!(st.created, st.destroyed, "{st:?}");
    assert!(owners.lock().values().all(BTreeSet::is_empty));
    if reuse {
        assert!(st.reused > 0, "16 threads with reuse on never shared a stream: {st:?}");
    }
    drop(pool);
    drop(rt);
    fake.check_balanced().unwrap();
}

#[test]
fn sixteen_threads_on_one_pool_without_reuse() {
    pool_stress(false);
}

#[test]
fn sixteen_threads_on_one_pool_with_reuse() {
    pool_stress(true);
}
