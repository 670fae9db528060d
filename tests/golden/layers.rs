//! One-way imports: the layer order written in `src/lib.rs` (its "Layers" list) holds for
//! every `crate::…` path in `src/**/*.rs`, and the modules form no import circle across
//! layers. Reads the sources as text (no build of the crate): a `use`, a path in an
//! expression and a grouped `use crate::{a, b::{c, d}}` all count; comments do not.
//!
//! `cargo test --test golden layers -- --nocapture` also prints the import cycles among source files
//! (strongly connected components of the file graph), the figure issue 19 measures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Imports upwards still known: (importing module prefix, imported path prefix, why it is
/// still there). The test fails when one of them no longer occurs, so the list only shrinks.
const KNOWN_UPWARDS: &[(&str, &str, &str)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The layers of `src/lib.rs`, lowest first: the backticked names of each numbered line of
/// its `# Layers` list.
fn layers(lib: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in lib.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            continue;
        };
        let doc = doc.trim();
        if doc.starts_with('#') {
            inside = doc == "# Layers";
            continue;
        }
        let numbered = doc
            .split_once(". ")
            .filter(|(n, _)| n.parse::<u32>().is_ok());
        if let (true, Some((_, rest))) = (inside, numbered) {
            let names = rest.split('—').next().unwrap_or("");
            let names: Vec<String> = names
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            out.push(names);
        }
    }
    out
}

/// Every `.rs` file under `dir`, as (module path, file): `src/a/mod.rs` and `src/a.rs` are
/// `a`, `src/a/b.rs` is `a::b`, `src/lib.rs` and `src/main.rs` the crate root "".
fn modules(dir: &Path, src: &Path, out: &mut BTreeMap<String, PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("cannot list {}", dir.display());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            modules(&path, src, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(src).unwrap_or(&path).with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] || parts == ["main"] {
            parts.clear();
        }
        out.insert(parts.join("::"), path);
    }
}

/// The source without comments (a doc link to a higher module is no import).
fn code_of(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let line = match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths a use tree names, from just after `crate::` (or `super::`): `a::b`,
/// `a::{b, c::{d}}` → `a::b`, `a::c::d`.
fn paths(text: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let text = text.trim_start();
    if let Some(group) = text.strip_prefix('{') {
        for item in group_items(group) {
            paths(item, prefix, out);
        }
        return;
    }
    let mut path = prefix.to_vec();
    let mut rest = text;
    loop {
        let end = rest.find(|c: char| !ident_char(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        path.push(rest[..end].to_string());
        rest = &rest[end..];
        match rest.strip_prefix("::") {
            Some(next) if next.starts_with(|c: char| ident_char(c)) => rest = next,
            Some(next) if next.starts_with('{') => {
                for item in group_items(&next[1..]) {
                    match item.trim() {
                        "self" | "" => out.push(path.clone()),
                        item => paths(item, &path, out),
                    }
                }
                return;
            }
            _ => break,
        }
    }
    if path.len() > prefix.len() {
        out.push(path);
    }
}

/// The comma-separated items of a `{…}` group (its text after the opening brace).
fn group_items(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&text[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// Every path a module's code names through `crate::` and `super::`, absolute.
fn imports(module: &str, code: &str) -> Vec<Vec<String>> {
    let here: Vec<String> = module
        .split("::")
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].ends_with(|c: char| ident_char(c) || c == '$') {
            continue;
        }
        paths(&code[at + "crate::".len()..], &[], &mut out);
    }
    let mut at = 0;
    while let Some(found) = code[at..].find("super::") {
        let start = at + found;
        at = start + "super::".len();
        if code[..start].ends_with(|c: char| ident_char(c) || c == ':') {
            continue;
        }
        let mut ups = 1;
        while code[at..].starts_with("super::") {
            ups += 1;
            at += "super::".len();
        }
        let base = &here[..here.len().saturating_sub(ups)];
        paths(&code[at..], base, &mut out);
    }
    out
}

/// The file module a path lands in: its longest prefix that is a module.
fn resolve(path: &[String], modules: &BTreeMap<String, PathBuf>) -> String {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains_key(m))
        .unwrap_or_default()
}

struct Graph {
    modules: BTreeMap<String, PathBuf>,
    /// module → (imported path, as written)
    imports: BTreeMap<String, Vec<Vec<String>>>,
    /// module → the child modules it declares (`mod x;`)
    declares: BTreeMap<String, Vec<String>>,
}

fn graph_of(src: &Path) -> Graph {
    let mut modules = BTreeMap::new();
    self::modules(src, src, &mut modules);
    let mut graph = Graph {
        modules: BTreeMap::new(),
        imports: BTreeMap::new(),
        declares: BTreeMap::new(),
    };
    for (module, file) in &modules {
        let Ok(text) = std::fs::read_to_string(file) else {
            panic!("cannot read {}", file.display());
        };
        let code = code_of(&text);
        graph.imports.insert(module.clone(), imports(module, &code));
        let declared = code
            .lines()
            .filter_map(|l| {
                let l = l.trim();
                let l = l.strip_prefix("pub ").unwrap_or(l);
                let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
                l.strip_prefix("mod ")?.strip_suffix(';')
            })
            .map(|child| match module.as_str() {
                "" => child.to_string(),
                parent => format!("{parent}::{child}"),
            })
            .filter(|child| modules.contains_key(child))
            .collect();
        graph.declares.insert(module.clone(), declared);
    }
    graph.modules = modules;
    graph
}

/// The layer of a module path: that of its first segment.
fn layer_of(path: &str, layers: &[Vec<String>]) -> Option<usize> {
    let top = path.split("::").next()?;
    layers.iter().position(|l| l.iter().any(|m| m == top))
}

/// Imports from a lower layer to a higher one: (module, imported path).
fn upwards(graph: &Graph, layers: &[Vec<String>]) -> Vec<(String, String)> {
    let mut out = BTreeSet::new();
    for (module, paths) in &graph.imports {
        let Some(from) = layer_of(module, layers) else {
            continue;
        };
        for path in paths {
            let path = path.join("::");
            if layer_of(&path, layers).is_some_and(|to| to > from) {
                out.insert((module.clone(), path));
            }
        }
    }
    out.into_iter().collect()
}

fn known(module: &str, path: &str) -> Option<usize> {
    let under =
        |name: &str, prefix: &str| name == prefix || name.starts_with(&format!("{prefix}::"));
    KNOWN_UPWARDS
        .iter()
        .position(|(m, p, _)| under(module, m) && under(path, p))
}

/// Strongly connected components of more than one file (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found.sort_by_key(|c| std::cmp::Reverse(c.len()));
    state.found
}

/// File → files it imports; with `declarations`, a parent also depends on the children it
/// declares (so any child importing its parent closes a circle through the whole module).
/// Without `known_too`, the imports upwards of [`KNOWN_UPWARDS`] are left out.
fn file_edges(
    graph: &Graph,
    declarations: bool,
    known_too: bool,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, paths) in &graph.imports {
        let to = edges.entry(module.clone()).or_default();
        to.extend(
            paths
                .iter()
                .filter(|p| known_too || known(module, &p.join("::")).is_none())
                .map(|p| resolve(p, &graph.modules))
                .filter(|t| t != module && !t.is_empty()),
        );
        if declarations {
            to.extend(graph.declares[module].iter().cloned());
        }
    }
    edges
}

/// The sources checked: this crate's, or `LAYERS_SRC` (measure another checkout's `src/`).
fn src() -> PathBuf {
    std::env::var_os("LAYERS_SRC").map_or_else(|| root().join("src"), PathBuf::from)
}

fn lib_layers() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("read src/lib.rs");
    layers(&lib)
}

#[test]
fn the_layer_list_names_every_top_level_module_once() {
    let layers = lib_layers();
    let graph = graph_of(&src());
    let listed: Vec<&String> = layers.iter().flatten().collect();
    let unique: BTreeSet<&String> = listed.iter().copied().collect();
    assert_eq!(
        listed.len(),
        unique.len(),
        "a module is listed twice: {layers:?}"
    );
    let tops: BTreeSet<String> = graph
        .modules
        .keys()
        .filter_map(|m| m.split("::").next().filter(|t| !t.is_empty()))
        .map(str::to_string)
        .collect();
    let listed: BTreeSet<String> = unique.into_iter().cloned().collect();
    assert_eq!(
        tops, listed,
        "src/lib.rs '# Layers' must list exactly the crate's top-level modules"
    );
}

#[test]
fn no_lower_layer_imports_a_higher_one() {
    let layers = lib_layers();
    let graph = graph_of(&src());
    let found = upwards(&graph, &layers);
    let unknown: Vec<String> = found
        .iter()
        .filter(|(m, p)| known(m, p).is_none())
        .map(|(m, p)| format!("{m} imports crate::{p}"))
        .collect();
    assert!(
        unknown.is_empty(),
        "imports upwards (see the layer order in src/lib.rs):\n  {}",
        unknown.join("\n  ")
    );
    let used: BTreeSet<usize> = found.iter().filter_map(|(m, p)| known(m, p)).collect();
    for (i, (m, p, _)) in KNOWN_UPWARDS.iter().enumerate() {
        assert!(
            used.contains(&i),
            "{m} no longer imports crate::{p}: remove it from KNOWN_UPWARDS"
        );
    }
}

#[test]
fn no_import_circle_spans_two_top_level_modules() {
    let graph = graph_of(&src());
    for declarations in [false, true] {
        let found = cycles(&file_edges(&graph, declarations, true));
        let sizes: Vec<usize> = found.iter().map(Vec::len).collect();
        println!(
            "file import cycles ({}): {} circles, sizes {sizes:?}",
            if declarations {
                "imports and `mod` declarations"
            } else {
                "imports only"
            },
            found.len()
        );
        for circle in &found {
            println!("  {}", circle.join(" "));
        }
        // Without the known imports upwards, no circle may leave its top-level module.
        let spanning: Vec<Vec<String>> = cycles(&file_edges(&graph, declarations, false))
            .into_iter()
            .filter(|c| {
                let tops: BTreeSet<&str> = c.iter().filter_map(|m| m.split("::").next()).collect();
                tops.len() > 1
            })
            .collect();
        assert!(
            spanning.is_empty(),
            "import circles across top-level modules: {spanning:?}"
        );
    }
}

#[test]
fn a_seeded_import_upwards_is_found() {
    let layers = lib_layers();
    let mut graph = graph_of(&src());
    let code = code_of(
        "use std::fmt;\n// use crate::cli::nothing (a comment)\nuse crate::{error::Error, execute::{progress, write::Writes}};\nfn f() { crate::cli::main(); }\n",
    );
    graph
        .imports
        .insert("backend::seeded".into(), imports("backend::seeded", &code));
    let found = upwards(&graph, &layers);
    let seeded: Vec<&str> = found
        .iter()
        .filter(|(m, _)| m == "backend::seeded")
        .map(|(_, p)| p.as_str())
        .collect();
    assert_eq!(
        seeded,
        ["cli::main", "execute::progress", "execute::write::Writes"]
    );
}

#[test]
fn super_paths_resolve_from_the_file() {
    let code = "use super::super::session::Session;\nuse super::nulled;\n";
    let found = imports("execute::write::merge", code);
    assert_eq!(
        found,
        [
            vec!["execute", "session", "Session"],
            vec!["execute", "write", "nulled"]
        ]
    );
}
