//! The scanner of graph JSON: reads the common shapes of a document without serde, in one
//! pass over the text. An object whose keys are each given once, strings without escapes,
//! integers as plain digits: what exporters write for nearly every element of a large graph.
//! Where a value has another shape (another key, a null, an escape, a duplicate key, a
//! negative or fractional count, a missing required field) a reader gives `None`, and the
//! loader (`json.rs`) reads that value through the schema's checkers instead, in the same
//! pass ([`Scan::raw`] hands it serde's reading of the value's text).
//!
//! What the scanner accepts is valid JSON; where it stops on something that is not, the
//! loader asks serde for the message.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::EdgeKind;

/// A position in a document's text.
pub(crate) struct Scan<'a> {
    s: &'a str,
    b: &'a [u8],
    pub(crate) i: usize,
    /// The last node name read, as written.
    pub(crate) name: &'a str,
}

impl<'a> Scan<'a> {
    pub(crate) fn new(s: &'a str) -> Self {
        Scan { s, b: s.as_bytes(), i: 0, name: "" }
    }

    /// The next value, whatever its shape, read by serde (which checks its syntax): `None`
    /// where it is not JSON.
    pub(crate) fn raw(&mut self) -> Option<&'a RawValue> {
        let rest = self.s.get(self.i..)?;
        let raw = <&RawValue>::deserialize(&mut serde_json::Deserializer::from_str(rest)).ok()?;
        self.i = raw.get().as_ptr() as usize - self.s.as_ptr() as usize + raw.get().len();
        Some(raw)
    }

    #[inline]
    pub(crate) fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// The next byte after white space, not consumed.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    #[inline]
    pub(crate) fn eat(&mut self, c: u8) -> Option<()> {
        if self.peek()? == c {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    /// A string without escapes.
    #[inline]
    pub(crate) fn str(&mut self) -> Option<&'a str> {
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
    pub(crate) fn key(&mut self) -> Option<&'a str> {
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
    pub(crate) fn next_member(&mut self) -> Option<bool> {
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

    pub(crate) fn end(&mut self) -> Option<()> {
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

/// An object whose members the scanner reads into `Self`, key by key.
pub(crate) trait Members: Sized {
    /// The bits of the keys the object must have.
    const REQUIRED: u64;
    /// The value with no member read.
    fn blank() -> Self;
    /// Reads the value of member `key` into its field: the key's bit, or `None` when the key
    /// is unknown or the scanner does not read its value.
    fn read_member(&mut self, key: &str, s: &mut Scan<'_>) -> Option<u64>;
}

/// An object whose keys are each given once and each read by [`Members::read_member`], the
/// required ones among them.
pub(crate) fn object<T: Members>(s: &mut Scan<'_>) -> Option<T> {
    s.eat(b'{')?;
    let mut target = T::blank();
    let mut seen = 0u64;
    if s.peek()? == b'}' {
        s.i += 1;
    } else {
        loop {
            let key = s.key()?;
            let bit = target.read_member(key, s)?;
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            if !s.next_member()? {
                break;
            }
        }
    }
    (seen & T::REQUIRED == T::REQUIRED).then_some(target)
}

/// The scanner's readers, each named by a row of the field tables (fields.rs): a value in its
/// common shape, or `None`.
pub(crate) mod read {
    use super::{Members, Scan};

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
    /// A nested object of known members (`attrs`).
    pub fn object<T: Members>(s: &mut Scan<'_>) -> Option<T> {
        super::object(s)
    }
    /// A label; an empty one is no label (as the schema reads it).
    pub fn label(s: &mut Scan<'_>) -> Option<Option<String>> {
        s.str().map(|v| Some(v).filter(|v| !v.is_empty()).map(str::to_string))
    }
    /// A key the scanner leaves to the schema.
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
pub(crate) fn edge_at<'a>(s: &mut Scan<'a>) -> Option<FastEdge<'a>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(raw: &str) -> Option<FastEdge<'_>> {
        let mut s = Scan::new(raw);
        let e = edge_at(&mut s)?;
        s.end()?;
        Some(e)
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
    fn reads_the_common_edge_shape_and_leaves_the_rest() {
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

    #[test]
    fn hands_any_value_to_serde_and_goes_on_after_it() {
        let text = r#"[{"a": "\u0062", "b": [1, 2e3]} , 7]"#;
        let mut s = Scan::new(text);
        s.eat(b'[').unwrap();
        assert_eq!(s.raw().unwrap().get(), r#"{"a": "\u0062", "b": [1, 2e3]}"#);
        assert_eq!(s.next_member(), Some(true));
        assert_eq!(s.raw().unwrap().get(), "7");
        assert!(Scan::new("{\"a\" 1}").raw().is_none());
    }
}
