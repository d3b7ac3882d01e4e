//! Checks the names a prompt template reads against the contract before askama does.
//!
//! askama compiles `{{ target_ur }}` to `self.target_ur`, and rustc's "no field" error can
//! only point at the `user_prompt = "..."` literal: it cannot say where in the template the
//! name is or which names exist. This check can. It is best effort and errs on the side of
//! silence: anything it cannot follow (custom syntaxes, glob template folders, `extends`,
//! `include`, `import`, macros, blocks, `is defined` tests, a template that does not parse)
//! skips the check and leaves the error to askama and rustc, which still reject the template.

use askama_parser::{Ast, Expr, Filter, LetValueOrBlock, Node, Syntax, Target, WithSpan};
use std::path::{Path, PathBuf};

/// A template file found the way askama finds it.
pub(crate) struct TemplateFile {
    /// The path to show: the template folder as configured, joined with the template's name.
    pub display: PathBuf,
    /// The file's path on disk, for build scripts to track.
    pub path: PathBuf,
    pub source: String,
}

/// Where askama would look for a template.
pub(crate) enum Lookup {
    /// Found.
    Found(TemplateFile),
    /// In none of these folders (as configured).
    Missing(Vec<String>),
    /// The configuration is beyond this check.
    Unknown,
}

/// Finds `name` in askama's template folders of the crate at `root`: `askama.toml`'s
/// `[general] dirs`, else `templates/`.
pub(crate) fn lookup(root: &Path, name: &str) -> Lookup {
    let dirs = match std::fs::read_to_string(root.join("askama.toml")) {
        Ok(text) => match config_dirs(&text) {
            Some(dirs) => dirs,
            None => return Lookup::Unknown,
        },
        Err(_) => vec!["templates".to_owned()],
    };
    let found = dirs.iter().find_map(|dir| {
        let path = root.join(dir).join(name);
        let source = std::fs::read_to_string(&path).ok()?;
        let display = Path::new(dir).join(name);
        Some(TemplateFile {
            display,
            path,
            source,
        })
    });
    match found {
        Some(file) => Lookup::Found(file),
        None => Lookup::Missing(dirs),
    }
}

/// Most files [`near_match`] looks at, and how deep it goes into a template folder.
const MAX_FILES: usize = 2000;
const MAX_DEPTH: usize = 8;

/// The template in `dirs` (askama's folders of the crate at `root`) whose name is closest to
/// `name`, if one is close enough to be a typo of it (`agents/summary_user.md` for
/// `agents/sumary_user.md`).
pub(crate) fn near_match(root: &Path, dirs: &[String], name: &str) -> Option<String> {
    let mut names = Vec::new();
    for dir in dirs {
        let mut stack = vec![(root.join(dir), 0)];
        while let Some((folder, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for path in entries.filter_map(Result::ok).map(|e| e.path()) {
                if names.len() >= MAX_FILES {
                    break;
                }
                if path.is_dir() && depth < MAX_DEPTH {
                    stack.push((path, depth + 1));
                } else if let Ok(rel) = path.strip_prefix(root.join(dir)) {
                    names.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
    }
    names.sort();
    crate::suggest::closest(name, names.iter().map(String::as_str)).map(str::to_owned)
}

/// The folders of an `askama.toml` that uses the default syntax and no globs.
fn config_dirs(text: &str) -> Option<Vec<String>> {
    let config: serde_json::Value = basic_toml::from_str(text).ok()?;
    if config.get("syntax").is_some() || config.pointer("/general/default_syntax").is_some() {
        return None;
    }
    let Some(dirs) = config.pointer("/general/dirs") else {
        return Some(vec!["templates".to_owned()]);
    };
    dirs.as_array()?
        .iter()
        .map(|d| d.as_str().filter(|d| !d.contains('*')).map(str::to_owned))
        .collect()
}

/// A name the template reads from the template struct, and its byte offset.
pub(crate) struct Unknown<'a> {
    pub name: &'a str,
    pub offset: usize,
}

/// The names `source` reads that are neither bound in the template nor in `known`.
/// `None` when the template does not parse or uses what this check cannot follow.
pub(crate) fn unknown_names<'a>(source: &'a str, known: &[&str]) -> Option<Vec<Unknown<'a>>> {
    let reads = reads(source)?;
    let unknown = reads
        .used
        .into_iter()
        .filter(|(name, _)| !reads.bound.contains_key(name) && !known.contains(name))
        .map(|(name, offset)| Unknown { name, offset })
        .collect();
    Some(unknown)
}

/// What a template reads: its variables, field chains and loops.
pub(crate) struct Reads<'a> {
    /// Variables read, with their byte offsets.
    pub used: Vec<(&'a str, usize)>,
    /// Field chains read from a variable (`s.title` is `["s", "title"]`), with the offset of
    /// the chain; `self.` is dropped.
    pub chains: Vec<(Vec<&'a str>, usize)>,
    /// `{% for s in steps %}` binds `s` to the items of the chain `["steps"]`.
    pub loops: Vec<(&'a str, Vec<&'a str>)>,
    /// `{% if let Some(s) = source %}` binds `s` to the value of the optional chain
    /// `["source"]`.
    pub somes: Vec<(&'a str, Vec<&'a str>)>,
    /// Every name the template binds, and how many times.
    pub bound: std::collections::BTreeMap<&'a str, usize>,
}

/// What `source` reads; `None` when it does not parse or uses what this check cannot follow.
pub(crate) fn reads(source: &str) -> Option<Reads<'_>> {
    let ast = Ast::from_str(source, None, &Syntax::default()).ok()?;
    let mut walk = Walk::default();
    walk.nodes(ast.nodes())?;
    if walk.conditional {
        return None;
    }
    Some(Reads {
        used: walk.used,
        chains: walk.chains,
        loops: walk.loops,
        somes: walk.somes,
        bound: walk.bound,
    })
}

/// `a.b.c` as `["a", "b", "c"]` (without a leading `self`), with the byte offset of `a`, if
/// the expression is a variable followed by plain field accesses.
fn chain<'a>(expr: &WithSpan<Box<Expr<'a>>>) -> Option<(Vec<&'a str>, usize)> {
    let mut names = Vec::new();
    let mut current = expr;
    loop {
        match &***current {
            Expr::AssociatedItem(inner, item) if item.generics.is_none() => {
                names.push(*item.name);
                current = inner;
            }
            Expr::Var(name) => {
                if *name != "self" {
                    names.push(*name);
                }
                names.reverse();
                let offset = current.span().byte_range().map_or(0, |r| r.start);
                return Some((names, offset));
            }
            _ => return None,
        }
    }
}

/// Collects the variables a template reads and every name it binds anywhere. Scopes are
/// ignored on purpose: a name bound anywhere counts as bound everywhere, so the check can
/// miss a typo (rustc still reports it) but never rejects a valid template.
#[derive(Default)]
struct Walk<'a> {
    bound: std::collections::BTreeMap<&'a str, usize>,
    used: Vec<(&'a str, usize)>,
    chains: Vec<(Vec<&'a str>, usize)>,
    loops: Vec<(&'a str, Vec<&'a str>)>,
    somes: Vec<(&'a str, Vec<&'a str>)>,
    /// `x is defined` drops code at compile time, so an unknown name may be fine.
    conditional: bool,
}

impl<'a> Walk<'a> {
    fn nodes(&mut self, nodes: &[Box<Node<'a>>]) -> Option<()> {
        nodes.iter().try_for_each(|node| self.node(node))
    }

    fn node(&mut self, node: &Node<'a>) -> Option<()> {
        match node {
            Node::Lit(_) | Node::Comment(_) | Node::Raw(_) | Node::Break(_) | Node::Continue(_) => {
            }
            Node::Expr(_, expr) => self.expr(expr),
            Node::Let(l) => {
                self.target(&l.var);
                match &l.val {
                    LetValueOrBlock::Value(value) => self.expr(value),
                    LetValueOrBlock::Block { nodes, .. } => self.nodes(nodes)?,
                }
            }
            Node::Declare(d) => self.bind(&d.var_name),
            Node::Compound(c) => {
                self.expr(&c.op.lhs);
                self.expr(&c.op.rhs);
            }
            Node::If(i) => {
                for branch in &i.branches {
                    if let Some(test) = &branch.cond {
                        test.target.iter().for_each(|t| self.target(t));
                        self.some(test.target.as_ref(), &test.expr);
                        self.expr(&test.expr);
                    }
                    self.nodes(&branch.nodes)?;
                }
            }
            Node::Match(m) => {
                self.expr(&m.expr);
                for arm in &m.arms {
                    arm.target.iter().for_each(|t| self.target(t));
                    self.nodes(&arm.nodes)?;
                }
            }
            Node::Loop(l) => {
                self.target(&l.var);
                self.bind("loop");
                if let (Target::Name(var), Some((iter, _))) = (&l.var, chain(&l.iter)) {
                    self.loops.push((**var, iter));
                }
                self.expr(&l.iter);
                l.cond.iter().for_each(|c| self.expr(c));
                self.nodes(&l.body)?;
                self.nodes(&l.else_nodes)?;
            }
            Node::FilterBlock(f) => {
                self.filter(&f.filters);
                self.nodes(&f.nodes)?;
            }
            // Names these bring in live in other templates or macro scopes.
            Node::Call(_)
            | Node::Extends(_)
            | Node::BlockDef(_)
            | Node::Include(_)
            | Node::Import(_)
            | Node::Macro(_) => return None,
        }
        Some(())
    }

    fn expr(&mut self, expr: &WithSpan<Box<Expr<'a>>>) {
        match &***expr {
            // `self` is the template struct itself.
            Expr::Var("self") => {}
            Expr::Var(name) => {
                let offset = expr.span().byte_range().map_or(0, |r| r.start);
                self.used.push((name, offset));
            }
            Expr::Array(items) | Expr::Tuple(items) | Expr::Concat(items) => {
                items.iter().for_each(|e| self.expr(e));
            }
            Expr::ArrayRepeat(a, b) | Expr::Index(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Expr::AssociatedItem(inner, _) => {
                match chain(expr) {
                    Some((names, offset)) if names.len() > 1 => {
                        self.used.push((names[0], offset));
                        self.chains.push((names, offset));
                    }
                    // `self.x` reads the field `x`.
                    Some((names, offset)) => {
                        self.used.extend(names.first().map(|n| (*n, offset)));
                    }
                    None => self.expr(inner),
                }
            }
            Expr::As(inner, _)
            | Expr::Unary(_, inner)
            | Expr::Group(inner)
            | Expr::Try(inner)
            | Expr::NamedArgument(_, inner) => self.expr(inner),
            Expr::Filter(filter) => self.filter(filter),
            Expr::BinOp(op) => {
                self.expr(&op.lhs);
                self.expr(&op.rhs);
            }
            Expr::Range(range) => range
                .lhs
                .iter()
                .chain(&range.rhs)
                .for_each(|e| self.expr(e)),
            Expr::Call(call) => {
                // `name(..)` is a method of the template struct (through `Deref`, the typed
                // input's), or a local closure: neither is a field.
                match &**call.path {
                    Expr::Var(_) => {}
                    // `x.len()`: `x` is read, `len` is a method.
                    Expr::AssociatedItem(inner, _) => self.expr(inner),
                    _ => self.expr(&call.path),
                }
                call.args.iter().for_each(|e| self.expr(e));
            }
            Expr::Struct(s) => {
                s.fields
                    .iter()
                    .filter_map(|f| f.value.as_ref())
                    .for_each(|e| self.expr(e));
                s.base.iter().for_each(|e| self.expr(e));
            }
            Expr::LetCond(test) => {
                test.target.iter().for_each(|t| self.target(t));
                self.some(test.target.as_ref(), &test.expr);
                self.expr(&test.expr);
            }
            Expr::BoolLit(_)
            | Expr::NumLit(..)
            | Expr::StrLit(_)
            | Expr::CharLit(_)
            | Expr::Path(_)
            | Expr::RustMacro(..)
            | Expr::FilterSource
            | Expr::ArgumentPlaceholder => {}
            Expr::IsDefined(_) | Expr::IsNotDefined(_) => self.conditional = true,
        }
    }

    /// `if let Some(s) = a.b`: `s` is the value inside the option `a.b`.
    fn some(&mut self, target: Option<&Target<'a>>, expr: &WithSpan<Box<Expr<'a>>>) {
        let Some(Target::Tuple(tuple)) = target else {
            return;
        };
        let (path, targets) = &**tuple;
        let is_some =
            matches!(path.as_slice(), [only] if *only.name == "Some" && only.generics.is_none());
        if let (true, [Target::Name(var)], Some((chain, _))) =
            (is_some, targets.as_slice(), chain(expr))
        {
            self.somes.push((**var, chain));
        }
    }

    fn bind(&mut self, name: &'a str) {
        *self.bound.entry(name).or_default() += 1;
    }

    fn filter(&mut self, filter: &Filter<'a>) {
        filter.arguments.iter().for_each(|e| self.expr(e));
    }

    fn target(&mut self, target: &Target<'a>) {
        match target {
            Target::Name(name) => self.bind(name),
            Target::Tuple(tuple) => tuple.1.iter().for_each(|t| self.target(t)),
            Target::Array(items) | Target::OrChain(items) => {
                items.iter().for_each(|t| self.target(t))
            }
            Target::Struct(s) => s.1.iter().for_each(|field| self.target(&field.dest)),
            Target::Rest(rest) => {
                if let Some(name) = &**rest {
                    self.bind(name);
                }
            }
            Target::NumLit(..)
            | Target::StrLit(_)
            | Target::CharLit(_)
            | Target::BoolLit(_)
            | Target::Path(_)
            | Target::Placeholder(_) => {}
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let before = source.get(..offset).unwrap_or(source);
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .count()
        + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown(source: &str) -> Option<Vec<&str>> {
        let known = ["task", "target_url", "items"];
        unknown_names(source, &known).map(|u| u.into_iter().map(|u| u.name).collect())
    }

    #[test]
    fn reports_only_names_neither_known_nor_bound() {
        let source = "{{ task }} {{ target_ur }}\n{% for item in items %}{{ item.name }}\
                      {{ loop.index }}{% let x = 1 %}{{ x|markdown(y) }}{% endfor %}";
        assert_eq!(unknown(source), Some(vec!["target_ur", "y"]));
    }

    #[test]
    fn calls_and_paths_are_not_fields() {
        let source = "{{ helper(target_url) }}{{ CONST }}{{ a::b }}{{ self.task }}";
        assert_eq!(unknown(source), Some(vec![]));
    }

    #[test]
    fn skips_what_it_cannot_follow() {
        assert!(unknown("{% include \"x.md\" %}{{ nope }}").is_none());
        assert!(unknown("{% macro m(a) %}{{ a }}{% endmacro %}").is_none());
        assert!(unknown("{% for x in items %}").is_none());
        // The block is dropped at compile time when `z` is not a field.
        assert!(unknown("{% if z is defined %}{{ z }}{% endif %}").is_none());
    }

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_col("ab\ncé{{ x }}", 8), (2, 5));
        assert_eq!(line_col("{{ x }}", 3), (1, 4));
    }

    #[test]
    fn config_dirs_follow_askama() {
        assert_eq!(
            config_dirs("[general]\ndirs = [\"a\", \"../b\"]"),
            Some(vec!["a".into(), "../b".into()])
        );
        assert_eq!(config_dirs(""), Some(vec!["templates".into()]));
        assert_eq!(config_dirs("[general]\ndirs = [\"t/*\"]"), None);
        assert_eq!(config_dirs("[[syntax]]\nname = \"x\""), None);
    }
}
