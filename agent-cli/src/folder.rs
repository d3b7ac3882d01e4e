//! A user's contracts, read at run time from a folder of agent folders (the build-script
//! layout: `<agent>/input.schema.json`, optionally `output.schema.json` and `agent.json`),
//! for every subcommand but `check` (which runs the build script's checks instead). No code is
//! generated: calls are checked against the schemas, not typed, and the user prompt is the
//! default one (the task, then the context as JSON), since a template is compiled with the
//! crate that owns it.

use agent_contracts::contract::{MediaForm, MediaInput, MediaSpec};
use agent_contracts::{CheckedOutput, DynAgent, contract::PrepareError, contract::PreparedCall};
use agent_contracts::{
    Contract, Limits, RetryError, contract::ContractKind, contract::ToolCall,
    contract::ToolDefinition,
};
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
    /// The input contract's media fields, as the codegen would type them.
    media: &'static [MediaSpec],
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
        let input_text =
            agent_contracts_codegen::read_contract(&input_path).map_err(|e| e.join("; "))?;
        let input = contract(name, ContractKind::Input, &input_path)?;
        let output_path = dir.join("output.schema.json");
        let output = output_path
            .is_file()
            .then(|| contract(name, ContractKind::Output, &output_path))
            .transpose()?;
        let meta = meta(&dir.join("agent.json"))?;
        let media = Box::leak(media_specs(&input_text).into_boxed_slice());
        Ok(Self {
            name: Box::leak(name.into()),
            description: Box::leak(meta.description.into_boxed_str()),
            input: Box::leak(Box::new(input)),
            output: output.map(|output| &*Box::leak(Box::new(output))),
            template: meta.template,
            media,
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
        if self.media.is_empty() {
            let user_prompt = agent_contracts::__private::default_call_prompt(&call);
            let user_prompt = agent_contracts::__private::bounded_prompt(user_prompt, limits)?;
            return Ok(PreparedCall::new(call, user_prompt));
        }
        // Each media field the call holds, checked as a generated input checks it.
        let mut values: Vec<Option<MediaInput>> = Vec::with_capacity(self.media.len());
        for spec in self.media {
            let value = call.entries().find(|(key, _)| *key == spec.name);
            let Some(mut input) =
                value.and_then(|(_, raw)| serde_json::from_str::<MediaInput>(raw).ok())
            else {
                values.push(None);
                continue;
            };
            input
                .check(spec, limits)
                .map_err(|e| e.with_required(self.input.required_fields()))?;
            values.push(Some(input));
        }
        let fields: Vec<Option<&MediaInput>> = values.iter().map(Option::as_ref).collect();
        let text = agent_contracts::__private::default_media_prompt(&call, self.media, &fields);
        let placed: Vec<&MediaInput> = fields.iter().flatten().copied().collect();
        let (user_prompt, media) = agent_contracts::__private::place_media(&text, &placed);
        let user_prompt = agent_contracts::__private::bounded_prompt(user_prompt, limits)?;
        Ok(PreparedCall::new(call, user_prompt).with_media(media))
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

/// The media fields of an input contract's top-level properties, in its order: names and media
/// types leaked, as the contracts are (an agent is loaded once).
fn media_specs(text: &str) -> Vec<MediaSpec> {
    agent_contracts_codegen::media_properties(text)
        .into_iter()
        .map(|(name, accepts, base64)| {
            let form = if base64 {
                MediaForm::Base64
            } else {
                MediaForm::Uri
            };
            let name: &'static str = Box::leak(name.into_boxed_str());
            let accepts: &'static str = Box::leak(accepts.into_boxed_str());
            MediaSpec::new(name, accepts, form)
        })
        .collect()
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
