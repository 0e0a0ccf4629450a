//! No function of `src/` runs over 150 lines (the generated ONNX protobuf code excepted): a
//! function that long does several things, each of which wants a name. Lines count from the
//! line of `fn` to the line of the body's closing brace, as `cargo fmt` lays the code out.

use std::path::{Path, PathBuf};

/// The longest a function of `src/` may be, in lines.
const MAX_LINES: usize = 150;

/// Generated code, exempt from the limit (prost's output for onnx.proto).
const EXEMPT: &[&str] = &["src/import/onnx/proto.rs"];

/// A function with a body: its name and the lines of `fn` and of the closing brace (1-based).
#[derive(Debug, PartialEq, Eq)]
struct Span {
    name: String,
    first: usize,
    last: usize,
}

impl Span {
    fn lines(&self) -> usize {
        self.last - self.first + 1
    }
}

/// What the scanner keeps of Rust source: words (identifiers, keywords, numbers) and the
/// punctuation that shapes items, each with its line. Comments, strings and character
/// literals are skipped whole, so a brace inside them counts for nothing.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Punct(char),
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits `text` into [`Token`]s with their lines. Handles line and nested block comments,
/// strings with escapes, raw strings (`r#"…"#`, `br"…"`, `cr"…"`), raw identifiers, character
/// and byte literals (`'{'`, `'\''`, `b'}'`) and lifetimes (`'a`, which are not literals).
fn tokens(text: &str) -> Vec<(Token, usize)> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Skips from `i` to just past `close`, counting lines; `escapes`: a backslash hides the
    // next character.
    let skip_to = |i: &mut usize, line: &mut usize, close: &[char], escapes: bool| {
        while *i < cs.len() {
            if cs[*i..].starts_with(close) {
                *i += close.len();
                return;
            }
            if escapes && cs[*i] == '\\' {
                *i += 1;
            }
            if *i < cs.len() && cs[*i] == '\n' {
                *line += 1;
            }
            *i += 1;
        }
    };
    while i < cs.len() {
        let c = cs[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            '/' if cs.get(i + 1) == Some(&'/') => {
                while i < cs.len() && cs[i] != '\n' {
                    i += 1;
                }
            }
            '/' if cs.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < cs.len() {
                    if cs[i..].starts_with(&['/', '*']) {
                        depth += 1;
                        i += 2;
                    } else if cs[i..].starts_with(&['*', '/']) {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        line += usize::from(cs[i] == '\n');
                        i += 1;
                    }
                }
            }
            '"' => {
                i += 1;
                skip_to(&mut i, &mut line, &['"'], true);
            }
            '\'' => {
                // A literal is a quote, one character or an escape, and a closing quote; else
                // this quote starts a lifetime or a label.
                if cs.get(i + 1) == Some(&'\\') {
                    i += 3;
                    skip_to(&mut i, &mut line, &['\''], true);
                } else if cs.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            c if is_word_char(c) => {
                let start = i;
                while i < cs.len() && is_word_char(cs[i]) {
                    i += 1;
                }
                let word: String = cs[start..i].iter().collect();
                if matches!(word.as_str(), "r" | "br" | "cr") {
                    let hashes = cs[i..].iter().take_while(|&&h| h == '#').count();
                    if cs.get(i + hashes) == Some(&'"') {
                        i += hashes + 1;
                        let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                        skip_to(&mut i, &mut line, &close, false);
                        continue;
                    }
                }
                // `b"…"`, `c"…"` and `b'…'` go on as a plain string or literal.
                out.push((Token::Word(word), line));
            }
            '{' | '}' | '(' | ')' | '[' | ']' | ';' => {
                out.push((Token::Punct(c), line));
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Every function with a body in `text`, nested ones too. `fn` followed by a name starts an
/// item (`fn(u32) -> u64` is a type); its body is the first `{` outside its parameters'
/// parentheses and brackets, and a `;` there first means it has none (a trait's declaration).
fn functions(text: &str) -> Vec<Span> {
    let toks = tokens(text);
    let mut out = Vec::new();
    for (k, (t, first)) in toks.iter().enumerate() {
        if *t != Token::Word("fn".into()) {
            continue;
        }
        let Some((Token::Word(name), _)) = toks.get(k + 1) else { continue };
        let mut nesting = 0i32;
        let mut body = None;
        for (j, (t, _)) in toks.iter().enumerate().skip(k + 2) {
            match t {
                Token::Punct('(' | '[') => nesting += 1,
                Token::Punct(')' | ']') => nesting -= 1,
                Token::Punct(';') if nesting == 0 => break,
                Token::Punct('{') if nesting == 0 => {
                    body = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = body else { continue };
        let mut depth = 0i32;
        for (t, last) in &toks[open..] {
            match t {
                Token::Punct('{') => depth += 1,
                Token::Punct('}') => depth -= 1,
                _ => continue,
            }
            if depth == 0 {
                out.push(Span { name: name.clone(), first: *first, last: *last });
                break;
            }
        }
    }
    out
}

/// The functions of `text` over `max` lines.
fn too_long(text: &str, max: usize) -> Vec<Span> {
    functions(text).into_iter().filter(|f| f.lines() > max).collect()
}

#[test]
fn no_function_of_src_is_over_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    super::layers::rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut scanned = 0;
    for path in &files {
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if EXEMPT.contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        scanned += functions(&text).len();
        for f in too_long(&text, MAX_LINES) {
            found.push(format!("{rel}:{} {} ({} lines)", f.first, f.name, f.lines()));
        }
    }
    // The scan sees the library's functions at all (a broken scanner would pass with none).
    assert!(scanned > 1000, "only {scanned} functions found under src/");
    assert!(found.is_empty(), "functions over {MAX_LINES} lines (split them into named steps):\n{}", found.join("\n"));
}

/// A function of `body` lines of `stmt` between its `fn` line and its closing brace.
fn synthetic(name: &str, body: usize, stmt: &str) -> String {
    format!("pub fn {name}(x: [u8; 2]) -> u32 {{\n{}}}\n", format!("    {stmt}\n").repeat(body))
}

#[test]
fn a_long_function_is_caught_and_one_at_the_limit_is_not() {
    let at_limit = synthetic("fits", MAX_LINES - 2, "let _ = 1;");
    let over = synthetic("over", MAX_LINES - 1, "let _ = 1;");
    assert_eq!(functions(&at_limit), [Span { name: "fits".into(), first: 1, last: MAX_LINES }]);
    assert!(too_long(&at_limit, MAX_LINES).is_empty());
    assert_eq!(too_long(&over, MAX_LINES), [Span { name: "over".into(), first: 1, last: MAX_LINES + 1 }]);
}

#[test]
fn braces_in_strings_comments_and_literals_count_for_nothing() {
    // Each body line holds a brace the scanner must not count (a miscount would end the
    // function early, or never), or a quote or `fn` it must not misread.
    for stmt in [
        r#"let s = "}";"#,
        r#"let s = "\"}";"#,
        r##"let s = r#"}"#;"##,
        r#"let s = br"}";"#,
        "let c = '}';",
        r"let c = '\'';",
        "let c = b'{';",
        "let c = '\\u{7d}';",
        "// }",
        "/* } /* nested } */ } */",
        "let _: &'static str = \"{\";",
        "'outer: loop { break 'outer; }",
        "let f: fn(u32) -> u32 = |x| x;",
        "let r#type = [0u8; 3];",
    ] {
        let text = format!("{}fn after() {{}}\n", synthetic("long", MAX_LINES, stmt));
        let got = functions(&text);
        assert_eq!(got[0], Span { name: "long".into(), first: 1, last: MAX_LINES + 2 }, "body line: {stmt}");
        assert_eq!(got[1].name, "after", "body line: {stmt}");
        assert_eq!(too_long(&text, MAX_LINES).len(), 1, "body line: {stmt}");
    }
}

#[test]
fn declarations_and_nested_functions() {
    let text = "trait T {\n    fn declared(&self, x: [u8; 4]);\n    fn given(&self) {\n        fn inner() {}\n    }\n}\nstruct S { f: fn(u32) }\n";
    let got = functions(text);
    assert_eq!(
        got,
        [Span { name: "given".into(), first: 3, last: 5 }, Span { name: "inner".into(), first: 4, last: 4 }]
    );
    // A string over several lines moves the lines after it.
    let text = "const S: &str = \"a\nb\n\";\nfn f() {\n}\n";
    assert_eq!(functions(text), [Span { name: "f".into(), first: 4, last: 5 }]);
}
