//! The imports of `src/`, read from the text: every `use` tree that starts
//! with `crate`, `super`, `self` or a child module (with its braces, `self`
//! and `as`), and every inline path like `crate::a::b`, outside comments,
//! literals and `#[cfg(test)]` items, each resolved to the file of the
//! longest module path that exists. Test files (under a `tests/` directory,
//! `tests.rs`, `*_tests.rs`) and the binary's `main.rs` are left out; an
//! inline `mod x { … }` counts as its file. An import of one of the file's
//! own ancestors (`super::Shared` in `delivery/recorder.rs`) is no edge.

use std::{
    collections::{BTreeMap, BTreeSet, VecDeque},
    fs,
    path::Path,
};

/// A module path inside the crate, like `["delivery", "fanout"]`; the crate
/// root is empty.
pub type Module = Vec<String>;

/// One library file.
pub struct File {
    /// Relative to `src/`, like `delivery/fanout.rs`.
    pub path: String,
    /// Its code without comments, literals and test items.
    code: String,
}

/// One import from a file to another that is not its ancestor.
#[derive(Debug, Clone)]
pub struct Import {
    pub from: Module,
    /// As written, like `crate::delivery::recorder::Recorder`.
    pub written: String,
    pub to: Module,
}

/// The library's files by module.
pub struct Library {
    pub files: BTreeMap<Module, File>,
}

/// `delivery::fanout`, or `crate` for the root.
pub fn name(module: &Module) -> String {
    if module.is_empty() {
        "crate".into()
    } else {
        module.join("::")
    }
}

impl Library {
    pub fn read(src: &Path) -> Library {
        let mut files = BTreeMap::new();
        let mut dirs = vec![src.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            for entry in entries {
                let path = entry.expect("a directory entry").path();
                let rel = path.strip_prefix(src).expect("under src/");
                let rel = rel.to_string_lossy().replace('\\', "/");
                if path.is_dir() {
                    dirs.push(path);
                } else if rel.ends_with(".rs") && !is_left_out(&rel) {
                    let text = fs::read_to_string(&path).expect("a readable source file");
                    let code = without_test_items(&blank_comments_and_literals(&text));
                    files.insert(module_of(&rel), File { path: rel, code });
                }
            }
        }
        Library { files }
    }

    /// The file of a module, for messages.
    pub fn path_of(&self, module: &Module) -> String {
        self.files
            .get(module)
            .map_or_else(|| name(module), |f| format!("src/{}", f.path))
    }

    /// Every import between two files, ancestors aside.
    pub fn imports(&self) -> Vec<Import> {
        let mut out = Vec::new();
        for (from, file) in &self.files {
            let (trees, rest) = take_uses(&file.code);
            let written = trees
                .iter()
                .flat_map(|t| expand(t))
                .chain(inline_paths(&rest));
            for written in written {
                if let Some(to) = self.resolve(from, &written)
                    && !from.starts_with(&to)
                {
                    let from = from.clone();
                    out.push(Import { from, written, to });
                }
            }
        }
        out
    }

    /// The file a path written in `from` lands in, if it is in this crate.
    fn resolve(&self, from: &Module, written: &str) -> Option<Module> {
        let mut segments = written.split("::").filter(|s| !s.is_empty()).peekable();
        let mut full: Module = match *segments.peek()? {
            "crate" => {
                segments.next();
                Vec::new()
            }
            "self" | "super" => {
                let mut base = from.clone();
                while let Some(s) = segments.next_if(|s| *s == "self" || *s == "super") {
                    if s == "super" {
                        base.pop();
                    }
                }
                base
            }
            first if self.files.contains_key(&child(from, first)) => from.clone(),
            _ => return None,
        };
        full.extend(segments.map(str::to_string));
        (0..=full.len())
            .rev()
            .map(|k| full[..k].to_vec())
            .find(|m| self.files.contains_key(m))
    }
}

/// The shortest circle through each file that is on one, each circle once,
/// as the imports that make it.
pub fn circles(imports: &[Import]) -> Vec<Vec<&Import>> {
    let mut next: BTreeMap<&Module, Vec<&Import>> = BTreeMap::new();
    for i in imports {
        next.entry(&i.from).or_default().push(i);
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for &start in next.keys() {
        // Breadth first from `start`, remembering how each file was reached.
        let mut reached: BTreeMap<&Module, &Import> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        let mut closing = None;
        'search: while let Some(at) = queue.pop_front() {
            for &i in next.get(at).into_iter().flatten() {
                if i.to == *start {
                    closing = Some(i);
                    break 'search;
                }
                if !reached.contains_key(&i.to) {
                    reached.insert(&i.to, i);
                    queue.push_back(&i.to);
                }
            }
        }
        let Some(last) = closing else { continue };
        let mut circle = vec![last];
        while circle[0].from != *start {
            circle.insert(0, reached[&circle[0].from]);
        }
        let members: BTreeSet<&Module> = circle.iter().map(|i| &i.from).collect();
        if seen.insert(members) {
            out.push(circle);
        }
    }
    out
}

fn child(module: &Module, name: &str) -> Module {
    let mut child = module.clone();
    child.push(name.to_string());
    child
}

fn is_left_out(rel: &str) -> bool {
    let (dirs, file) = rel.rsplit_once('/').unwrap_or(("", rel));
    rel == "main.rs"
        || file == "tests.rs"
        || file.ends_with("_tests.rs")
        || dirs.split('/').any(|d| d == "tests")
}

fn module_of(rel: &str) -> Module {
    let mut parts: Module = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The code with comments gone and string and character literals emptied,
/// so that what looks like a path is one.
fn blank_comments_and_literals(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let raw_hashes = (at(i) == 'r' && !is_ident(at(i.wrapping_sub(1))))
            .then(|| c[i + 1..].iter().take_while(|&&h| h == '#').count())
            .filter(|&n| at(i + 1 + n) == '"');
        if at(i) == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(n) = raw_hashes {
            // r"…", r#"…"#: ends at a quote followed by as many hashes.
            let close: String = std::iter::once('"').chain("#".repeat(n).chars()).collect();
            i += n + 2;
            while i < c.len() && !c[i..].iter().take(n + 1).copied().eq(close.chars()) {
                i += 1;
            }
            i += n + 1;
            out.push_str("\"\"");
        } else if at(i) == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A character literal ('x', '\n', '\u{…}'), not a lifetime.
            i += 2;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The code without the items marked `#[cfg(test)]`.
fn without_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = code.to_string();
    while let Some(at) = out.find(MARK) {
        let end = item_end(&out, at + MARK.len());
        out.replace_range(at..end, " ");
    }
    out
}

/// Where the item starting at `from` ends: after its `;`, or after its
/// `{ … }` (attributes before it are inside brackets).
fn item_end(code: &str, from: usize) -> usize {
    let mut depth = 0;
    let mut braces = 0;
    for (i, ch) in code[from..].char_indices() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ';' if depth == 0 && braces == 0 => return from + i + 1,
            '{' if depth == 0 => braces += 1,
            '}' if depth == 0 => {
                braces -= 1;
                if braces == 0 {
                    return from + i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The `use` trees, and the code without them.
fn take_uses(code: &str) -> (Vec<String>, String) {
    let (mut trees, mut rest, mut from) = (Vec::new(), String::new(), 0);
    let starts_use = |i: usize| {
        code[i..].starts_with("use")
            && !code[..i].ends_with(is_ident)
            && code[i + 3..].starts_with(char::is_whitespace)
    };
    for (i, _) in code.match_indices("use") {
        if i < from || !starts_use(i) {
            continue;
        }
        let end = code[i..].find(';').map_or(code.len(), |e| i + e);
        rest.push_str(&code[from..i]);
        trees.push(code[i + 3..end].to_string());
        from = end;
    }
    rest.push_str(&code[from..]);
    (trees, rest)
}

/// Every path of a `use` tree: `a::{b, c::{self, d as e}}` gives `a::b`,
/// `a::c` and `a::c::d`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split_whitespace().next().unwrap_or_default();
        return vec![path.trim_end_matches("::self").to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|p| {
            format!("{prefix}{p}")
                .trim_end_matches("::self")
                .to_string()
        })
        .collect()
}

/// Every path of two segments or more written outside `use`.
fn inline_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.char_indices().peekable();
    let mut before = ' ';
    while let Some((start, ch)) = chars.next() {
        if !is_ident(ch) || is_ident(before) || before == ':' {
            before = ch;
            continue;
        }
        let mut end = start + ch.len_utf8();
        loop {
            while let Some((i, c)) = chars.next_if(|&(_, c)| is_ident(c)) {
                end = i + c.len_utf8();
            }
            let rest = &code[end..];
            if !(rest.starts_with("::") && rest[2..].starts_with(is_ident)) {
                break;
            }
            chars.next();
            chars.next();
            end += 2;
        }
        if code[start..end].contains("::") {
            out.push(code[start..end].to_string());
        }
        before = code[..end].chars().next_back().unwrap_or(' ');
    }
    out
}
