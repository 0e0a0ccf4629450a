//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository's own copy of the corpus. Every test reads corpus graphs through this module,
/// so a clone with nothing beside it tests exactly what a development checkout tests.
pub fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The graph files `corpus/INDEX.md` lists, sorted. A listed file that is missing, or a graph
/// file the index does not list, fails the test rather than quietly shrinking the corpus.
pub fn corpus_paths() -> Vec<PathBuf> {
    let dir = corpus_dir();
    let index = std::fs::read_to_string(dir.join("INDEX.md"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("INDEX.md").display()));
    let mut listed: Vec<String> = index
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(' ').next())
        .filter(|f| f.ends_with(".json"))
        .map(str::to_string)
        .collect();
    listed.sort();
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".json"))
        .collect();
    present.sort();
    assert!(!listed.is_empty(), "corpus/INDEX.md lists no graph");
    assert_eq!(listed, present, "corpus/ and corpus/INDEX.md disagree on the graph files");
    listed.into_iter().map(|f| dir.join(f)).collect()
}

/// One corpus graph by file name; a missing one fails the test.
pub fn corpus_graph(file: &str) -> PathBuf {
    let p = corpus_dir().join(file);
    assert!(p.is_file(), "corpus graph {} is missing", p.display());
    p
}

/// A session over `model` with the options it declares and the task limits those give, able
/// to run every mode (searches included): what the command line builds, minus the device.
pub fn session(
    model: std::sync::Arc<stream_alloc::Model>,
) -> stream_alloc::driver::Session<std::sync::Arc<stream_alloc::Model>> {
    let options = model.options.clone();
    let limits = stream_alloc::compile::TaskLimits::from_options(&options);
    stream_alloc::search::session(model, options, limits, Default::default())
}

/// The graph's own streams (`stream`, `attached_stream_ids`) and events (`events`) through the
/// pipeline's split and the stages after it: the session [`stream_alloc::allocate`] builds,
/// taking stages 1 and 2 from the graph (`allocate --from split`), so a test of the split runs
/// what production runs rather than a table built beside it.
pub fn split_given(model: &stream_alloc::Model) -> stream_alloc::Result<stream_alloc::Allocation> {
    let limits = stream_alloc::compile::TaskLimits::from_options(&model.options);
    let mut s = stream_alloc::driver::Session::new(model, model.options.clone(), limits).from_given_syncs();
    s.run_to(stream_alloc::compile::Stage::All)?;
    s.into_result().map(|(a, _)| a)
}

/// Held by every test that registers a process-wide device runtime: such tests share one
/// process with the rest of the suite, and must not overlap each other.
pub static RUNTIME_LOCK: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

/// The workspace's independent checker, `check_alloc.py`: the file `SA_CHECK_ALLOC` names
/// (`scripts/test.sh` sets it), else `../shared/tools/check_alloc.py` beside the clone. `None`
/// only where neither exists, said on stderr so a skipped half is visible: a clone with
/// nothing beside it still passes, but a tool that is there must run. A variable that names
/// no file fails the test.
pub fn check_alloc_tool(skipped: &str) -> Option<PathBuf> {
    shared_tool("check_alloc.py", skipped)
}

/// `ideal_schedule.py`, beside the checker ([`check_alloc_tool`]).
pub fn ideal_schedule_tool(skipped: &str) -> Option<PathBuf> {
    shared_tool("ideal_schedule.py", skipped)
}

fn shared_tool(file: &str, skipped: &str) -> Option<PathBuf> {
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/check_alloc.py");
    let check = match std::env::var_os("SA_CHECK_ALLOC") {
        Some(named) => {
            let named = PathBuf::from(named);
            assert!(named.is_file(), "SA_CHECK_ALLOC names no file: {}", named.display());
            named
        }
        None if beside.is_file() => beside,
        None => {
            // Straight to the process's stderr: the test harness captures `eprintln!`.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "skipped, {file} is not beside the clone and SA_CHECK_ALLOC is not set: {skipped}"
            );
            return None;
        }
    };
    let tool = check.with_file_name(file);
    assert!(tool.is_file(), "{} is not beside {}", tool.display(), check.display());
    Some(tool)
}

/// A file the independent tools read, removed when dropped.
pub struct TempFile(pub PathBuf);

impl TempFile {
    /// `text` in a file of the system's temporary folder, named after the process and `tag`.
    pub fn new(tag: &str, text: &str) -> TempFile {
        let path = std::env::temp_dir().join(format!("sa_{}_{tag}.json", std::process::id()));
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs the Python script once per argument list, all in one `python3` process (each run a
/// fresh `runpy` execution, as from the command line, to keep a few hundred runs to seconds).
/// Each result is the exit code and the JSON report the run printed. Python not starting, a run
/// that raises, or one that prints no JSON fails the test with what it said: a reference that
/// is present must run, so it cannot pass by running on nothing.
pub fn run_python(script: &std::path::Path, runs: &[Vec<String>]) -> Vec<(i64, serde_json::Value)> {
    const DRIVER: &str = r#"
import contextlib, io, json, runpy, sys, traceback
script = sys.argv[1]
for line in sys.stdin:
    sys.argv = [script] + json.loads(line)
    out, err, code = io.StringIO(), io.StringIO(), 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if isinstance(e.code, str):
            err.write(e.code)
    except BaseException:
        code, err = None, io.StringIO(traceback.format_exc())
    text = out.getvalue().strip()
    try:
        report = json.loads(text)
    except ValueError:
        report = None
    print(json.dumps({"code": code, "report": report, "stdout": text[-2000:], "stderr": err.getvalue()[-2000:]}), flush=True)
"#;
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args(["-c", DRIVER])
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("python3 does not start, and {} is present: {e}", script.display()));
    let input: String = runs.iter().map(|r| format!("{}\n", serde_json::to_string(r).unwrap())).collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "python3 {}: {}", script.display(), String::from_utf8_lossy(&out.stderr));
    let results: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(results.len(), runs.len(), "python3 {}: one result per run", script.display());
    runs.iter()
        .zip(results)
        .map(|(args, r)| {
            let fail = |why: &str| -> ! {
                panic!(
                    "{} {}: {why}\nstdout: {}\nstderr: {}",
                    script.display(),
                    args.join(" "),
                    r["stdout"],
                    r["stderr"]
                )
            };
            let Some(code) = r["code"].as_i64() else { fail("raised") };
            if !r["report"].is_object() {
                fail(&format!("exits {code} and prints no JSON report"));
            }
            (code, r["report"].clone())
        })
        .collect()
}

/// The policy table's entry for `text` (`min-streams`, `budget:8`).
pub fn policy(text: &str) -> stream_alloc::compile::policy::Chosen {
    stream_alloc::compile::policy::table::parse(text).expect("a policy of the table")
}
