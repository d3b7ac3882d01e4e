//! The build-script front end: a module per agent folder, each in a `@generated` file of its
//! own, included by one file that also lists them (`AGENTS`).
//!
//! ```no_run
//! // in build.rs's `main`:
//! if let Err(e) = agent_contracts_codegen::Builder::new("../schemas").write_to_out_dir("agents.rs") {
//!     eprintln!("{e}");
//!     std::process::exit(1);
//! }
//! ```
//! and in the crate: `include!(concat!(env!("OUT_DIR"), "/agents.rs"));`

use crate::emit::agent::{AgentDef, PromptSource, SchemaSource, agent_impl, contract_module};
use proc_macro2::Span;
use quote::{ToTokens, format_ident, quote};

use crate::build::cache::{self, Cache, Entry, write_if_changed};
use crate::emit::types::on_big_stack;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Generates the agents of a `schemas/` folder: one folder per agent with
/// `input.schema.json`, optionally `output.schema.json`, and optionally `agent.json`
/// (`{"description": "...", "user_prompt": "agents/x_user.md"}`).
#[derive(Debug, Clone)]
pub struct Builder {
    /// The schemas folder as given to [`Builder::new`].
    given: PathBuf,
    schemas: PathBuf,
    /// The runtime crate's path, as text: generation runs on a thread of its own, which a
    /// `syn::Path` cannot reach.
    runtime: String,
    /// The crate whose askama folders hold the templates (its `CARGO_MANIFEST_DIR`).
    root: PathBuf,
    /// The eval datasets folder as given to [`Builder::evals`], if any.
    evals: Option<PathBuf>,
    /// The providers the agents are sent to ([`Builder::providers`]).
    providers: Vec<agent_contracts_schema::strict::Dialect>,
}

/// Everything that kept the folder from generating, all of it at once. Its `Debug` is its
/// `Display` (one `error: path:line:col: ...` line each), so a build script's `main` that
/// returns it with `?` prints the problems, not a struct.
pub struct BuildError(pub Vec<String>);

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.0 {
            writeln!(f, "error: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

/// The verdict on one agent folder, from [`Builder::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCheck {
    /// The agent's name (its folder's name).
    pub name: String,
    /// Every problem, each with its `file:line:col`; empty when the agent is fine.
    pub errors: Vec<String>,
    /// What the typing dropped (a `default` its schema refuses), located.
    pub warnings: Vec<String>,
    /// Per provider, whether the output contract fits its strict mode as written, after the
    /// lossless rewrite that is sent, or not (and why); empty without an output contract.
    pub strict: Vec<(
        agent_contracts_schema::strict::Dialect,
        agent_contracts_schema::strict::Strictness,
    )>,
    /// Per media field of the input contract and provider, whether the provider takes that
    /// media (`Err` says why not): a field a provider cannot take is refused here, not by a
    /// 400 at run time.
    pub media: Vec<(
        String,
        agent_contracts_schema::strict::Dialect,
        Result<(), String>,
    )>,
}

impl Builder {
    /// A builder over `schemas`, resolved against `CARGO_MANIFEST_DIR` when relative.
    pub fn new(schemas: impl AsRef<Path>) -> Self {
        let root = std::env::var_os("CARGO_MANIFEST_DIR")
            .map_or_else(|| PathBuf::from("."), PathBuf::from);
        Self {
            given: schemas.as_ref().to_path_buf(),
            schemas: root.join(schemas),
            runtime: "::agent_contracts".into(),
            root,
            evals: None,
            providers: Vec::new(),
        }
    }

    /// Checks the eval datasets of the folder `evals` (resolved like the schemas folder): each
    /// `<agent>.jsonl` against that agent's contracts, as [`Builder::check_evals`] does, in
    /// every generation and [`Builder::check`]. A problem fails the build at the dataset's
    /// `path:line:col`.
    pub fn evals(mut self, evals: impl AsRef<Path>) -> Self {
        self.evals = Some(evals.as_ref().to_path_buf());
        self
    }

    /// The eval datasets folder, resolved.
    fn evals_dir(&self) -> Option<PathBuf> {
        self.evals.as_ref().map(|dir| self.root.join(dir))
    }

    /// Checks every dataset of the [`Builder::evals`] folder (each `<agent>.jsonl`, one case a
    /// line) against its agent's contracts without generating anything: the kwargs against
    /// the input contract (unless the case expects them refused), each assertion's path
    /// against the output contract, each value against the schema at its path. Returns each
    /// dataset's agent and number of cases, in name order; the error lists every problem with
    /// its `path:line:col` and a did-you-mean.
    pub fn check_evals(&self) -> Result<Vec<(String, usize)>, BuildError> {
        let Some(dir) = self.evals_dir() else {
            return Err(BuildError(vec![
                "no evals folder: call `Builder::evals` first".into(),
            ]));
        };
        let mut read = Vec::new();
        let (counts, errors) = self.evals_here(&dir, &mut read);
        let errors: Vec<String> = errors.into_iter().map(|(_, e)| e).collect();
        if counts.is_empty() && errors.is_empty() {
            return Err(BuildError(vec![format!(
                "no dataset (`<agent>.jsonl`) in {}",
                dir.display()
            )]));
        }
        if errors.is_empty() {
            Ok(counts)
        } else {
            Err(BuildError(errors))
        }
    }

    /// Every dataset of `dir` checked: the case counts and every problem, with the agent it
    /// belongs to (`None`: the dataset names no agent, or the folder cannot be read).
    #[allow(clippy::type_complexity, reason = "one private helper's pair of lists")]
    fn evals_here(
        &self,
        dir: &Path,
        read: &mut Vec<PathBuf>,
    ) -> (Vec<(String, usize)>, Vec<(Option<String>, String)>) {
        let mut counts = Vec::new();
        let mut errors = Vec::new();
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                let message = format!("cannot read the evals folder {}: {e}", dir.display());
                return (counts, vec![(None, message)]);
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        let agents = self.agent_dirs().unwrap_or_default();
        for file in files {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let Some(agent_dir) = agents
                .iter()
                .find(|d| d.file_name().is_some_and(|n| n == stem.as_str()))
            else {
                let names: Vec<String> = agents
                    .iter()
                    .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect();
                let hint = crate::suggest::closest(&stem, names.iter().map(String::as_str))
                    .map_or_else(String::new, |n| format!("; did you mean `{n}.jsonl`?"));
                errors.push((
                    None,
                    format!(
                        "{}: no agent `{stem}` in the schemas folder {} (a dataset is named after its agent){hint}",
                        file.strip_prefix(&self.root).unwrap_or(&file).display(),
                        self.schemas.display()
                    ),
                ));
                continue;
            };
            // Shown relative to the crate (or the working folder of a tool), as typed.
            let origin = file
                .strip_prefix(&self.root)
                .unwrap_or(&file)
                .display()
                .to_string();
            match crate::evals::check_dataset(&file, &origin, agent_dir, read) {
                Ok(cases) => counts.push((stem, cases)),
                Err(problems) => {
                    errors.extend(problems.into_iter().map(|p| (Some(stem.clone()), p)));
                }
            }
        }
        (counts, errors)
    }

    /// Resolves the schemas folder (when given as a relative path) and the templates against
    /// `root` instead of `CARGO_MANIFEST_DIR` (for tools and tests that generate outside a
    /// build script).
    pub fn manifest_dir(mut self, root: impl AsRef<Path>) -> Self {
        let root = root.as_ref();
        self.schemas = root.join(&self.given);
        self.root = root.to_path_buf();
        self
    }

    /// The providers the agents are sent to: a media field of an input contract that one of
    /// them cannot take (Anthropic and audio, OpenAI and a PDF by URL) fails the build at the
    /// field, instead of a provider's 400 at run time. By default no provider is assumed
    /// (`agent-contract check --providers` still says which takes what).
    pub fn providers(
        mut self,
        providers: impl IntoIterator<Item = agent_contracts_schema::strict::Dialect>,
    ) -> Self {
        self.providers = providers.into_iter().collect();
        self
    }

    /// Names the runtime crate by another path (for crates that re-export `agent_contracts`).
    pub fn runtime(mut self, path: syn::Path) -> Self {
        self.runtime = path.to_token_stream().to_string();
        self
    }

    /// Generates the agents into `OUT_DIR` ([`Builder::write_to`]), prints
    /// `cargo:rerun-if-changed` for the folder and every file read, and the warnings as
    /// `cargo:warning`. Returns the path of `file_name`, the file the crate includes.
    pub fn write_to_out_dir(&self, file_name: &str) -> Result<PathBuf, BuildError> {
        let out_dir = std::env::var_os("OUT_DIR").ok_or_else(|| {
            BuildError(vec!["OUT_DIR is not set: call this from build.rs".into()])
        })?;
        let written = self.write_parts(Path::new(&out_dir), file_name)?;
        for warning in written.warnings {
            println!("cargo:warning={warning}");
        }
        println!("cargo:rerun-if-changed={}", self.schemas.display());
        for file in written.read {
            println!("cargo:rerun-if-changed={}", file.display());
        }
        Ok(written.path)
    }

    /// Generates the agents into `dir`, one file per agent, without printing anything:
    /// `dir/<file_name>` `include!`s them from the folder beside it named after its stem
    /// (`agents.rs`: `agents/<agent>.rs`) and holds `AGENTS`. Together they are the text of
    /// [`Builder::generate`]. A file is written only when its content changed, so an unchanged
    /// schema does not rebuild the crate. The folder also keeps an index of the agents as
    /// generated (`.index.json`): an agent whose schemas, `agent.json` and runtime path are as
    /// they were is not generated again (a template edit generates nothing; its template is
    /// checked against the input's fields as kept).
    pub fn write_to(&self, dir: &Path, file_name: &str) -> Result<PathBuf, BuildError> {
        self.write_parts(dir, file_name).map(|written| written.path)
    }

    fn write_parts(&self, dir: &Path, file_name: &str) -> Result<Written, BuildError> {
        let path = dir.join(file_name);
        let folder = parts_folder(&path);
        let parts_dir = path.with_file_name(&folder);
        let cache = Cache::read(&parts_dir);
        let generated = on_big_stack(|| self.generate_here(&cache))
            .unwrap_or_else(|e| Err(BuildError(vec![e])))?;
        let io = |e: String| BuildError(vec![e]);
        std::fs::create_dir_all(&parts_dir)
            .map_err(|e| io(format!("cannot create {}: {e}", parts_dir.display())))?;
        let same_agents = cache
            .names()
            .eq(generated.agents.iter().map(|a| a.name.as_str()));
        if !same_agents || generated.agents.iter().any(|a| a.body.is_some()) {
            cache::forget(&parts_dir);
        }
        let mut shared = String::from(HEADER);
        for agent in &generated.agents {
            if let Some(body) = &agent.body {
                let text = format!("{}{body}", agent_header(&agent.name));
                write_if_changed(&parts_dir.join(format!("{}.rs", agent.name)), &text)
                    .map_err(io)?;
            }
            shared.push_str(&format!("include!(\"{folder}/{}.rs\");\n", agent.name));
        }
        remove_stale(&parts_dir, &generated.agents);
        shared.push_str(&generated.registry);
        write_if_changed(&path, &shared).map_err(io)?;
        cache::write(
            &parts_dir,
            generated.agents.iter().map(|a| (a.name.as_str(), &a.entry)),
        )
        .map_err(io)?;
        Ok(Written {
            path,
            read: generated.read,
            warnings: generated.warnings,
        })
    }

    /// The generated text, as one file: deterministic, agents in name order. What
    /// [`Builder::write_to_out_dir`] writes, with each agent's file in place of its `include!`.
    pub fn generate(&self) -> Result<String, BuildError> {
        let generated = on_big_stack(|| self.generate_here(&Cache::default()))
            .unwrap_or_else(|e| Err(BuildError(vec![e])))?;
        let mut text = String::from(HEADER);
        for agent in &generated.agents {
            text.push_str(agent.body.as_deref().unwrap_or_default());
        }
        text.push_str(&generated.registry);
        Ok(text)
    }

    /// The media fields of `def`'s input that a provider of [`Builder::providers`] cannot
    /// take, each an error at its `file:line:col`.
    fn refused_media(&self, def: &AgentDef) -> Vec<String> {
        if self.providers.is_empty() {
            return Vec::new();
        }
        let text = &def.input.text;
        crate::typify::media::verdicts(text)
            .into_iter()
            .filter(|(_, dialect, _)| self.providers.contains(dialect))
            .filter_map(|(field, dialect, verdict)| {
                let why = verdict.err()?;
                let pointer = format!(
                    "/properties/{}",
                    field.replace('~', "~0").replace('/', "~1")
                );
                let message = format!(
                    "the media field `{field}` cannot be sent to {}: it {why}",
                    dialect.name()
                );
                let error = crate::error::SchemaError::new(&def.input.origin, &pointer, message)
                    .at(crate::schema::locate::locate(text, &pointer));
                Some(error.to_string())
            })
            .collect()
    }

    /// Every agent's code (those the cache holds as they are left out), on the current thread.
    fn generate_here(&self, cache: &Cache) -> Result<Generated, BuildError> {
        let mut errors = Vec::new();
        let mut read = Vec::new();
        let mut defs = BTreeMap::new();
        for dir in self.agent_dirs().map_err(|e| BuildError(vec![e]))? {
            match self.load(&dir, &mut read) {
                Ok(def) => {
                    defs.insert(def.name.clone(), def);
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        let mut parts = Vec::new();
        for def in defs.values() {
            read.extend(crate::emit::prompt::prompt_files(def, &self.root));
            // Checked on every build, cached or not: the providers are no part of the cache key.
            let refused = self.refused_media(def);
            if !refused.is_empty() {
                errors.extend(refused);
                continue;
            }
            let fingerprint = cache::fingerprint(def);
            let (entry, items) = match cache.fresh(&def.name, fingerprint) {
                Some(entry) => (entry.clone(), None),
                None => match agent_items(def, fingerprint) {
                    Ok((entry, items)) => (entry, Some(items)),
                    Err(mut e) => {
                        errors.append(&mut e);
                        continue;
                    }
                },
            };
            // The same template check the derive runs: a typo in a template is reported
            // with its `path:line:col`, not as an error in generated code.
            let typos =
                crate::emit::prompt::prompt_errors(def, entry.fields.as_deref(), &self.root);
            if !typos.is_empty() {
                errors.extend(typos.into_iter().map(|(_, message)| message));
                continue;
            }
            parts.push((def, entry, items));
        }
        if let Some(dir) = self.evals_dir() {
            let (_, problems) = self.evals_here(&dir, &mut read);
            errors.extend(problems.into_iter().map(|(_, e)| e));
        }
        if !errors.is_empty() {
            return Err(BuildError(errors));
        }
        let signatures = parts
            .iter()
            .map(|(def, entry, _)| (def.name.clone(), entry.signature.clone()))
            .collect();
        let mut plan = crate::build::shared_types::plan(&signatures);
        let mut agents = Vec::new();
        let mut registry = Vec::new();
        let mut warnings = Vec::new();
        for (def, mut entry, items) in parts {
            let uses = plan.uses.remove(&def.name).unwrap_or_default();
            warnings.extend(plan.copies.remove(&def.name).unwrap_or_default());
            let items = match items {
                Some(items) => Some(items),
                None if uses == entry.uses => None,
                // Unchanged, but the types it shares are not: generated again.
                None => Some(agent_items(def, entry.fingerprint).map_err(BuildError)?.1),
            };
            entry.uses = uses;
            let body = items.map(|mut items| {
                crate::build::shared_types::apply(&mut items, &entry.uses);
                unparse(items)
            });
            warnings.extend(entry.warnings.iter().cloned());
            registry.push(format_ident!("{}", crate::naming::agent_type(&def.name)));
            agents.push(GeneratedAgent {
                name: def.name.clone(),
                body,
                entry,
            });
        }
        let runtime = self.runtime_path();
        let registry = unparse(vec![syn::parse_quote! {
            /// Every agent of the folder, in name order.
            #[allow(dead_code, reason = "a crate that names its agents one by one needs no list")]
            pub static AGENTS: &[&dyn #runtime::DynAgent] = &[#(&#registry),*];
        }]);
        Ok(Generated {
            agents,
            registry,
            read,
            warnings,
        })
    }

    /// Checks every agent folder without writing anything: per agent, in name order, every
    /// problem (schema, `agent.json`, template) with its `file:line:col`, and the warnings.
    /// This is what a build would report, for tools such as `agent-contract check`.
    pub fn check(&self) -> Result<Vec<AgentCheck>, BuildError> {
        on_big_stack(|| self.check_here()).unwrap_or_else(|e| Err(BuildError(vec![e])))
    }

    /// [`Builder::check`] on the current thread.
    fn check_here(&self) -> Result<Vec<AgentCheck>, BuildError> {
        let dirs = self.agent_dirs().map_err(|e| BuildError(vec![e]))?;
        let mut out = Vec::new();
        let mut signatures = BTreeMap::new();
        for dir in dirs {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut check = AgentCheck {
                name,
                errors: Vec::new(),
                warnings: Vec::new(),
                strict: Vec::new(),
                media: Vec::new(),
            };
            match self.load(&dir, &mut Vec::new()) {
                Err(errors) => check.errors = errors,
                Ok(def) => match contract_module(&def) {
                    Ok(code) => {
                        let items = [syn::Item::Mod(code.module.clone())];
                        signatures.insert(
                            def.name.clone(),
                            crate::build::shared_types::signature(&items),
                        );
                        if let Some(output) = &def.output {
                            check.strict = crate::emit::strict::verdicts(&output.text);
                        }
                        check.media = crate::typify::media::verdicts(&def.input.text);
                        check.warnings = code.warnings.iter().map(ToString::to_string).collect();
                        check.errors = crate::emit::prompt::prompt_errors(
                            &def,
                            code.input_fields.as_deref(),
                            &self.root,
                        )
                        .into_iter()
                        .map(|(_, message)| message)
                        .collect();
                    }
                    Err(located) => {
                        check.errors = located.into_iter().map(|(_, e)| e.to_string()).collect();
                    }
                },
            }
            out.push(check);
        }
        // The types the build would share, and the copies it would warn about.
        let mut copies = crate::build::shared_types::plan(&signatures).copies;
        for check in &mut out {
            check
                .warnings
                .extend(copies.remove(&check.name).unwrap_or_default());
        }
        if let Some(dir) = self.evals_dir() {
            let (_, errors) = self.evals_here(&dir, &mut Vec::new());
            for (agent, error) in errors {
                // A dataset's problem belongs to its agent's verdict; one naming no agent
                // fails the check as a whole.
                let owner = out.iter_mut().find(|c| agent.as_ref() == Some(&c.name));
                match owner {
                    Some(check) => check.errors.push(error),
                    None => return Err(BuildError(vec![error])),
                }
            }
        }
        Ok(out)
    }

    /// Checks the data flow of a workflow over this folder's agents, the check
    /// `#[derive(Workflow)]` runs: `steps` are agent folders in the order they run, `input`
    /// the run's input contract (relative to the crate, like the schemas folder). Every
    /// error names the step and the field; the report's `undecided` lists what the check
    /// could not decide (a build script can print them as `cargo:warning`).
    pub fn check_workflow(
        &self,
        steps: &[&str],
        input: Option<&Path>,
    ) -> Result<crate::flow::FlowReport, BuildError> {
        self.check_workflow_collecting(steps, input, &[])
    }

    /// [`Builder::check_workflow`] with the derive's `collect`: each `(field, producers)` is
    /// a field a step gets as the array of the named earlier steps' outputs, checked as
    /// `#[derive(Workflow)]` checks it (each producer runs before the consumer, each item fits
    /// the field's item schema, the count fits `minItems`/`maxItems`).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), agent_contracts_codegen::BuildError> {
    /// agent_contracts_codegen::Builder::new("schemas").check_workflow_collecting(
    ///     &["discovery_agent", "selector_agent", "plan_generator_agent"],
    ///     None,
    ///     &[("collected_information", &["discovery_agent", "selector_agent"])],
    /// )?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn check_workflow_collecting(
        &self,
        steps: &[&str],
        input: Option<&Path>,
        collects: &[(&str, &[&str])],
    ) -> Result<crate::flow::FlowReport, BuildError> {
        let mut read = Vec::new();
        let mut errors = Vec::new();
        let mut loaded = Vec::new();
        for step in steps {
            match crate::flow::load_step(&self.schemas, step, &mut read) {
                Ok(step) => loaded.push(step),
                Err(problems) => {
                    errors.extend(problems.iter().map(|p| format!("step `{step}`: {p}")))
                }
            }
        }
        let input = input.and_then(|path| {
            crate::flow::load_contract(&self.root.join(path), &mut read)
                .map_err(|problems| errors.extend(problems.iter().map(ToString::to_string)))
                .ok()
        });
        if !errors.is_empty() {
            return Err(BuildError(errors));
        }
        let flow = crate::flow::Flow {
            name: String::new(),
            input,
            steps: loaded,
            agents: crate::flow::agent_folders(&self.schemas),
            collects: collects
                .iter()
                .map(|(field, from)| crate::flow::FlowCollect {
                    field: (*field).to_owned(),
                    from: from.iter().map(|s| (*s).to_owned()).collect(),
                })
                .collect(),
        };
        let report = crate::flow::check(&flow);
        if report.errors.is_empty() {
            Ok(report)
        } else {
            Err(BuildError(
                report.errors.into_iter().map(|p| p.message).collect(),
            ))
        }
    }

    fn agent_dirs(&self) -> Result<Vec<PathBuf>, String> {
        let entries = std::fs::read_dir(&self.schemas)
            .map_err(|e| format!("cannot read schemas folder {}: {e}", self.schemas.display()))?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("input.schema.json").is_file())
            .collect();
        dirs.sort();
        Ok(dirs)
    }

    fn load(&self, dir: &Path, read: &mut Vec<PathBuf>) -> Result<AgentDef, Vec<String>> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        crate::emit::agent::check_agent_name(&name)
            .map_err(|message| vec![format!("{}: {message}", dir.display())])?;
        let meta = read_meta(dir, read)?;
        let input = read_source(&dir.join("input.schema.json"), read)?;
        let output_path = dir.join("output.schema.json");
        let output = if output_path.is_file() {
            Some(read_source(&output_path, read)?)
        } else {
            None
        };
        Ok(AgentDef {
            name,
            description: meta.description,
            input,
            output,
            user_prompt: meta.user_prompt.map(|path| PromptSource {
                path,
                span: Span::call_site(),
            }),
            runtime: self.runtime_path(),
        })
    }

    fn runtime_path(&self) -> syn::Path {
        syn::parse_str(&self.runtime).expect("a printed path parses")
    }
}

#[derive(Default)]
struct Meta {
    description: String,
    user_prompt: Option<String>,
}

fn read_meta(dir: &Path, read: &mut Vec<PathBuf>) -> Result<Meta, Vec<String>> {
    let path = dir.join("agent.json");
    // Only an existing file is tracked: cargo counts a missing one as changed on every build;
    // the folder's own `rerun-if-changed` notices one being added.
    if path.is_file() {
        read.push(path.clone());
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(Meta::default());
    };
    let bad = |m: String| vec![format!("{}: {m}", path.display())];
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let Some(object) = value.as_object() else {
        return Err(bad("expected an object".into()));
    };
    let mut meta = Meta::default();
    for (key, v) in object {
        match (key.as_str(), v.as_str()) {
            ("description", Some(s)) => meta.description = s.to_owned(),
            ("user_prompt", Some(s)) => meta.user_prompt = Some(s.to_owned()),
            _ => {
                return Err(bad(format!(
                    "unknown or non-string key `{key}`, expected `description` or `user_prompt`"
                )));
            }
        }
    }
    Ok(meta)
}

/// The contract file at `path` (`<schemas>/<agent>/input.schema.json` or
/// `output.schema.json`) as a build reads it: each `$ref` to a sibling contract file of the
/// schemas folder bundled into its `$defs`, so the text stands alone (for tools that read a
/// schemas folder at run time, such as `agent-contract`). The error lists every problem,
/// each with the `path:line:col` of its `$ref`.
///
/// ```
/// let schemas = std::env::temp_dir().join(format!("read-contract-{}", std::process::id()));
/// for agent in ["a", "b"] {
///     std::fs::create_dir_all(schemas.join(agent)).unwrap();
/// }
/// std::fs::write(
///     schemas.join("b/output.schema.json"),
///     r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#,
/// )
/// .unwrap();
/// let input = schemas.join("a/input.schema.json");
/// std::fs::write(
///     &input,
///     r#"{"type": "object", "properties": {"b": {"$ref": "../b/output.schema.json"}}}"#,
/// )
/// .unwrap();
/// let text = agent_contracts_codegen::read_contract(&input).unwrap();
/// let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
/// let target = schema["properties"]["b"]["$ref"].as_str().unwrap();
/// assert!(target.starts_with("#/$defs/"), "{target}");
/// std::fs::remove_dir_all(&schemas).unwrap();
/// ```
pub fn read_contract(path: &Path) -> Result<String, Vec<String>> {
    read_source(path, &mut Vec::new()).map(|source| source.text)
}

fn read_source(path: &Path, read: &mut Vec<PathBuf>) -> Result<SchemaSource, Vec<String>> {
    read.push(path.to_path_buf());
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![format!("cannot read {}: {e}", path.display())])?;
    let (text, sources) = match crate::schema::bundle::bundle(&text, path, &origin_of(path)) {
        Ok(None) => (text, Vec::new()),
        Ok(Some(bundled)) => {
            read.extend(bundled.files);
            (bundled.text, bundled.sources)
        }
        Err(problems) => return Err(problems.iter().map(ToString::to_string).collect()),
    };
    Ok(SchemaSource {
        text,
        origin: origin_of(path),
        include: None,
        span: Span::call_site(),
        sources,
    })
}

/// `.../schemas/plan_generator_agent/input.schema.json` -> `plan_generator_agent/input.schema.json`:
/// messages and generated docs stay the same on every machine.
fn origin_of(path: &Path) -> String {
    let parts: Vec<String> = path
        .iter()
        .rev()
        .take(2)
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// The first line of the file that includes the agents', and of what `generate` returns.
const HEADER: &str = "// @generated by agent-codegen from the schemas folder. Do not edit.\n\n";

fn agent_header(name: &str) -> String {
    format!("// @generated by agent-codegen from the schemas folder's `{name}`. Do not edit.\n\n")
}

/// The name of the folder of the agents' files, beside the file that includes them: its
/// stem (`agents.rs`: `agents`), or its name and `.d` if it has no extension.
fn parts_folder(path: &Path) -> String {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    match (path.extension(), path.file_stem()) {
        (Some(_), Some(stem)) => stem.to_string_lossy().into_owned(),
        _ => format!("{name}.d"),
    }
}

/// What [`Builder::write_parts`] wrote, for the build script to print.
struct Written {
    path: PathBuf,
    read: Vec<PathBuf>,
    warnings: Vec<String>,
}

/// The folder's code, as text: syntax trees stay on the thread that made them.
struct Generated {
    /// In name order.
    agents: Vec<GeneratedAgent>,
    /// The `AGENTS` static.
    registry: String,
    read: Vec<PathBuf>,
    warnings: Vec<String>,
}

struct GeneratedAgent {
    name: String,
    /// The agent's code; `None` when the file written last time is current.
    body: Option<String>,
    entry: Entry,
}

/// One agent's items (its contract module, its unit struct and `Agent` impl) before the
/// shared types are shared, and what the cache keeps of them.
fn agent_items(def: &AgentDef, fingerprint: u64) -> Result<(Entry, Vec<syn::Item>), Vec<String>> {
    let code = contract_module(def).map_err(|located| {
        located
            .into_iter()
            .map(|(_, e)| e.to_string())
            .collect::<Vec<_>>()
    })?;
    let ident = format_ident!("{}", crate::naming::agent_type(&def.name));
    let doc = format!("The `{}` agent.", def.name);
    let agent_impl = agent_impl(def, &code, &quote!(#ident));
    let fields = code.input_fields.clone();
    let warnings = code.warnings.iter().map(ToString::to_string).collect();
    let items = vec![
        syn::Item::Mod(code.module),
        syn::parse_quote! {
            #[doc = #doc]
            #[derive(Debug, Clone, Copy, Default)]
            pub struct #ident;
        },
        syn::parse_quote!(#agent_impl),
    ];
    let entry = Entry {
        fingerprint,
        fields,
        warnings,
        signature: crate::build::shared_types::signature(&items),
        uses: Default::default(),
    };
    Ok((entry, items))
}

fn unparse(items: Vec<syn::Item>) -> String {
    prettyplease::unparse(&syn::File {
        shebang: None,
        frontmatter: None,
        attrs: Vec::new(),
        items,
    })
}

/// Removes the agents' files of agents the folder no longer has.
fn remove_stale(dir: &Path, agents: &[GeneratedAgent]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(Result::ok).map(|e| e.path()) {
        let stale = path.extension().is_some_and(|e| e == "rs")
            && path
                .file_stem()
                .is_some_and(|stem| !agents.iter().any(|a| stem == a.name.as_str()));
        if stale {
            let _ = std::fs::remove_file(path);
        }
    }
}
