//! The layer order of ARCHITECTURE.md, checked against the code.
//!
//! The table under "## Layers" in ARCHITECTURE.md is the single source: this test parses it
//! (top row = top layer), assigns every `src/**/*.rs` file to the most specific entry of the
//! table that names it (a file `src/x.rs` or a folder `src/x/`), reads every file's imports and
//! fails, naming both files, when
//!
//! * a file imports from a layer above its own (a lower row may not import from a higher row;
//!   files of one row may import each other), or
//! * files import each other in a circle (Tarjan's strongly connected components over the
//!   file graph: the unit is the file, so a circle between two files of one folder, such as
//!   `contact/model.rs` ↔ a preset, is reported too).
//!
//! Imports read: `use crate::…`, `use super::…`, `use self::…`, paths into child modules
//! (`use step::X` in `gpu/mod.rs`), grouped and nested trees (`use crate::{a::b, c::{d, e}}`)
//! over any number of lines, `pub use` re-exports (followed to the file that defines the
//! name, so a re-export cannot hide an arrow) and fully qualified `crate::a::b` / `super::x`
//! paths in code. Comments and string literals are skipped. An inline `mod tests { use
//! super::*; }` resolves `super` to the file's own module. `main.rs` reads `talus::` as the
//! crate. Declaring a module (`mod x;`) is not an import.
//!
//! The unit checks at the bottom feed the checker a small synthetic crate with an upward import
//! and a circle and assert that both are reported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One import arrow: `from` file uses something defined in `to` file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Arrow {
    from: String,
    to: String,
}

// ---------------------------------------------------------------------------------------------
// Lexing: identifiers and punctuation, comments and literals dropped.

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path, // `::`
    Punct(char),
}

fn lex(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied().unwrap_or('\0');
        if ch == '/' && next == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if (ch == 'r' || ch == 'b') && (next == '#' || next == '"' || (ch == 'b' && next == 'r')) && !prev_is_ident(&c, i) {
            // raw / byte strings: r"..", r#".."#, br#".."#, b".."
            let mut j = i + 1;
            if ch == 'b' && next == 'r' {
                j += 1;
            }
            let mut hashes = 0;
            while j < c.len() && c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            if j < c.len() && c[j] == '"' {
                let raw = !(ch == 'b' && next == '"');
                j += 1;
                loop {
                    if j >= c.len() {
                        break;
                    }
                    if !raw && c[j] == '\\' {
                        j += 2;
                        continue;
                    }
                    if c[j] == '"' && (0..hashes).all(|k| c.get(j + 1 + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                i = j;
            } else {
                // an identifier starting with r or b
                let start = i;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                out.push(Tok::Ident(c[start..i].iter().collect()));
            }
        } else if ch == '\'' {
            // char literal or lifetime
            if next == '\\' {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.') {
                if c[i] == '.' && c.get(i + 1) == Some(&'.') {
                    break;
                }
                i += 1;
            }
        } else if ch == ':' && next == ':' {
            out.push(Tok::Path);
            i += 2;
        } else if ch.is_whitespace() {
            i += 1;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

fn prev_is_ident(c: &[char], i: usize) -> bool {
    i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

// ---------------------------------------------------------------------------------------------
// Reading imports.

/// A path as written, relative to the module it appears in (`crate`, `super`, `self` kept).
#[derive(Debug, Clone)]
struct RawPath {
    /// Module path of the place it appears (file module plus inline modules).
    at: Vec<String>,
    segs: Vec<String>,
    /// From a `pub use` at the file level: a re-export.
    reexport: bool,
}

/// Expand a use tree starting at `toks[*i]` with the given prefix; stops before `,`, `}` or `;`.
fn use_tree(toks: &[Tok], i: &mut usize, prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let mut segs = prefix;
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(s)) => {
                segs.push(s.clone());
                *i += 1;
                if let Some(Tok::Ident(a)) = toks.get(*i) {
                    if a == "as" {
                        *i += 1;
                        let alias = match toks.get(*i) {
                            Some(Tok::Ident(n)) => Some(n.clone()),
                            _ => None,
                        };
                        *i += 1;
                        out.push((segs, alias));
                        return;
                    }
                }
                if toks.get(*i) == Some(&Tok::Path) {
                    *i += 1;
                    continue;
                }
                let last = segs.last().cloned();
                out.push((segs, last));
                return;
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                out.push((segs, None));
                return;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        None => return,
                        _ => use_tree(toks, i, segs.clone(), out),
                    }
                }
            }
            Some(Tok::Path) => *i += 1, // leading `::`
            _ => return,
        }
    }
}

/// Imports of one file: plain paths and, separately, the names it re-exports (`pub use`).
struct FileImports {
    paths: Vec<RawPath>,
    /// name → path (relative to the file's module) for file-level `pub use` items.
    reexports: BTreeMap<String, RawPath>,
    /// `#[macro_export] macro_rules! name`: reached as `crate::name`.
    macros: BTreeSet<String>,
}

fn read_imports(module: &[String], src: &str) -> FileImports {
    let toks = lex(src);
    let mut paths = Vec::new();
    let mut reexports = BTreeMap::new();
    let mut macros = BTreeSet::new();
    // inline module stack: (name, brace depth inside it)
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let here = |stack: &Vec<(String, usize)>| {
        let mut m = module.to_vec();
        m.extend(stack.iter().map(|(n, _)| n.clone()));
        m
    };
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if let Some((_, d)) = stack.last() {
                    if *d == depth {
                        stack.pop();
                    }
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Ident(k) if k == "macro_rules" => {
                let exported = i >= 4 && toks[i - 1] == Tok::Punct(']') && matches!(&toks[i - 2], Tok::Ident(a) if a == "macro_export");
                if let (true, Some(Tok::Ident(name))) = (exported, toks.get(i + 2)) {
                    macros.insert(name.clone());
                }
                i += 1;
            }
            Tok::Ident(k) if k == "mod" => {
                if let Some(Tok::Ident(name)) = toks.get(i + 1) {
                    match toks.get(i + 2) {
                        Some(Tok::Punct('{')) => {
                            depth += 1;
                            stack.push((name.clone(), depth));
                            i += 3;
                            continue;
                        }
                        _ => {}
                    }
                }
                i += 1;
            }
            Tok::Ident(k) if k == "use" => {
                let public = i > 0 && matches!(&toks[i - 1], Tok::Ident(p) if p == "pub")
                    || i > 3 && toks[i - 1] == Tok::Punct(')') && matches!(&toks[i - 4], Tok::Ident(p) if p == "pub");
                i += 1;
                let mut trees = Vec::new();
                use_tree(&toks, &mut i, Vec::new(), &mut trees);
                let at = here(&stack);
                for (segs, name) in trees {
                    let raw = RawPath { at: at.clone(), segs, reexport: public && stack.is_empty() };
                    if raw.reexport {
                        if let Some(n) = name {
                            reexports.insert(n, raw.clone());
                        }
                    }
                    paths.push(raw);
                }
            }
            Tok::Ident(k) if toks.get(i + 1) == Some(&Tok::Path) && !(i > 0 && toks[i - 1] == Tok::Path) => {
                // a qualified path in code: `crate::…`, `super::…`, `self::…` or into a child
                // module (anything else, `std::…`, `Vec::new`, is dropped when resolving)
                let mut segs = vec![k.clone()];
                let mut j = i + 1;
                while toks.get(j) == Some(&Tok::Path) {
                    match toks.get(j + 1) {
                        Some(Tok::Ident(s)) => {
                            segs.push(s.clone());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                paths.push(RawPath { at: here(&stack), segs, reexport: false });
                i = j;
            }
            _ => i += 1,
        }
    }
    FileImports { paths, reexports, macros }
}

// ---------------------------------------------------------------------------------------------
// The crate: files, modules, arrows.

struct Crate {
    /// module path (empty = crate root) → file
    modules: BTreeMap<Vec<String>, String>,
    /// file → (module path, imports)
    files: BTreeMap<String, (Vec<String>, FileImports)>,
}

/// `src/a/b.rs` → ["a", "b"], `src/a/mod.rs` → ["a"], `src/lib.rs` → [], `src/main.rs` → ["main"].
fn module_of(file: &str) -> Vec<String> {
    let rel = file.strip_prefix("src/").unwrap_or(file).trim_end_matches(".rs");
    let mut segs: Vec<String> = rel.split('/').map(String::from).collect();
    if segs.last().map(String::as_str) == Some("mod") {
        segs.pop();
    }
    if segs == ["lib"] {
        segs.clear();
    }
    segs
}

impl Crate {
    fn new(sources: &[(String, String)]) -> Crate {
        let mut modules = BTreeMap::new();
        let mut files = BTreeMap::new();
        for (file, text) in sources {
            let m = module_of(file);
            let imports = read_imports(&m, text);
            modules.insert(m.clone(), file.clone());
            files.insert(file.clone(), (m, imports));
        }
        Crate { modules, files }
    }

    /// Absolute segments of a raw path, or None for an outside crate / std.
    fn absolute(&self, raw: &RawPath) -> Option<Vec<String>> {
        let mut segs = raw.segs.iter().peekable();
        let first = segs.peek()?.as_str();
        let mut base: Vec<String> = match first {
            "crate" | "talus" if first == "crate" || raw.at.first().map(String::as_str) == Some("main") => {
                segs.next();
                Vec::new()
            }
            "self" => {
                segs.next();
                raw.at.clone()
            }
            "super" => {
                let mut b = raw.at.clone();
                while segs.peek().map(|s| s.as_str()) == Some("super") {
                    segs.next();
                    b.pop();
                }
                b
            }
            _ => {
                // a child module of the current one (2018 uniform paths), else outside the crate
                let mut child = raw.at.clone();
                child.push(first.to_string());
                if self.modules.contains_key(&child) {
                    raw.at.clone()
                } else {
                    return None;
                }
            }
        };
        base.extend(segs.cloned());
        Some(base)
    }

    /// The file that defines what an absolute path names, following `pub use` re-exports.
    fn target(&self, abs: &[String], hops: usize) -> Option<String> {
        if let [name] = abs {
            if let Some((file, _)) = self.files.iter().find(|(_, (_, f))| f.macros.contains(name)) {
                return Some(file.clone());
            }
        }
        let mut k = abs.len();
        while !self.modules.contains_key(&abs[..k]) {
            k -= 1;
        }
        let file = self.modules[&abs[..k]].clone();
        if hops < 8 {
            if let Some(name) = abs.get(k) {
                if let Some(re) = self.files[&file].1.reexports.get(name) {
                    if let Some(mut to) = self.absolute(re) {
                        // `pub use a::b as name` keeps the rest after the name
                        to.extend(abs[k + 1..].iter().cloned());
                        if let Some(t) = self.target(&to, hops + 1) {
                            return Some(t);
                        }
                    }
                }
            }
        }
        Some(file)
    }

    fn arrows(&self) -> BTreeSet<Arrow> {
        let mut out = BTreeSet::new();
        for (file, (_, imports)) in &self.files {
            for raw in &imports.paths {
                let Some(abs) = self.absolute(raw) else { continue };
                let Some(to) = self.target(&abs, 0) else { continue };
                if &to != file {
                    out.insert(Arrow { from: file.clone(), to });
                }
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// The layer table.

/// Rows of the table under `## Layers`, top first: each row's entries (`src/…` in backticks).
fn layer_table(doc: &str) -> Vec<(String, Vec<String>)> {
    let mut rows = Vec::new();
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with("## ") {
            inside = line.trim() == "## Layers";
            continue;
        }
        if !inside || !line.starts_with('|') || line.starts_with("| ---") || line.starts_with("| layer") {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 2 {
            continue;
        }
        let entries: Vec<String> = cells[1]
            .split('`')
            .enumerate()
            .filter(|(k, s)| k % 2 == 1 && s.starts_with("src/"))
            .map(|(_, s)| s.to_string())
            .collect();
        rows.push((cells[0].to_string(), entries));
    }
    rows
}

/// Row index of a file: the most specific entry (`src/x.rs` exact, or the longest folder prefix).
fn layer_of(rows: &[(String, Vec<String>)], file: &str) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (r, (_, entries)) in rows.iter().enumerate() {
        for e in entries {
            let hit = if e.ends_with('/') { file.starts_with(e.as_str()) } else { file == e };
            if hit && best.is_none_or(|(len, _)| e.len() > len) {
                best = Some((e.len(), r));
            }
        }
    }
    best.map(|(_, r)| r)
}

/// Strongly connected components with more than one file (Tarjan).
fn circles(arrows: &BTreeSet<Arrow>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = arrows.iter().flat_map(|a| [&a.from, &a.to]).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of: BTreeMap<&String, usize> = nodes.iter().enumerate().map(|(k, n)| (*n, k)).collect();
    let mut adj = vec![Vec::new(); nodes.len()];
    for a in arrows {
        adj[index_of[&a.from]].push(index_of[&a.to]);
    }
    struct T {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[Vec<usize>], t: &mut T) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in &adj[v] {
            match t.index[w] {
                None => {
                    visit(w, adj, t);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let n = nodes.len();
    let mut t = T { index: vec![None; n], low: vec![0; n], on: vec![false; n], stack: Vec::new(), next: 0, out: Vec::new() };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(v, &adj, &mut t);
        }
    }
    let mut out: Vec<Vec<String>> = t
        .out
        .into_iter()
        .map(|c| {
            let mut c: Vec<String> = c.into_iter().map(|k| nodes[k].clone()).collect();
            c.sort();
            c
        })
        .collect();
    out.sort();
    out
}

/// The folder of a file: `src/gpu/step.rs` → `src/gpu/`.
fn folder(file: &str) -> &str {
    &file[..file.rfind('/').map_or(0, |k| k + 1)]
}

/// A circle that is only the Rust idiom of a folder module: the folder's `mod.rs` (its front,
/// owner of the folder's main type) declares and uses its child files, and the children use
/// the front's type back (`use super::GpuBackend`). Accepted when every member is that front or
/// a file directly in its folder and the circle is gone once the child → front arrows are
/// dropped; a circle between siblings, or one that leaves the folder, is still reported.
fn front_idiom(c: &[String], arrows: &BTreeSet<Arrow>) -> bool {
    let Some(front) = c.iter().find(|f| f.ends_with("/mod.rs")) else { return false };
    let dir = folder(front);
    if !c.iter().all(|f| folder(f) == dir) {
        return false;
    }
    let members: BTreeSet<&String> = c.iter().collect();
    let rest: BTreeSet<Arrow> = arrows
        .iter()
        .filter(|a| members.contains(&a.from) && members.contains(&a.to) && &a.to != front)
        .cloned()
        .collect();
    circles(&rest).is_empty()
}

/// Everything wrong with a crate against a layer table; empty when it keeps the order.
fn problems(sources: &[(String, String)], doc: &str) -> Vec<String> {
    let rows = layer_table(doc);
    let mut out = Vec::new();
    if rows.is_empty() {
        out.push("no layer table under `## Layers`".to_string());
        return out;
    }
    for (name, entries) in &rows {
        for e in entries {
            let used = sources.iter().any(|(f, _)| if e.ends_with('/') { f.starts_with(e.as_str()) } else { f == e });
            if !used {
                out.push(format!("layer `{name}` lists `{e}`, which matches no source file"));
            }
        }
    }
    for (f, _) in sources {
        if layer_of(&rows, f).is_none() {
            out.push(format!("{f} is in no layer of the table"));
        }
    }
    let krate = Crate::new(sources);
    let arrows = krate.arrows();
    for a in &arrows {
        if let (Some(lf), Some(lt)) = (layer_of(&rows, &a.from), layer_of(&rows, &a.to)) {
            if lt < lf {
                out.push(format!(
                    "upward import: {} (layer `{}`) imports from {} (layer `{}`)",
                    a.from, rows[lf].0, a.to, rows[lt].0
                ));
            }
        }
    }
    for c in circles(&arrows).into_iter().filter(|c| !front_idiom(c, &arrows)) {
        let members: BTreeSet<&String> = c.iter().collect();
        let inner: Vec<String> = arrows
            .iter()
            .filter(|a| members.contains(&a.from) && members.contains(&a.to))
            .map(|a| format!("{} → {}", a.from, a.to))
            .collect();
        out.push(format!("import circle between {}: {}", c.join(", "), inner.join("; ")));
    }
    out
}

fn sources_under(root: &Path) -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root.join("src"), root, &mut out);
    out
}

// ---------------------------------------------------------------------------------------------
// The real crate.

#[test]
fn layers_of_architecture_md_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let found = problems(&sources_under(root), &doc);
    assert!(found.is_empty(), "{} layer problem(s):\n{}", found.len(), found.join("\n"));
}

/// Prints every arrow and circle of the tree and the files per layer
/// (`cargo test --release --test layers -- --nocapture`); every file belongs to one layer.
#[test]
fn print_arrows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = sources_under(root);
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let rows = layer_table(&doc);
    let arrows = Crate::new(&sources).arrows();
    for a in &arrows {
        println!("{} -> {}", a.from, a.to);
    }
    for c in circles(&arrows) {
        let idiom = if front_idiom(&c, &arrows) { " (front idiom, accepted)" } else { "" };
        println!("CIRCLE ({} files){idiom}: {}", c.len(), c.join(" "));
    }
    let mut placed = 0;
    for (k, (name, _)) in rows.iter().enumerate() {
        let n = sources.iter().filter(|(f, _)| layer_of(&rows, f) == Some(k)).count();
        println!("LAYER {name}: {n} files");
        placed += n;
    }
    assert_eq!(placed, sources.len(), "every source file belongs to exactly one layer");
    for p in problems(&sources, &doc) {
        println!("PROBLEM {p}");
    }
}

// ---------------------------------------------------------------------------------------------
// The checker can fail.

fn synthetic(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files.iter().map(|(f, t)| (f.to_string(), t.to_string())).collect()
}

const SYNTHETIC_DOC: &str = "# x\n\n## Layers\n\n| layer | files |\n| --- | --- |\n| top | `src/lib.rs`, `src/app.rs` |\n| middle | `src/engine/` |\n| bottom | `src/base.rs`, `src/data/` |\n\n## Other\n\n| a | `src/nothing.rs` |\n";

#[test]
fn clean_synthetic_crate_passes() {
    let files = synthetic(&[
        ("src/lib.rs", "pub mod app; pub mod engine; pub mod base; pub mod data;\npub use base::Thing;"),
        ("src/app.rs", "use crate::engine::{run::go, Engine};\nuse crate::Thing;\nfn f() { crate::data::make(); }"),
        ("src/engine/mod.rs", "mod run;\npub struct Engine;\nuse run::go;"),
        ("src/engine/run.rs", "use crate::{\n    base::Thing,\n    data::{self, Row},\n};\npub fn go() {}"),
        ("src/base.rs", "pub struct Thing; // use crate::app::X;\nconst S: &str = \"use crate::engine::Engine;\";"),
        ("src/data/mod.rs", "pub struct Row; pub fn make() {}\n#[cfg(test)]\nmod tests { use super::*; }"),
    ]);
    let found = problems(&files, SYNTHETIC_DOC);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn upward_import_is_reported_with_both_files() {
    let files = synthetic(&[
        ("src/lib.rs", "pub mod app; pub mod engine; pub mod base; pub mod data;"),
        ("src/app.rs", ""),
        ("src/engine/mod.rs", ""),
        ("src/base.rs", "use crate::{\n    data::Row,\n    engine::Engine,\n};"),
        ("src/data/mod.rs", "pub struct Row;"),
    ]);
    let found = problems(&files, SYNTHETIC_DOC);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("src/base.rs") && found[0].contains("src/engine/mod.rs"), "{found:#?}");
}

#[test]
fn qualified_path_in_code_counts() {
    let files = synthetic(&[
        ("src/lib.rs", "pub mod app; pub mod engine; pub mod base; pub mod data;"),
        ("src/app.rs", ""),
        ("src/engine/mod.rs", ""),
        ("src/base.rs", "fn f() { let _ = crate::app::thing(); }"),
        ("src/data/mod.rs", ""),
    ]);
    let found = problems(&files, SYNTHETIC_DOC);
    assert!(found.iter().any(|p| p.contains("src/base.rs") && p.contains("src/app.rs")), "{found:#?}");
}

#[test]
fn reexport_does_not_hide_an_upward_arrow() {
    let files = synthetic(&[
        ("src/lib.rs", "pub mod app; pub mod engine; pub mod base; pub mod data;"),
        ("src/app.rs", "pub struct Big;"),
        ("src/engine/mod.rs", ""),
        ("src/base.rs", "use crate::data::Big;"),
        ("src/data/mod.rs", "pub use crate::app::Big;"),
    ]);
    let found = problems(&files, SYNTHETIC_DOC);
    assert!(found.iter().any(|p| p.contains("src/base.rs") && p.contains("src/app.rs")), "{found:#?}");
    assert!(found.iter().any(|p| p.contains("src/data/mod.rs") && p.contains("src/app.rs")), "{found:#?}");
}

#[test]
fn circle_inside_one_layer_is_reported() {
    let files = synthetic(&[
        ("src/lib.rs", "pub mod app; pub mod engine; pub mod base; pub mod data;"),
        ("src/app.rs", ""),
        ("src/engine/mod.rs", "mod a; mod b;"),
        ("src/engine/a.rs", "use super::b::B;\npub struct A;"),
        ("src/engine/b.rs", "pub struct B;\nfn f() -> super::a::A { super::a::A }"),
        ("src/base.rs", ""),
        ("src/data/mod.rs", ""),
    ]);
    let found = problems(&files, SYNTHETIC_DOC);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("circle") && found[0].contains("src/engine/a.rs") && found[0].contains("src/engine/b.rs"), "{found:#?}");
}

#[test]
fn unlisted_file_and_stale_entry_are_reported() {
    let files = synthetic(&[
        ("src/lib.rs", ""),
        ("src/app.rs", ""),
        ("src/engine/mod.rs", ""),
        ("src/stray.rs", ""),
        ("src/data/mod.rs", ""),
    ]);
    let found = problems(&files, SYNTHETIC_DOC);
    assert!(found.iter().any(|p| p.contains("src/stray.rs")), "{found:#?}");
    assert!(found.iter().any(|p| p.contains("`src/base.rs`")), "{found:#?}");
}

#[test]
fn folder_front_idiom_is_accepted_but_not_a_circle_leaving_the_folder() {
    let doc = SYNTHETIC_DOC;
    let ok = synthetic(&[
        ("src/lib.rs", "pub mod app; pub mod engine; pub mod base; pub mod data;"),
        ("src/app.rs", ""),
        ("src/engine/mod.rs", "mod part;\npub struct Engine;\nfn f() { part::go(); }"),
        ("src/engine/part.rs", "use super::Engine;\nimpl Engine { pub fn go() {} }"),
        ("src/base.rs", ""),
        ("src/data/mod.rs", ""),
    ]);
    assert!(problems(&ok, doc).is_empty(), "{:#?}", problems(&ok, doc));
    let bad = synthetic(&[
        ("src/lib.rs", "pub mod app; pub mod engine; pub mod base; pub mod data;"),
        ("src/app.rs", ""),
        ("src/engine/mod.rs", "mod part;\npub struct Engine;\nuse crate::data::Row;"),
        ("src/engine/part.rs", "use super::Engine;"),
        ("src/base.rs", ""),
        ("src/data/mod.rs", "pub struct Row;\nuse crate::engine::part;"),
    ]);
    let found = problems(&bad, doc);
    assert!(found.iter().any(|p| p.contains("circle") && p.contains("src/data/mod.rs") && p.contains("src/engine/mod.rs")), "{found:#?}");
}
