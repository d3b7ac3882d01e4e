//! A user's contracts, read at run time from a folder of agent folders (the build-script
//! layout: `<agent>/input.schema.json`, optionally `output.schema.json` and `agent.json`),
//! for every subcommand but `check` (which runs the build script's checks instead). No code is
//! generated: calls are checked against the schemas, not typed, and the user prompt is the
//! default one (the task, then the context as JSON), since a template is compiled with the
//! crate that owns it.

use agent_contracts::{CheckedOutput, DynAgent, PrepareError, PreparedCall};
use agent_contracts::{Contract, ContractKind, Limits, RetryError, ToolCall, ToolDefinition};
use serde_json::Value;
use std::path::Path;

/// One agent folder's contracts. It is a [`DynAgent`], whose names and contracts live for the
/// whole process: [`UserAgent::load`] leaks them, so load each agent once (a CLI loads them at
/// start).
#[derive(Debug)]
pub struct UserAgent {
    name: &'static str,
    description: &'static str,
    input: &'static Contract,
    output: Option<&'static Contract>,
    /// The template `agent.json` names (`user_prompt`), which only a build renders.
    template: Option<String>,
}

impl UserAgent {
    /// Reads the agent `name` of the folder `schemas`. The error says which file is wrong,
    /// or, for a name that is no agent of the folder, which names are.
    pub fn load(schemas: &Path, name: &str) -> Result<Self, String> {
        let dir = schemas.join(name);
        let input_path = dir.join("input.schema.json");
        // A name is one folder: `a/../b` or an absolute path would read outside `schemas`.
        let plain = Path::new(name).components().count() == 1
            && matches!(
                Path::new(name).components().next(),
                Some(std::path::Component::Normal(_))
            );
        if !plain || !input_path.is_file() {
            let known = Self::names(schemas)?;
            return Err(format!(
                "unknown agent `{name}` in {}; known agents: {}",
                schemas.display(),
                known.join(", ")
            ));
        }
        let input = contract(name, ContractKind::Input, &input_path)?;
        let output_path = dir.join("output.schema.json");
        let output = output_path
            .is_file()
            .then(|| contract(name, ContractKind::Output, &output_path))
            .transpose()?;
        let meta = meta(&dir.join("agent.json"))?;
        Ok(Self {
            name: Box::leak(name.into()),
            description: Box::leak(meta.description.into_boxed_str()),
            input: Box::leak(Box::new(input)),
            output: output.map(|output| &*Box::leak(Box::new(output))),
            template: meta.template,
        })
    }

    /// The prompt template `agent.json` names, if any: a build renders it, this reading of the
    /// folder renders the default prompt instead.
    pub fn template(&self) -> Option<&str> {
        self.template.as_deref()
    }

    /// Every agent of the folder `schemas` (each subfolder with an `input.schema.json`), by
    /// name. The error says which file is wrong.
    pub fn load_all(schemas: &Path) -> Result<Vec<Self>, String> {
        Self::names(schemas)?
            .iter()
            .map(|name| Self::load(schemas, name))
            .collect()
    }

    /// The names of the folder's agents (its subfolders with an `input.schema.json`), sorted;
    /// an error if it has none.
    pub fn names(schemas: &Path) -> Result<Vec<String>, String> {
        let entries = std::fs::read_dir(schemas)
            .map_err(|e| format!("cannot read the folder {}: {e}", schemas.display()))?;
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.path().join("input.schema.json").is_file())
            .filter_map(|entry| entry.file_name().into_string().ok())
            .collect();
        names.sort();
        if names.is_empty() {
            return Err(format!(
                "no agent in {}: an agent is a folder with an `input.schema.json`",
                schemas.display()
            ));
        }
        Ok(names)
    }
}

impl DynAgent for UserAgent {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn input_contract(&self) -> &'static Contract {
        self.input
    }

    fn output_contract(&self) -> Option<&'static Contract> {
        self.output
    }

    fn prepare(&self, kwargs: &str, limits: &Limits) -> Result<PreparedCall, PrepareError> {
        let call = self.validate(kwargs, limits)?;
        self.prepare_call(call, limits)
    }

    /// The kwargs parsed within `limits` and checked against the input contract, the retry
    /// error in the caller's order and naming the contract's required fields.
    fn validate(&self, kwargs: &str, limits: &Limits) -> Result<ToolCall, RetryError> {
        let call = ToolCall::from_json_str(kwargs, limits)
            .map_err(|e| e.with_required(self.input.required_fields()))?;
        self.input.check_call(&call, limits)?;
        Ok(call)
    }

    fn prepare_call(&self, call: ToolCall, limits: &Limits) -> Result<PreparedCall, PrepareError> {
        let user_prompt = agent_contracts::__private::default_call_prompt(&call);
        let user_prompt = agent_contracts::__private::bounded_prompt(user_prompt, limits)?;
        Ok(PreparedCall { call, user_prompt })
    }

    /// The answer checked against the output contract (any JSON without one); its typed form
    /// is the JSON itself.
    fn check_output(&self, answer: &Value, limits: &Limits) -> Result<CheckedOutput, RetryError> {
        if let Some(contract) = self.output {
            contract.check(answer, limits)?;
        }
        Ok(CheckedOutput::new(answer.clone(), answer.clone()))
    }

    fn tool_definition(&self) -> ToolDefinition {
        ToolDefinition::for_contract(self.name, self.description, self.input)
    }
}

/// The contract at `path`, its `$ref`s to sibling contracts of the folder bundled in as a
/// build bundles them.
fn contract(name: &str, kind: ContractKind, path: &Path) -> Result<Contract, String> {
    let text = agent_contracts_codegen::read_contract(path).map_err(|e| e.join("; "))?;
    Contract::from_json_str(name, kind, &text).map_err(|e| format!("{}: {e}", path.display()))
}

/// What `agent.json` says, when the file exists.
#[derive(Default)]
struct Meta {
    description: String,
    template: Option<String>,
}

/// The `description` and `user_prompt` of `agent.json`, if the file exists (`check` reports
/// any other key as a build would).
fn meta(path: &Path) -> Result<Meta, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(Meta::default());
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let text_of = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(Meta {
        description: text_of("description").unwrap_or_default(),
        template: text_of("user_prompt"),
    })
}
