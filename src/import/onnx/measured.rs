//! Measured per-node times (`--costs FILE`) replacing the roofline estimates: the op summary CSV
//! of the Ascend profiler (`Op Name`, `Task Duration(us)`, optionally `Block Dim`) or a Chrome
//! trace (`X` events: `name`, `dur` in µs).
//!
//! Matching: a measured name matches the node of that imported name; failing that, it matches
//! the node whose imported name, ONNX node name or an output tensor name is the same once both
//! are normalised. Normalising strips, repeatedly, the suffixes exporters and runtimes add:
//! `:N` (TensorFlow's output port) and `_output_N` (PyTorch's exporter names tensors after their
//! node). A normalised name shared by several nodes matches none of them. Rows of one name are
//! averaged (several iterations); `Block Dim` gives `cores` (the largest seen, capped at the
//! device's units). Only nodes with a task take measured times; the rest keep their estimates,
//! and both leftovers are reported.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Result;
use crate::{bail, err};

/// Measured times by name, averaged over the rows of each name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measured {
    /// Where they came from, for messages and the graph's `source`.
    pub source: String,
    pub entries: BTreeMap<String, Entry>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub us: f64,
    pub cores: Option<u32>,
    pub rows: usize,
}

/// What applying measured times did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Applied {
    /// Nodes that took a measured time.
    pub matched: usize,
    /// Nodes with a task and no measured time (they keep their estimate), by graph then name.
    pub unmatched_nodes: Vec<String>,
    /// Measured names that matched no node with a task.
    pub unused: Vec<String>,
}

impl Measured {
    pub fn from_file(path: &Path) -> Result<Measured> {
        let bytes = std::fs::read(path).map_err(|e| err!(Io, "measured costs {}: cannot read: {e}", path.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        let name = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Measured::parse(&text, &name)
    }

    /// Reads either format: JSON (a Chrome trace) when the text starts with `{` or `[`, CSV otherwise.
    pub fn parse(text: &str, what: &str) -> Result<Measured> {
        let text = text.trim_start_matches('\u{feff}');
        let mut acc: BTreeMap<String, (f64, usize, Option<u32>)> = BTreeMap::new();
        if matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'[')) {
            read_trace(text, what, &mut acc)?;
        } else {
            read_csv(text, what, &mut acc)?;
        }
        if acc.is_empty() {
            bail!(Field, "measured costs {what}: no timed operator in the file");
        }
        let entries =
            acc.into_iter().map(|(k, (sum, n, cores))| (k, Entry { us: sum / n as f64, cores, rows: n })).collect();
        Ok(Measured { source: what.to_string(), entries })
    }
}

fn add(acc: &mut BTreeMap<String, (f64, usize, Option<u32>)>, name: &str, us: f64, cores: Option<u32>) {
    let e = acc.entry(name.to_string()).or_insert((0.0, 0, None));
    e.0 += us;
    e.1 += 1;
    e.2 = match (e.2, cores) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
}

fn read_trace(text: &str, what: &str, acc: &mut BTreeMap<String, (f64, usize, Option<u32>)>) -> Result<()> {
    let doc: serde_json::Value =
        serde_json::from_str(text).map_err(|e| err!(Json, "measured costs {what}: not a Chrome trace: {e}"))?;
    let events = match &doc {
        serde_json::Value::Array(a) => a,
        serde_json::Value::Object(o) => match o.get("traceEvents") {
            Some(serde_json::Value::Array(a)) => a,
            _ => bail!(Field, "measured costs {what}: a Chrome trace object needs a 'traceEvents' array"),
        },
        _ => bail!(Field, "measured costs {what}: not a Chrome trace"),
    };
    for (i, ev) in events.iter().enumerate() {
        if ev.get("ph").and_then(|p| p.as_str()) != Some("X") {
            continue;
        }
        let Some(name) = ev.get("name").and_then(|n| n.as_str()) else {
            bail!(Field, "measured costs {what}: traceEvents[{i}] is an X event without a string 'name'");
        };
        let dur = ev.get("dur").and_then(|d| d.as_f64().or_else(|| d.as_str().and_then(|s| s.parse().ok())));
        match dur {
            Some(d) if d.is_finite() && d >= 0.0 => add(acc, name, d, None),
            _ => bail!(Field, "measured costs {what}: traceEvents[{i}] ('{name}') has no valid 'dur'"),
        }
    }
    Ok(())
}

/// One CSV record: fields split on commas outside double quotes, `""` an escaped quote.
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().map(|f| f.trim().to_string()).collect()
}

fn read_csv(text: &str, what: &str, acc: &mut BTreeMap<String, (f64, usize, Option<u32>)>) -> Result<()> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else { bail!(Field, "measured costs {what}: empty file") };
    let cols = csv_fields(header);
    let find = |names: &[&str]| cols.iter().position(|c| names.iter().any(|n| c.eq_ignore_ascii_case(n)));
    let Some(name_col) = find(&["Op Name", "op_name", "Name"]) else {
        bail!(
            Field,
            "measured costs {what}: neither a Chrome trace nor a profiler op summary: no 'Op Name' column in the header ({})",
            cols.join(", ")
        );
    };
    let Some(dur_col) = find(&["Task Duration(us)", "Task Duration (us)", "Duration(us)", "dur"]) else {
        bail!(Field, "measured costs {what}: the op summary has no 'Task Duration(us)' column");
    };
    let block_col = find(&["Block Dim", "Block Num"]);
    for (ln, line) in lines {
        let f = csv_fields(line);
        let Some(name) = f.get(name_col).filter(|s| !s.is_empty()) else {
            bail!(Field, "measured costs {what}: line {}: no op name", ln + 1);
        };
        let dur = f.get(dur_col).map(|s| s.as_str()).unwrap_or("");
        let us: f64 = match dur.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => v,
            // The profiler writes N/A for tasks it could not time; they carry no measurement.
            _ if dur.eq_ignore_ascii_case("N/A") => continue,
            _ => bail!(Field, "measured costs {what}: line {}: '{dur}' is not a duration in µs", ln + 1),
        };
        let cores = block_col.and_then(|c| f.get(c)).and_then(|s| s.parse::<u32>().ok()).filter(|&c| c > 0);
        add(acc, name, us, cores);
    }
    Ok(())
}

/// A name with the exporters' suffixes stripped (see the module documentation).
pub fn normalise(name: &str) -> &str {
    let mut s = name.trim();
    loop {
        let before = s;
        if let Some((head, tail)) = s.rsplit_once(':')
            && !tail.is_empty()
            && tail.bytes().all(|b| b.is_ascii_digit())
        {
            s = head;
        }
        if let Some(pos) = s.rfind("_output_") {
            let tail = &s[pos + "_output_".len()..];
            if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) {
                s = &s[..pos];
            }
        }
        if s == before {
            return s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_are_stripped() {
        assert_eq!(normalise("/layer1/Conv_output_0"), "/layer1/Conv");
        assert_eq!(normalise("conv1:0"), "conv1");
        assert_eq!(normalise("x_output_1:0"), "x");
        assert_eq!(normalise("my_output_x"), "my_output_x");
        assert_eq!(normalise("a:b"), "a:b");
    }

    #[test]
    fn csv_rows_average_and_quote() {
        let m = Measured::parse(
            "Model ID,Op Name,OP Type,Task Type,Task Duration(us),Block Dim\n\
             1,\"conv,1\",Conv2D,AI_CORE,10.0,8\n1,\"conv,1\",Conv2D,AI_CORE,20.0,12\n1,relu,Relu,AI_VECTOR_CORE,N/A,2\n",
            "t.csv",
        )
        .unwrap();
        let e = &m.entries["conv,1"];
        assert_eq!((e.us, e.cores, e.rows), (15.0, Some(12), 2));
        assert!(!m.entries.contains_key("relu"));
    }

    #[test]
    fn chrome_trace_x_events() {
        let m = Measured::parse(
            r#"{"traceEvents":[{"ph":"X","name":"a","dur":4.5},{"ph":"B","name":"b"},{"ph":"X","name":"a","dur":5.5}]}"#,
            "t.json",
        )
        .unwrap();
        assert_eq!(m.entries.len(), 1);
        assert_eq!(m.entries["a"].us, 5.0);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let e = Measured::parse("a,b\n1,2\n", "t.csv").unwrap_err();
        assert!(e.message.contains("Op Name"), "{e}");
        let e = Measured::parse("Op Name,Task Duration(us)\nx,abc\n", "t.csv").unwrap_err();
        assert!(e.message.contains("line 2"), "{e}");
        let e = Measured::parse("{\"traceEvents\": 3}", "t.json").unwrap_err();
        assert!(e.message.contains("traceEvents"), "{e}");
        let e = Measured::parse("[{\"ph\":\"X\",\"name\":\"a\"}]", "t.json").unwrap_err();
        assert!(e.message.contains("dur"), "{e}");
    }
}
