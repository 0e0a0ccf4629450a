//! The integration tests, one binary: each module is an area (loader, policies, split, C-facing
//! runtime, ...). One target links the library once instead of once per file.

#[path = "../../fuzz/src/checks.rs"]
mod checks;
mod common;
#[path = "../../fuzz/src/fake_rt.rs"]
mod fake_rt;
mod filetest;

mod activate_lists;
mod bad_input;
mod budgets;
mod checker_agreement;
mod circles;
mod cli;
mod cli_usage;
mod concurrency;
mod docs;
mod dynamic_corpus;
mod execution_order;
mod function_length;
mod fuzz_props;
mod header;
mod layers;
mod loader;
mod logical_cli;
mod logical_corpus;
mod logical_fixtures;
mod lower_bound;
mod mem_pool;
mod memory;
mod onnx_import;
mod ort_export;
mod partition;
mod peers;
mod policy_corpus;
mod policy_dali;
mod policy_min_streams;
mod policy_table;
mod refine;
mod replay;
mod runtime_core;
mod runtime_task_limits;
mod session_stages;
mod simulate_model;
mod simulate_reference;
mod single_stream;
mod split_corpus;
mod split_ge;
mod step_cli;
mod step_fixtures;
mod summary_corpus;
mod summary_format;
mod sync_activation;
mod sync_corpus;
mod sync_fixtures;
mod sync_limits;
mod sync_props;
mod task_limits;
mod verify_minimum;
mod verify_rules;
