//! docs/scenes.md against the parser (issue 37): every key the parser accepts in a context is
//! named in that context's section of the docs, and every key a table of that section lists
//! is accepted there. `talus::scene::accepted_keys` gives the parser's lists.

use std::collections::BTreeSet;
use std::path::Path;

/// The text of the section whose heading line starts with `heading`, up to the next heading of
/// the same or a higher level.
fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    let start = doc.find(&format!("\n{heading}")).unwrap_or_else(|| panic!("docs/scenes.md has no heading {heading:?}")) + 1;
    let level = heading.chars().take_while(|&c| c == '#').count();
    let rest = &doc[start..];
    let body = rest.find('\n').map_or("", |i| &rest[i..]);
    let end = body
        .match_indices("\n#")
        .find(|(i, _)| body[i + 1..].chars().take_while(|&c| c == '#').count() <= level)
        .map_or(body.len(), |(i, _)| i);
    &rest[..rest.len() - body.len() + end]
}

/// The part of `text` from the first line starting with `from` up to the first line after it
/// starting with any of `to` (or the end).
fn part<'a>(text: &'a str, from: &str, to: &[&str]) -> &'a str {
    let start = text.find(&format!("\n{from}")).unwrap_or_else(|| panic!("no paragraph starting {from:?}")) + 1;
    let rest = &text[start..];
    let end = to.iter().filter_map(|t| rest[1..].find(&format!("\n{t}")).map(|i| i + 1)).min().unwrap_or(rest.len());
    &rest[..end]
}

fn is_key(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic()) && s.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Every key named in backticks in `text`: `key`, the last part of `a.b.key`, and every
/// `"key":` of a JSON snippet.
fn named(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for span in text.split('`').skip(1).step_by(2) {
        if let Some(last) = span.rsplit('.').next().filter(|s| is_key(s) && span.split('.').all(is_key)) {
            out.insert(last.to_string());
        }
        for q in span.split('"').skip(1).step_by(2) {
            if is_key(q) {
                out.insert(q.to_string());
            }
        }
    }
    out
}

/// The keys named in the first cell of a table row: only whole `key`s (values are quoted).
fn row_keys(cell: &str) -> BTreeSet<String> {
    cell.split('`').skip(1).step_by(2).filter(|s| is_key(s)).map(str::to_string).collect()
}

/// The keys in the first column of the tables of `text` whose header's first cell is `key`.
fn table_keys(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_key_table = false;
    for line in text.lines() {
        if !line.starts_with('|') {
            in_key_table = false;
            continue;
        }
        let first = line.split('|').nth(1).unwrap_or("").trim();
        if first == "key" {
            in_key_table = true;
            continue;
        }
        if in_key_table {
            out.extend(row_keys(first));
        }
    }
    out
}

/// Compare one context: `accepted` (the parser's list) must all be named in `docs_text`, and
/// every table key of `table_text` must be accepted.
fn compare(context: &str, accepted: &[&str], docs_text: &str, table_text: &str, problems: &mut Vec<String>) {
    let named = named(docs_text);
    let accepted_set: BTreeSet<String> = accepted.iter().map(|s| s.to_string()).collect();
    let undocumented: Vec<&String> = accepted_set.iter().filter(|k| !named.contains(*k)).collect();
    if !undocumented.is_empty() {
        problems.push(format!("{context}: the parser accepts {undocumented:?}, which docs/scenes.md does not name there"));
    }
    let rejected: Vec<String> = table_keys(table_text).into_iter().filter(|k| !accepted_set.contains(k)).collect();
    if !rejected.is_empty() {
        problems.push(format!("{context}: docs/scenes.md lists {rejected:?} as keys, which the parser rejects there"));
    }
}

#[test]
fn docs_name_every_key_the_parser_accepts_and_no_other() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scenes.md")).unwrap();
    let top = section(&doc, "## Top level");
    let contacts = section(&doc, "## `contacts`");
    // the contacts section: keys of every model, each model's part, adhesion
    let models = ["`hertz` (", "`hysteretic` (", "`hooke` (", "`hertz_mindlin` (", "`hertz_viscous` (", "**Adhesion**", "`limit_damping` ("];
    let common = part(contacts, "Keys of every model", &models);
    let adhesion = part(contacts, "**Adhesion**", &models[6..]);
    let sections = [
        ("top", top, top),
        ("output", top, ""),
        ("domain", top, ""),
        ("until_rest", section(&doc, "### `until_rest`"), ""),
        ("decomposition", section(&doc, "### `decomposition`"), ""),
        ("initial_state", section(&doc, "## `initial_state`"), ""),
        ("materials", section(&doc, "## `materials.<name>`"), section(&doc, "## `materials.<name>`")),
        ("particles", section(&doc, "## `particles[i]`"), section(&doc, "## `particles[i]`")),
        ("generators", section(&doc, "## `generators[i]`"), section(&doc, "## `generators[i]`")),
        ("walls", section(&doc, "## `walls[i]`"), section(&doc, "## `walls[i]`")),
        ("walls.transform", section(&doc, "## `walls[i]`"), ""),
        ("insert", section(&doc, "## Insertion and outlets"), part(section(&doc, "## Insertion and outlets"), "`insert[i]`:", &["`outlets[i]`:"])),
        ("outlets", part(section(&doc, "## Insertion and outlets"), "`outlets[i]`:", &["```"]), ""),
        ("clump_templates", section(&doc, "## `clump_templates[i]`"), section(&doc, "## `clump_templates[i]`")),
    ];
    let lists = talus::scene::accepted_keys();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (context, docs_text, table_text) in sections {
        let (_, accepted) = lists.iter().find(|(c, _)| c == context).unwrap_or_else(|| panic!("the parser has no key list {context}"));
        compare(context, accepted, docs_text, table_text, &mut problems);
        seen.insert(context.to_string());
    }
    for (context, accepted) in &lists {
        let Some(model) = context.strip_suffix(')').and_then(|c| c.split_once(" (")).map(|(_, m)| m) else { continue };
        let own = part(contacts, &format!("`{model}` ("), &models);
        let text = format!("{common}\n{own}\n{adhesion}");
        let mut accepted: Vec<&str> = accepted.clone();
        if context.starts_with("contacts.pairs") {
            // the pair entry's own key
            accepted.retain(|k| *k != "materials");
        }
        let tables = if context.starts_with("contacts.default") {
            // keys the docs mark "(pairs only)" are not the default's
            text.lines().filter(|l| !l.contains("(pairs only)")).collect::<Vec<_>>().join("\n")
        } else {
            text.clone()
        };
        compare(context, &accepted, &text, &tables, &mut problems);
        seen.insert(context.clone());
    }
    let unchecked: Vec<&String> = lists.iter().map(|(c, _)| c).filter(|c| !seen.contains(*c)).collect();
    assert!(unchecked.is_empty(), "key lists with no docs section in this test: {unchecked:?}");
    assert!(problems.is_empty(), "docs/scenes.md and the parser disagree:\n{}", problems.join("\n"));
}

/// The index table "Every key at a glance" names every key the parser accepts, in any context,
/// in its first column (as a part of a key path such as `walls[i].motion.velocity`).
#[test]
fn the_index_table_names_every_key_the_parser_accepts() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scenes.md")).unwrap();
    let index = section(&doc, "## Every key at a glance");
    let mut listed = BTreeSet::new();
    for line in index.lines().filter(|l| l.starts_with("| `")) {
        let first = line.split('|').nth(1).unwrap_or("");
        for span in first.split('`').skip(1).step_by(2) {
            for seg in span.split('.') {
                let seg = seg.trim_start_matches('…').trim_end_matches("[i]");
                if is_key(seg) {
                    listed.insert(seg.to_string());
                }
            }
        }
    }
    let missing: BTreeSet<String> =
        talus::scene::accepted_keys().into_iter().flat_map(|(_, keys)| keys.into_iter().map(str::to_string)).filter(|k| !listed.contains(k)).collect();
    assert!(missing.is_empty(), "docs/scenes.md, \"Every key at a glance\", lacks {missing:?}");
}
