//! The common shapes of a node and an edge of graph JSON, read without serde: an object whose
//! keys are each given once, strings without escapes, integers as plain digits. This is what
//! exporters write for nearly every element of a large graph. Anything else (another key, a
//! null, an escape, a duplicate key, a negative or fractional count, a missing required field)
//! gives `None`, and the loader reads that element through the schema as before, so every
//! message and every value stays what the schema path gives.
//!
//! Elements come from the document already checked for syntax (they are `RawValue`s), so the
//! scanner only needs to recognise the shape, not to validate JSON.

use serde_json::Value;

use super::builder::{LoadedEdge, ModelBuilder, NodeSpec};
use super::fields::NodeAttrs;
use super::fields::{ATTR_FIELDS, NODE_FIELDS, attr_fields, is_required, node_fields, position};
use super::names::NameIndex;
use super::{EdgeKind, Shape};
use super::{GRAPH_FORMAT, GRAPH_VERSION};

struct Scan<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    /// The last node name read, as written.
    name: &'a str,
}

impl<'a> Scan<'a> {
    fn new(s: &'a str) -> Self {
        Scan { s, b: s.as_bytes(), i: 0, name: "" }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// The next byte after white space, not consumed.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        if self.peek()? == c {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    /// A string without escapes.
    #[inline]
    fn str(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let len = string_end(&self.b[start..])?;
        self.i = start + len;
        if self.b[self.i] != b'"' {
            return None;
        }
        self.i += 1;
        // Quotes are ASCII, so both ends are character boundaries.
        self.s.get(start..start + len)
    }

    #[inline]
    fn key(&mut self) -> Option<&'a str> {
        let k = self.str()?;
        self.eat(b':')?;
        Some(k)
    }

    /// A number's text.
    fn number(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.i;
        while let Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') = self.b.get(self.i) {
            self.i += 1;
        }
        if self.i == start { None } else { self.s.get(start..self.i) }
    }

    /// An integer in `[0, u32::MAX]` written as plain digits.
    fn uint32(&mut self) -> Option<u32> {
        let t = self.number()?;
        if !plain_digits(t) || t.len() > 10 {
            return None;
        }
        t.parse::<u64>().ok().and_then(|n| u32::try_from(n).ok())
    }

    /// A finite number >= 0, as the schema path reads it (through a JSON value).
    fn non_negative(&mut self) -> Option<f64> {
        let t = self.number()?;
        if t.starts_with('-') {
            return None;
        }
        let x = if t.len() <= 15 && plain_digits(t) {
            // Exact in f64, as a JSON integer read as a value and then as f64.
            t.parse::<u64>().ok()? as f64
        } else {
            serde_json::from_str::<Value>(t).ok()?.as_f64()?
        };
        (x.is_finite() && x >= 0.0).then_some(x)
    }

    /// `,` (true) or `}` (false) after a member.
    #[inline]
    fn next_member(&mut self) -> Option<bool> {
        match self.peek()? {
            b',' => {
                self.i += 1;
                Some(true)
            }
            b'}' => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    fn end(&mut self) -> Option<()> {
        self.ws();
        (self.i == self.b.len()).then_some(())
    }
}

/// The position of the first `"`, `\\` or control character in `b`, eight bytes at a time.
#[inline]
fn string_end(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut at = 0;
    while let Some(chunk) = b.get(at..at + 8) {
        let w = u64::from_le_bytes(chunk.try_into().ok()?);
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
        // Bytes below 0x20, a quote, a backslash; the lowest flagged byte is exact.
        let hit = (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
            | zero(w ^ (ONES * b'"' as u64))
            | zero(w ^ (ONES * b'\\' as u64));
        if hit != 0 {
            return Some(at + (hit.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    b[at..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).map(|p| at + p)
}

/// A JSON integer >= 0 as digits only (no leading zero but in "0").
fn plain_digits(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()) && (t.len() == 1 || !t.starts_with('0'))
}

/// Sets `slot` once: a key given twice goes the schema path (the last one counts there).
#[inline]
fn once<T>(slot: &mut Option<T>, v: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(v);
    Some(())
}

/// A node whose every key has a fast reader in the field table (fields.rs), `attrs` included.
pub(crate) fn node(raw: &str) -> Option<NodeSpec> {
    let mut s = Scan::new(raw);
    let (spec, _) = node_at(&mut s)?;
    s.end()?;
    Some(spec)
}

/// Reads the members of an object whose `{` is read into the fields of `$target`, each key by
/// its fast reader; an unknown or repeated key, or a value its reader gives up on, returns
/// `None` from the enclosing function. Gives the keys seen, as bits of their places in `$table`.
macro_rules! read_members {
    ($s:ident, $target:ident, $table:ident, $($key:literal => $field:ident: $fast:ident),*) => {{
        let mut seen = 0u64;
        loop {
            match $s.key()? {
                $( $key => {
                    const BIT: u64 = 1 << position($table, $key);
                    if seen & BIT != 0 {
                        return None;
                    }
                    seen |= BIT;
                    $target.$field = read::$fast($s)?;
                } )*
                _ => return None,
            }
            if !$s.next_member()? {
                break;
            }
        }
        seen
    }};
}

/// The fast path's key matches, from the field tables: a key without a reader (`none`), or an
/// unknown one, leaves the node to the schema.
macro_rules! fast_node {
    ($(
        $(#[$doc:meta])*
        $field:ident: $ty:ty = $default:expr;
        $key:literal $presence:ident, schema $read:ident($rty:ty) via $via:ident, fast $fast:ident,
        node $to_node:ident($nty:ty), e.g. $ex:literal;
    )*) => {
        /// A node and its name as written.
        fn node_at<'a>(s: &mut Scan<'a>) -> Option<(NodeSpec, &'a str)> {
            s.eat(b'{')?;
            let mut spec = NodeSpec::blank();
            let seen = read_members!(s, spec, NODE_FIELDS, $( $key => $field: $fast ),*);
            $( if is_required!($presence) && seen & (1 << position(NODE_FIELDS, $key)) == 0 {
                return None;
            } )*
            Some((spec, s.name))
        }
    };
}
node_fields!(fast_node);

macro_rules! fast_attrs {
    ($(
        $(#[$doc:meta])*
        $field:ident: $ty:ty = $default:expr;
        $key:literal, schema $read:ident($rty:ty) via $via:ident, fast $fast:ident, e.g. $ex:literal;
    )*) => {
        /// A node's `attrs` whose every key has a fast reader.
        fn attrs(s: &mut Scan<'_>) -> Option<NodeAttrs> {
            s.eat(b'{')?;
            let mut attrs = NodeAttrs::default();
            if s.peek()? == b'}' {
                s.i += 1;
                return Some(attrs);
            }
            read_members!(s, attrs, ATTR_FIELDS, $( $key => $field: $fast ),*);
            Some(attrs)
        }
    };
}
attr_fields!(fast_attrs);

/// The fast readers the field tables name: each reads a value in its common shape into the
/// field, or gives up (`None`).
mod read {
    use super::Scan;

    /// The node's name, remembered for the name index.
    pub fn name(s: &mut Scan<'_>) -> Option<String> {
        let v = s.str()?;
        s.name = v;
        Some(v.to_string())
    }
    pub fn str(s: &mut Scan<'_>) -> Option<String> {
        s.str().map(str::to_string)
    }
    pub fn uint32(s: &mut Scan<'_>) -> Option<u32> {
        s.uint32()
    }
    pub fn non_negative(s: &mut Scan<'_>) -> Option<f64> {
        s.non_negative()
    }
    pub fn attrs(s: &mut Scan<'_>) -> Option<super::NodeAttrs> {
        super::attrs(s)
    }
    /// A label; an empty one is no label (as the schema path reads it).
    pub fn label(s: &mut Scan<'_>) -> Option<Option<String>> {
        s.str().map(|v| Some(v).filter(|v| !v.is_empty()).map(str::to_string))
    }
    /// A key the fast path does not read.
    pub fn none<T>(_: &mut Scan<'_>) -> Option<T> {
        None
    }
}

/// An edge read by [`edge`]: its ends by name, borrowed from the document.
pub(crate) struct FastEdge<'a> {
    pub src: &'a str,
    pub dst: &'a str,
    pub kind: EdgeKind,
    pub src_port: u32,
    pub dst_port: u32,
}

/// An edge `{"src", "dst", "kind", "src_port", "dst_port"}`.
pub(crate) fn edge(raw: &str) -> Option<FastEdge<'_>> {
    let mut s = Scan::new(raw);
    let e = edge_at(&mut s)?;
    s.end()?;
    Some(e)
}

fn edge_at<'a>(s: &mut Scan<'a>) -> Option<FastEdge<'a>> {
    s.eat(b'{')?;
    let (mut src, mut dst, mut kind, mut src_port, mut dst_port) = (None, None, None, None, None);
    loop {
        match s.key()? {
            "src" => once(&mut src, s.str()?)?,
            "dst" => once(&mut dst, s.str()?)?,
            "kind" => once(
                &mut kind,
                match s.str()? {
                    "data" => EdgeKind::Data,
                    "control" => EdgeKind::Control,
                    _ => return None,
                },
            )?,
            "src_port" => once(&mut src_port, s.uint32()?)?,
            "dst_port" => once(&mut dst_port, s.uint32()?)?,
            _ => return None,
        }
        if !s.next_member()? {
            break;
        }
    }
    Some(FastEdge {
        src: src?,
        dst: dst?,
        kind: kind.unwrap_or(EdgeKind::Data),
        src_port: src_port.unwrap_or(0),
        dst_port: dst_port.unwrap_or(0),
    })
}

/// The elements of an array, each read by `item`; `false` from `item` gives up.
fn array<'a>(s: &mut Scan<'a>, mut item: impl FnMut(&mut Scan<'a>) -> Option<()>) -> Option<()> {
    s.eat(b'[')?;
    if s.peek()? == b']' {
        s.i += 1;
        return Some(());
    }
    loop {
        item(s)?;
        match s.peek()? {
            b',' => s.i += 1,
            b']' => {
                s.i += 1;
                return Some(());
            }
            _ => return None,
        }
    }
}

/// Edges resolved together: their lookups miss the cache independently of each other, so the
/// processor overlaps them.
const BATCH: usize = 256;

/// Indexes `names[from..]`; `None` when a name is there already.
fn index_names(index: &mut NameIndex, names: &[&str], from: usize) -> Option<()> {
    let known = index.insert_batch(from as u32, &names[from..], |p| names[p as usize]).ok()?;
    known.is_none().then_some(())
}

/// Resolves a batch of edges by the node names (every end must name a node) into `list`.
fn resolve(batch: &mut Vec<FastEdge<'_>>, list: &mut Vec<LoadedEdge>, index: &NameIndex, names: &[&str]) -> Option<()> {
    if list.capacity() - list.len() < batch.len() {
        list.try_reserve(list.len().max(BATCH * 4)).ok()?;
    }
    let keys: Vec<&str> = batch.iter().flat_map(|e| [e.src, e.dst]).collect();
    let mut found = Vec::with_capacity(keys.len());
    index.get_batch(&keys, |p| names[p as usize], &mut found);
    for (e, ends) in batch.drain(..).zip(found.chunks_exact(2)) {
        let (src, dst) = (ends[0]?, ends[1]?);
        list.push(LoadedEdge { src, dst, src_port: e.src_port, dst_port: e.dst_port, kind: e.kind });
    }
    Some(())
}

/// A whole document of one graph in the common shape: `format`, `version`, `name`, `shape`,
/// `source`, `nodes` (each in [`node`]'s shape, names unique), then `edges` (each in
/// [`edge`]'s shape, both ends naming nodes), and `subgraphs` only when empty. Anything else
/// gives `None` and the document goes the schema path from the start, which gives the same
/// builder for every document this reads. Also returns the root's name index (node
/// positions by name), so that building need not index the names again.
pub(crate) fn document(bytes: &[u8]) -> Option<(ModelBuilder, NameIndex)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut s = Scan::new(text);
    s.eat(b'{')?;
    let (mut format, mut version, mut name, mut shape, mut source) = (None, None, None, None, None);
    let mut nodes: Option<Vec<NodeSpec>> = None;
    let mut edges: Option<Vec<LoadedEdge>> = None;
    let mut subgraphs = None;
    let mut index = NameIndex::default();
    // Node names as written, by position: a lookup reads 16 bytes here and the name in the
    // document, not a whole node spec.
    let mut names: Vec<&str> = Vec::new();
    loop {
        match s.key()? {
            "format" => once(&mut format, s.str()?)?,
            "version" => once(&mut version, s.uint32()?)?,
            "name" => once(&mut name, s.str()?)?,
            "shape" => once(&mut shape, s.str()?)?,
            "source" => once(&mut source, s.str()?)?,
            "subgraphs" => once(&mut subgraphs, array(&mut s, |_| None)?)?,
            "nodes" => {
                let mut specs: Vec<NodeSpec> = Vec::new();
                array(&mut s, |s| {
                    if specs.len() == specs.capacity() {
                        specs.try_reserve(specs.len().max(1024)).ok()?;
                        names.try_reserve(specs.capacity() - names.len()).ok()?;
                    }
                    let (spec, name) = node_at(s)?;
                    specs.push(spec);
                    names.push(name);
                    if names.len() % BATCH == 0 {
                        index_names(&mut index, &names, names.len() - BATCH)?;
                    }
                    Some(())
                })?;
                index_names(&mut index, &names, names.len() - names.len() % BATCH)?;
                once(&mut nodes, specs)?;
            }
            "edges" => {
                // Ends resolve against the nodes, so they come first.
                nodes.as_ref()?;
                let mut list: Vec<LoadedEdge> = Vec::new();
                let mut batch: Vec<FastEdge<'_>> = Vec::with_capacity(BATCH);
                array(&mut s, |s| {
                    batch.push(edge_at(s)?);
                    if batch.len() == BATCH {
                        resolve(&mut batch, &mut list, &index, &names)?;
                    }
                    Some(())
                })?;
                resolve(&mut batch, &mut list, &index, &names)?;
                once(&mut edges, list)?;
            }
            _ => return None,
        }
        if !s.next_member()? {
            break;
        }
    }
    s.end()?;
    if format? != GRAPH_FORMAT || version? as u64 != GRAPH_VERSION {
        return None;
    }
    let mut b = ModelBuilder::new(name?);
    b.source = source.map(str::to_string);
    let root = b.root_mut();
    root.shape = match shape {
        None | Some("static") => Shape::Static,
        Some("dynamic") => Shape::Dynamic,
        Some(_) => return None,
    };
    root.nodes = nodes?;
    root.loaded_edges = edges?;
    Some((b, index))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path reads a document exactly as the schema does, or leaves it.
    fn same_as_schema(doc: &str) -> bool {
        let Some((fast, index)) = document(doc.as_bytes()) else { return false };
        let slow = super::super::json::builder_from_schema(doc.as_bytes()).expect("the schema reads it");
        assert_eq!(fast.graphs, slow.graphs, "{doc}");
        assert_eq!((&fast.source, &fast.options), (&slow.source, &slow.options), "{doc}");
        assert_eq!(index.len(), fast.graphs[0].nodes.len());
        let (a, b) = (fast.build().unwrap(), slow.build().unwrap());
        assert_eq!((&a.nodes, &a.edges, &a.graphs), (&b.nodes, &b.edges, &b.graphs));
        true
    }

    #[test]
    fn documents_in_the_common_shape_read_as_through_the_schema() {
        let head = r#"{"format":"stream-graph","version":1,"name":"g","#;
        let nodes = r#""nodes":[{"name":"a","type":"Data","engine":"DNN_VM_GE_LOCAL","tasks":0},
            {"name":"b","type":"Add","engine":"AIcoreEngine","cost_us":2.5,"cores":1,"attrs":{"stream_label":"s"}},
            {"name":"c","type":"Add","engine":"AIcoreEngine","cost_us":0.1000000000000000055511151231257827}]"#;
        let edges = r#""edges":[{"src":"a","dst":"b"},{"src":"b","dst":"c","kind":"control","dst_port":1}]"#;
        assert!(same_as_schema(&format!("{head}{nodes},{edges}}}")));
        assert!(same_as_schema(&format!(
            "{head}\"shape\":\"dynamic\",\"source\":\"x\",{nodes},{edges},\"subgraphs\":[]}}\n"
        )));
        // Edges before nodes, options, a dangling edge, escapes: the schema path.
        assert!(!same_as_schema(&format!("{head}{edges},{nodes}}}")));
        assert!(!same_as_schema(&format!("{head}{nodes},{edges},\"options\":{{}}}}")));
        assert!(!same_as_schema(&format!("{head}{nodes},\"edges\":[{{\"src\":\"a\",\"dst\":\"zz\"}}]}}")));
        assert!(!same_as_schema(&format!("{head}{},{edges}}}", nodes.replace("\"b\"", "\"\\u0062\""))));
        // Not JSON, or not a graph the schema accepts: never read here.
        assert!(document(format!("{head}{nodes},{edges}}} x").as_bytes()).is_none());
        assert!(document(format!("{head}{nodes},{edges},\"version\":1}}").as_bytes()).is_none());
        assert!(document(format!("{head}{},{edges}}}", nodes.replace("\"c\"", "\"b\"")).as_bytes()).is_none());
        assert!(
            document(format!("{head}{},{edges}}}", nodes.replace("\"tasks\":0", "\"tasks\":00")).as_bytes()).is_none()
        );
        assert!(document(format!("{head}{},{edges}}}", nodes.replace("\"a\"", "\"a\u{1}\"")).as_bytes()).is_none());
        assert!(
            document(b"{\"format\":\"stream-graph\",\"version\":1,\"name\":\"\xff\",\"nodes\":[],\"edges\":[]}")
                .is_none()
        );
        assert!(document(format!("{head}\"shape\":\"flat\",{nodes},{edges}}}").as_bytes()).is_none());
    }

    #[test]
    fn finds_the_end_of_a_string() {
        for text in ["", "a", "abcdefg", "abcdefgh", "abcdefghijklmnopq", "é中文字符串啊"] {
            for stop in ["\"", "\\", "\n", "\u{1f}", "\u{0}"] {
                let s = format!("{text}{stop}x\"");
                assert_eq!(string_end(s.as_bytes()), Some(text.len()), "{s:?}");
            }
            assert_eq!(string_end(text.as_bytes()), None);
        }
        assert_eq!(string_end("abc\u{7f}\u{80} ~\"".as_bytes()), Some(8));
    }

    #[test]
    fn reads_the_common_node_shape() {
        let n = node(r#"{"name":"a","type":"Add","engine":"AIcoreEngine","tasks":2,"cost_us":1.5,"cores":3,"attrs":{"stream_label":"s","parallel_group":""}}"#).unwrap();
        assert_eq!((n.name.as_str(), n.op_type.as_str(), n.engine.as_str()), ("a", "Add", "AIcoreEngine"));
        assert_eq!((n.tasks, n.cost_us, n.cores), (2, 1.5, 3));
        assert_eq!(n.attrs.stream_label.as_deref(), Some("s"));
        assert_eq!(n.attrs.parallel_group, None);
        let d = node(" { \"name\" : \"b\" ,\n \"type\":\"Const\", \"engine\":\"DNN_VM_GE_LOCAL\" } ").unwrap();
        assert_eq!((d.tasks, d.cost_us, d.cores), (1, 0.0, 0));
    }

    #[test]
    fn leaves_everything_else_to_the_schema() {
        for raw in [
            r#"{"name":"a","type":"Add"}"#,
            r#"{"name":"a","type":"Add","engine":"E","name":"b"}"#,
            r#"{"name":"a\n","type":"Add","engine":"E"}"#,
            r#"{"name":"a","type":"Add","engine":"E","tasks":-1}"#,
            r#"{"name":"a","type":"Add","engine":"E","tasks":1.0}"#,
            r#"{"name":"a","type":"Add","engine":"E","tasks":4294967296}"#,
            r#"{"name":"a","type":"Add","engine":"E","cost_us":-0}"#,
            r#"{"name":"a","type":"Add","engine":"E","cost_us":null}"#,
            r#"{"name":"a","type":"Add","engine":"E","stream":1}"#,
            r#"{"name":"a","type":"Add","engine":"E","attrs":{"dims":1}}"#,
            r#"{"name":1,"type":"Add","engine":"E"}"#,
            r#"{}"#,
            r#"[]"#,
        ] {
            assert!(node(raw).is_none(), "{raw}");
        }
        for raw in [
            r#"{"src":"a"}"#,
            r#"{"src":"a","dst":"b","kind":"ctrl"}"#,
            r#"{"src":"a","dst":"b","src_port":1e0}"#,
            r#"{"src":"a","dst":"b","dst":"c"}"#,
            r#"{"src":"a","dst":"b","extra":0}"#,
        ] {
            assert!(edge(raw).is_none(), "{raw}");
        }
        let e = edge(r#"{"src":"a","dst":"b","kind":"control","src_port":1,"dst_port":2}"#).unwrap();
        assert_eq!((e.src, e.dst, e.kind, e.src_port, e.dst_port), ("a", "b", EdgeKind::Control, 1, 2));
    }
}
