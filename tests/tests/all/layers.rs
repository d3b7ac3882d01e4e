//! The house in layers: no module of any crate imports a module that imports it back, and the
//! contract layer depends on no async runtime, HTTP, database or crypto crate.
//!
//! An import is any path a module's code names (in a `use`, an expression, a type or a
//! pattern) that leads to another module of the same crate: `crate::a::b`, `super::c`,
//! `self::d` or a child module's name. A path to an item that a module re-exports with
//! `pub use` counts as an import of the module the item comes from, so naming
//! `crate::Agent` is an import of `agent`, not of the crate root. Doc comments and test
//! modules (`#[cfg(test)]`) are not imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::{Item, UseTree};

/// The crates whose modules must form no cycle.
const CRATES: [&str; 13] = [
    "agent-contracts",
    "agent-schema",
    "agent-contract",
    "agent-core",
    "agent-macros",
    "agent-codegen",
    "agent-llm",
    "agent-mcp",
    "agent-a2a",
    "agent-store",
    "agent-ui",
    "agent-cli",
    "examples",
];

type ModPath = Vec<String>;

/// Macros whose input is code they write elsewhere.
const QUOTING: [&str; 4] = [
    "quote",
    "quote_spanned",
    "parse_quote",
    "parse_quote_spanned",
];
type Reexports = BTreeMap<ModPath, BTreeMap<String, Option<ModPath>>>;

#[derive(Default)]
struct Crate {
    /// Every module, with the paths its code names (each path as written, already made
    /// absolute from the crate root where it starts with `crate`, `super` or `self`).
    modules: BTreeMap<ModPath, Vec<ModPath>>,
    /// Per module: names it re-exports with `pub use`, and the path each comes from (`None`:
    /// from another crate).
    reexports: Reexports,
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// Turns a path as written in module `at` into a path from the crate root; `None` for a path
/// that starts outside the crate (another crate, a std item, a local name).
fn absolute(at: &ModPath, segments: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let (first, rest) = segments.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => at.clone(),
        "super" => {
            let mut base = at.clone();
            base.pop()?;
            let mut rest = rest;
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
            return Some(base.into_iter().chain(rest.iter().cloned()).collect());
        }
        // A child module named without `self::`.
        name => {
            let mut child = at.clone();
            child.push(name.to_owned());
            if !modules.contains(&child) {
                return None;
            }
            child.pop();
            child.push(name.to_owned());
            return Some(child.into_iter().chain(rest.iter().cloned()).collect());
        }
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Paths in a `use` tree, each ending at the item (or `*`) it names.
fn use_paths(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push((path, n.ident.to_string()));
        }
        UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.push((path, r.rename.to_string()));
        }
        UseTree::Glob(_) => out.push((prefix.clone(), "*".to_owned())),
        UseTree::Group(g) => {
            for tree in &g.items {
                use_paths(tree, prefix, out);
            }
        }
    }
}

/// Every `a::b::c` path in a token stream (string literals, and so doc comments, hold none);
/// a brace group after `a::` (a `use` inside a function) continues each path in it. What a
/// `quote!` writes is code for another crate, not an import.
fn token_paths(tokens: TokenStream, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut current: Vec<String> = Vec::new();
    let mut colons = 0;
    let mut quoted = false;
    let flush = |current: &mut Vec<String>, out: &mut Vec<Vec<String>>| {
        if prefix.len() + current.len() > 1 {
            out.push(prefix.iter().cloned().chain(current.drain(..)).collect());
        }
        current.clear();
    };
    for tree in tokens {
        match tree {
            TokenTree::Punct(p)
                if p.as_char() == '!'
                    && colons == 0
                    && current
                        .last()
                        .is_some_and(|m| QUOTING.contains(&m.as_str())) =>
            {
                current.clear();
                quoted = true;
            }
            TokenTree::Group(_) if quoted => quoted = false,
            TokenTree::Ident(ident) => {
                if colons != 2 {
                    flush(&mut current, out);
                }
                current.push(ident.to_string());
                colons = 0;
            }
            TokenTree::Punct(p) if p.as_char() == ':' => colons += 1,
            TokenTree::Group(g) => {
                if colons == 2 && !current.is_empty() {
                    let inner: Vec<String> = prefix.iter().chain(&current).cloned().collect();
                    current.clear();
                    token_paths(g.stream(), &inner, out);
                } else {
                    flush(&mut current, out);
                    token_paths(g.stream(), &[], out);
                }
                colons = 0;
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => {
                flush(&mut current, out);
                colons = 0;
            }
        }
    }
    flush(&mut current, out);
}

/// What one module's items name, gathered before paths are resolved.
#[derive(Default)]
struct Raw {
    uses: Vec<(Vec<String>, String, bool)>,
    paths: Vec<Vec<String>>,
}

fn collect_items(
    items: &[Item],
    at: &ModPath,
    dir: &Path,
    here: &Path,
    raw: &mut BTreeMap<ModPath, Raw>,
) -> std::io::Result<()> {
    raw.entry(at.clone()).or_default();
    for item in items {
        match item {
            Item::Mod(m) if is_test_only(&m.attrs) => {}
            Item::Mod(m) => {
                let mut child = at.clone();
                child.push(m.ident.to_string());
                match &m.content {
                    Some((_, inner)) => {
                        collect_items(inner, &child, &dir.join(m.ident.to_string()), here, raw)?
                    }
                    None => {
                        let name = m.ident.to_string();
                        // `#[path = "..."]`: a file named relative to the folder of the file
                        // that declares the module (a file another package shares).
                        let path = m.attrs.iter().find_map(|a| match &a.meta {
                            syn::Meta::NameValue(nv) if nv.path.is_ident("path") => {
                                match &nv.value {
                                    syn::Expr::Lit(syn::ExprLit {
                                        lit: syn::Lit::Str(s),
                                        ..
                                    }) => Some(here.join(s.value())),
                                    _ => None,
                                }
                            }
                            _ => None,
                        });
                        let (file, sub) = if let Some(file) = path {
                            let sub = file.with_extension("");
                            (file, sub)
                        } else if dir.join(format!("{name}.rs")).exists() {
                            (dir.join(format!("{name}.rs")), dir.join(&name))
                        } else {
                            (dir.join(&name).join("mod.rs"), dir.join(&name))
                        };
                        collect_file(&file, &child, &sub, raw)?;
                    }
                }
            }
            Item::Use(u) => {
                let public = !matches!(u.vis, syn::Visibility::Inherited);
                let mut out = Vec::new();
                use_paths(&u.tree, &mut Vec::new(), &mut out);
                let entry = raw.entry(at.clone()).or_default();
                entry
                    .uses
                    .extend(out.into_iter().map(|(path, name)| (path, name, public)));
            }
            Item::Impl(i) if is_test_only(&i.attrs) => {}
            Item::Fn(f) if is_test_only(&f.attrs) => {}
            other => {
                let tokens = quote::ToTokens::to_token_stream(other);
                let entry = raw.entry(at.clone()).or_default();
                token_paths(tokens, &[], &mut entry.paths);
            }
        }
    }
    Ok(())
}

fn collect_file(
    file: &Path,
    at: &ModPath,
    dir: &Path,
    raw: &mut BTreeMap<ModPath, Raw>,
) -> std::io::Result<()> {
    let text = std::fs::read_to_string(file)?;
    let parsed =
        syn::parse_file(&text).unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()));
    collect_items(&parsed.items, at, dir, file.parent().unwrap_or(dir), raw)
}

/// The module a path leads to: the longest prefix that is a module, redirected through
/// re-exports to where the item is defined; `None` for an item of another crate.
fn target(
    path: &ModPath,
    modules: &BTreeSet<ModPath>,
    reexports: &Reexports,
    depth: usize,
) -> Option<ModPath> {
    let module = (0..=path.len())
        .rev()
        .map(|k| path[..k].to_vec())
        .find(|prefix| modules.contains(prefix))?;
    if depth < 8
        && let Some(name) = path.get(module.len())
        && let Some(source) = reexports.get(&module).and_then(|r| r.get(name))
    {
        let mut next = source.clone()?;
        next.extend(path[module.len() + 1..].iter().cloned());
        if let Some(found) = target(&next, modules, reexports, depth + 1) {
            return Some(found);
        }
    }
    Some(module)
}

/// The crate's module graph: each module and the modules it imports.
fn graph(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|f| f.exists())
        .expect("a crate root");
    let mut raw = BTreeMap::new();
    collect_file(&root, &Vec::new(), src, &mut raw).unwrap();
    let modules: BTreeSet<ModPath> = raw.keys().cloned().collect();
    let mut krate = Crate::default();
    for (at, r) in &raw {
        for (path, name, public) in &r.uses {
            let abs = absolute(at, path, &modules);
            if *public && name != "*" {
                krate
                    .reexports
                    .entry(at.clone())
                    .or_default()
                    .insert(name.clone(), abs.clone());
            }
            if let Some(abs) = abs {
                krate.modules.entry(at.clone()).or_default().push(abs);
            }
        }
        for path in &r.paths {
            if let Some(abs) = absolute(at, path, &modules) {
                krate.modules.entry(at.clone()).or_default().push(abs);
            }
        }
        krate.modules.entry(at.clone()).or_default();
    }
    krate
        .modules
        .iter()
        .map(|(at, paths)| {
            let targets = paths
                .iter()
                .filter_map(|p| target(p, &modules, &krate.reexports, 0))
                .filter(|t| t != at)
                .collect();
            (at.clone(), targets)
        })
        .collect()
}

/// The strongly connected components with more than one module (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'g ModPath, usize>,
        low: BTreeMap<&'g ModPath, usize>,
        stack: Vec<&'g ModPath>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g ModPath) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let Some((w, _)) = s.graph.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.stack.contains(&w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                component.push(if w.is_empty() {
                    "(root)".to_owned()
                } else {
                    w.join("::")
                });
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
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let mut found = Vec::new();
    for name in CRATES {
        let graph = graph(&workspace().join(name).join("src"));
        // The walk follows `mod` items into their files: a crate of many files has many.
        if matches!(name, "agent-core" | "agent-contract" | "agent-codegen") {
            assert!(
                graph.len() > 10,
                "{name}: only {} modules read",
                graph.len()
            );
        }
        for cycle in cycles(&graph) {
            // Each module of the cycle, with what it imports inside the cycle.
            let name_of = |m: &ModPath| {
                if m.is_empty() {
                    "(root)".to_owned()
                } else {
                    m.join("::")
                }
            };
            let edges: Vec<String> = graph
                .iter()
                .filter(|(m, _)| cycle.contains(&name_of(m)))
                .map(|(m, targets)| {
                    let inside: Vec<String> = targets
                        .iter()
                        .map(name_of)
                        .filter(|t| cycle.contains(t))
                        .collect();
                    format!("{} -> {}", name_of(m), inside.join(", "))
                })
                .collect();
            found.push(format!("{name}: {}", edges.join("; ")));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn the_checker_sees_a_cycle_through_a_reexport_and_a_child() {
    let dir = std::env::temp_dir().join(format!("layers-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "mod a;\nmod b;\npub use a::Thing;\n/// [`crate::b::x`] is a doc link, not an import.\nfn f() {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a.rs"),
        "pub struct Thing(crate::b::inner::Other);\n",
    )
    .unwrap();
    std::fs::write(dir.join("b/mod.rs"), "pub mod inner;\n").unwrap();
    std::fs::write(
        dir.join("b/inner.rs"),
        "pub struct Other;\nfn g() -> crate::Thing { quote!(crate::b::x) }\n#[cfg(test)]\nmod tests { use crate::a; }\n",
    )
    .unwrap();
    let graph = graph(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        cycles(&graph),
        [vec!["a".to_owned(), "b::inner".to_owned()]]
    );
    // The crate root's re-export is not an import of the root by `b::inner`.
    assert!(!graph[&vec!["b".to_owned(), "inner".to_owned()]].contains(&Vec::new()));
}

/// The crates `package` depends on (normal edges, the whole graph), by name.
fn dependencies(package: &str) -> BTreeSet<String> {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "-p", package, "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .current_dir(workspace())
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).unwrap();
    let crates: BTreeSet<String> = tree
        .lines()
        .filter_map(|l| l.split(' ').next())
        .map(str::to_owned)
        .collect();
    assert!(
        crates.contains(package) && crates.contains("serde_json"),
        "{tree}"
    );
    crates
}

#[test]
fn the_contract_layer_needs_no_async_runtime_http_database_or_crypto() {
    let crates = dependencies("agent-contracts-contract");
    let forbidden = [
        "tokio",
        "hmac",
        "sha2",
        "reqwest",
        "hyper",
        "sqlx",
        "rmcp",
        "futures-util",
    ];
    let found: Vec<&&str> = forbidden.iter().filter(|c| crates.contains(**c)).collect();
    assert!(found.is_empty(), "agent-contract depends on {found:?}");
}

#[test]
fn the_runtime_needs_no_http_database_mcp_or_crypto() {
    // Providers (HTTP), stores (SQL) and the MCP server (with the signing of resume handles)
    // live in the crates above agent-core.
    let crates = dependencies("agent-contracts-runtime");
    assert!(crates.contains("tokio"));
    let forbidden = ["hmac", "sha2", "reqwest", "hyper", "sqlx", "rmcp", "axum"];
    let found: Vec<&&str> = forbidden.iter().filter(|c| crates.contains(**c)).collect();
    assert!(found.is_empty(), "agent-core depends on {found:?}");
}
