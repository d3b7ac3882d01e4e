//! `#[derive(Workflow)]`: a workflow declared at compile time, its data flow checked
//! (`flow.rs`) when the crate compiles. Parse the attribute into a model that keeps each
//! step's literal (its span), check, then expand.
//!
//! A proc macro cannot see another derive's attributes, so the steps are named by their
//! agent folders under a schemas folder, the layout `agent_contracts_codegen::Builder` generates from;
//! `agents` names the module where their types are (`crate::agents`), so the expansion
//! can build the `Workflow` and type its handoffs. `collect = { field = ["step", ...] }`
//! gives the first step whose input declares `field` an array built from the named steps'
//! outputs (`flow/collect.rs` checks it, agent-core's `Workflow::collect` builds it).

use crate::derive::ctxt::Ctxt;
use crate::derive::keys::Keys;
use crate::flow::{self, Flow, FlowCollect, FlowReport};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use std::path::PathBuf;
use syn::{DeriveInput, LitStr};

const KEYS: [&str; 8] = [
    "name", "schemas", "input", "steps", "agents", "crate", "collect", "approve",
];

/// One `field = ["step", ...]` of `collect = { ... }`, with its literals.
struct CollectDecl {
    field: syn::Ident,
    from: Vec<LitStr>,
}

/// The `#[workflow(...)]` keys as written.
struct Attrs {
    name: Option<LitStr>,
    schemas: Option<LitStr>,
    input: Option<LitStr>,
    steps: Option<Vec<LitStr>>,
    agents: Option<LitStr>,
    krate: Option<LitStr>,
    collect: Vec<CollectDecl>,
    /// Steps whose every output a person approves, rejects or edits.
    approve: Vec<LitStr>,
    span: Option<Span>,
}

/// The checked declaration, each step with its literal.
struct Model {
    flow: Flow,
    spans: Vec<LitStr>,
    collect: Vec<CollectDecl>,
    agents: syn::Path,
    runtime: syn::Path,
    /// The steps with an approval, each checked to be a step with an output contract.
    approve: Vec<String>,
    /// Files read, tracked so that editing a contract re-checks the workflow.
    read: Vec<PathBuf>,
}

/// Expands `#[derive(Workflow)]`.
pub fn derive_workflow(input: &DeriveInput) -> TokenStream {
    let mut errors = Ctxt::default();
    if !matches!(&input.data, syn::Data::Struct(_)) || !input.generics.params.is_empty() {
        errors.at(
            input.ident.span(),
            "`Workflow` can only be derived for a struct without generics",
        );
    }
    let keys = Keys::parse(&input.attrs, "workflow", &KEYS, &mut errors);
    let attrs = Attrs {
        name: keys.str("name", &mut errors),
        schemas: keys.str("schemas", &mut errors),
        input: keys.str("input", &mut errors),
        steps: keys.str_list("steps", &mut errors),
        agents: keys.str("agents", &mut errors),
        krate: keys.str("crate", &mut errors),
        collect: keys
            .value("collect")
            .map(|v| collect_decls(v, &mut errors))
            .unwrap_or_default(),
        approve: keys.str_list("approve", &mut errors).unwrap_or_default(),
        span: keys.span,
    };
    let Some(model) = model(input, &attrs, &mut errors) else {
        let mut expanded = errors.into_compile_errors();
        expanded.extend(fallback(input, &attrs));
        return expanded;
    };
    let report = flow::check(&model.flow);
    for problem in &report.errors {
        let span = match problem.collect {
            Some(at) => {
                let decl = &model.collect[at.collect];
                at.item
                    .map_or_else(|| decl.field.span(), |i| decl.from[i].span())
            }
            None => model.spans[problem.step].span(),
        };
        errors.at(span, &problem.message);
    }
    let tracked = model.read.iter().map(|f| crate::schema::bundle::track(f));
    // After an error, the same items without the agents and the typed handoffs, so that code
    // using the workflow does not pile up errors of its own.
    let checked = !errors.has_errors();
    let mut expanded = errors.into_compile_errors();
    expanded.extend(expand(input, &model, &report, checked));
    expanded.extend(tracked);
    expanded
}

fn model(input: &DeriveInput, attrs: &Attrs, errors: &mut Ctxt) -> Option<Model> {
    let at = attrs.span.unwrap_or_else(Span::call_site);
    let need = |value: &Option<LitStr>, key: &str, example: &str, errors: &mut Ctxt| {
        if value.is_none() {
            errors.at(
                at,
                format!("missing `{key} = {example}` in `#[workflow(...)]`"),
            );
        }
    };
    need(&attrs.schemas, "schemas", "\"../schemas\"", errors);
    need(&attrs.agents, "agents", "\"crate::agents\"", errors);
    if attrs.steps.is_none() {
        errors.at(
            at,
            "missing `steps = [\"first_agent\", ...]` in `#[workflow(...)]`",
        );
    }
    let agents = attrs.agents.as_ref().and_then(|lit| path_of(lit, errors));
    let runtime = match &attrs.krate {
        None => Some(syn::parse_quote!(::agent_contracts)),
        Some(lit) => path_of(lit, errors),
    };
    let root = manifest_dir();
    let shown = attrs.schemas.as_ref()?.value();
    let schemas = root.join(&shown);
    let folders = flow::agent_folders(&schemas);
    if folders.is_empty() {
        let lit = attrs.schemas.as_ref()?;
        errors.at(lit.span(), format!("no agent folders in `{}`", lit.value()));
        return None;
    }
    let mut read = Vec::new();
    let spans = attrs.steps.clone()?;
    if spans.is_empty() {
        errors.at(at, "a workflow needs at least one step");
    }
    let mut steps = Vec::new();
    for lit in &spans {
        let agent = lit.value();
        if !folders.contains(&agent) {
            let mut message = format!("no agent folder `{agent}` in `{shown}`");
            if let Some(close) = crate::suggest::closest(&agent, folders.iter().map(String::as_str))
            {
                message.push_str(&format!(" (did you mean `{close}`?)"));
            }
            errors.at(lit.span(), message);
            continue;
        }
        match flow::load_step(&schemas, &agent, &mut read) {
            Ok(step) => steps.push(step),
            Err(problems) => problems.into_iter().for_each(|p| errors.at(lit.span(), p)),
        }
    }
    let flow_input = match &attrs.input {
        Some(lit) => match flow::load_contract(&root.join(lit.value()), &mut read) {
            Ok(contract) => Some(contract),
            Err(problems) => {
                problems.into_iter().for_each(|p| errors.at(lit.span(), p));
                return None;
            }
        },
        None => None,
    };
    check_approvals(&attrs.approve, &steps, errors);
    if errors.has_errors() {
        return None;
    }
    let name = attrs.name.as_ref().map_or_else(
        || crate::naming::agent_name(&input.ident.to_string()),
        LitStr::value,
    );
    let collects = attrs
        .collect
        .iter()
        .map(|d| FlowCollect {
            field: d.field.to_string(),
            from: d.from.iter().map(LitStr::value).collect(),
        })
        .collect();
    Some(Model {
        flow: Flow {
            name,
            input: flow_input,
            steps,
            agents: folders,
            collects,
        },
        spans,
        collect: attrs
            .collect
            .iter()
            .map(|d| CollectDecl {
                field: d.field.clone(),
                from: d.from.clone(),
            })
            .collect(),
        agents: agents?,
        runtime: runtime?,
        approve: attrs.approve.iter().map(LitStr::value).collect(),
        read,
    })
}

/// Each approved step is a step of the workflow, named once, with an output contract: an edit
/// is checked against it, so the steps after it get a value of that contract, as the
/// data-flow check assumes.
fn check_approvals(approve: &[LitStr], steps: &[flow::FlowStep], errors: &mut Ctxt) {
    for (i, lit) in approve.iter().enumerate() {
        let agent = lit.value();
        if approve[..i].iter().any(|earlier| earlier.value() == agent) {
            errors.at(lit.span(), format!("`{agent}` is approved twice"));
            continue;
        }
        match steps.iter().find(|s| s.agent == agent) {
            Some(step) if step.output.is_none() => errors.at(
                lit.span(),
                format!(
                    "`{agent}` has no output contract: an approval's edit is checked against it, so the approved step needs one"
                ),
            ),
            Some(_) => {}
            None => {
                let mut message = format!("`{agent}` is approved but is not a step of the workflow");
                if let Some(close) =
                    crate::suggest::closest(&agent, steps.iter().map(|s| s.agent.as_str()))
                {
                    message.push_str(&format!(" (did you mean `{close}`?)"));
                }
                errors.at(lit.span(), message);
            }
        }
    }
}

fn expand(input: &DeriveInput, model: &Model, report: &FlowReport, checked: bool) -> TokenStream {
    let ident = &input.ident;
    let runtime = &model.runtime;
    let agents = &model.agents;
    let name = &model.flow.name;
    let steps: Vec<&str> = model.flow.steps.iter().map(|s| s.agent.as_str()).collect();
    let types: Vec<syn::Ident> = steps
        .iter()
        .map(|s| format_ident!("{}", crate::naming::agent_type(s)))
        .collect();
    let undecided: Vec<String> = report.undecided.iter().map(|p| p.message.clone()).collect();
    // Every pair where a step reads an earlier step's output: the handoffs that can be typed.
    let mut feeds = Vec::new();
    for (c, consumer) in model.flow.steps.iter().enumerate() {
        let reads = consumer
            .input
            .schema
            .get("properties")
            .and_then(serde_json::Value::as_object);
        for (p, producer) in model.flow.steps.iter().enumerate().take(c) {
            if reads.is_some_and(|r| r.contains_key(&flow::output_key(&producer.agent))) {
                let (p, c) = (&types[p], &types[c]);
                feeds.push(quote! {
                    #[automatically_derived]
                    impl #runtime::__private::Feeds<#agents::#c, #ident> for #agents::#p {}
                });
            }
        }
    }
    // Each collect with its consumer, the descriptions indexed in declaration order.
    let mut described = 0usize;
    let mut collects = Vec::new();
    for (c, decl) in model.flow.collects.iter().enumerate() {
        let Some(consumer) = flow::collect_consumer(&model.flow, c) else {
            continue;
        };
        let consumer = &steps[consumer];
        let field = &decl.field;
        let items = decl.from.iter().map(|from| {
            let i = syn::Index::from(described);
            described += 1;
            quote!((#from, described[#i]))
        });
        let items: Vec<TokenStream> = items.collect();
        collects.push(quote!(.collect(#consumer, #field, [#(#items),*])));
    }
    let approve = &model.approve;
    let approvals = quote!(#(.approve(#approve, #runtime::__private::OnReject::End))*);
    let (members, feeds_bound) = if checked {
        (
            quote!(#(.agent(&#agents::#types))*),
            quote!(+ #runtime::__private::Feeds<Consumer, Self>),
        )
    } else {
        feeds.clear();
        (TokenStream::new(), TokenStream::new())
    };
    let shape = Shape {
        runtime,
        name,
        steps: &steps,
        undecided: &undecided,
        members,
        feeds_bound,
        described: model.flow.collects.iter().map(|c| c.from.len()).sum(),
        collects: quote!(#(#collects)* #approvals),
    };
    let items = items(ident, &shape);
    quote! {
        #items
        const _: () = {
            #(#feeds)*
        };
    }
}

/// What the generated inherent items are made of.
struct Shape<'a> {
    runtime: &'a syn::Path,
    name: &'a str,
    steps: &'a [&'a str],
    undecided: &'a [String],
    /// `.agent(&agents::X)` calls; none after an error.
    members: TokenStream,
    /// The `Feeds` bound of `handoff`; none after an error.
    feeds_bound: TokenStream,
    /// How many collected items need a description (the `workflow` function's second
    /// argument, when there are any).
    described: usize,
    /// `.collect(consumer, field, items)` and `.approve(step, OnReject::End)` calls.
    collects: TokenStream,
}

/// After an error that left no model: the items, unchecked, so that code using the
/// workflow compiles.
fn fallback(input: &DeriveInput, attrs: &Attrs) -> Option<TokenStream> {
    if !input.generics.params.is_empty() || !matches!(&input.data, syn::Data::Struct(_)) {
        return None;
    }
    let runtime: syn::Path = match &attrs.krate {
        Some(lit) => lit.parse().ok()?,
        None => syn::parse_quote!(::agent_contracts),
    };
    let name = attrs.name.as_ref().map_or_else(
        || crate::naming::agent_name(&input.ident.to_string()),
        LitStr::value,
    );
    let steps: Vec<String> = attrs.steps.iter().flatten().map(LitStr::value).collect();
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    let shape = Shape {
        runtime: &runtime,
        name: &name,
        steps: &steps,
        undecided: &[],
        members: TokenStream::new(),
        feeds_bound: TokenStream::new(),
        described: attrs.collect.iter().map(|d| d.from.len()).sum(),
        collects: TokenStream::new(),
    };
    Some(items(&input.ident, &shape))
}

fn items(ident: &syn::Ident, shape: &Shape<'_>) -> TokenStream {
    let Shape {
        runtime,
        name,
        steps,
        undecided,
        members,
        feeds_bound,
        described,
        collects,
    } = shape;
    let count = steps.len();
    // A collect's items need descriptions: a second argument, so that leaving them out does
    // not compile.
    let (described_param, described_doc) = if *described > 0 {
        (
            quote!(, described: [&str; #described]),
            quote!(#[doc = ""] #[doc = "`described` holds each collected item's `description`, in the order the `collect` names the steps."]),
        )
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #ident {
                /// The workflow's name.
                pub const NAME: &'static str = #name;
                /// The steps' agents, in the order they run.
                pub const STEPS: [&'static str; #count] = [#(#steps),*];
                /// What the compile-time check could not decide, one message each; the
                /// run-time contract checks still apply.
                pub const UNDECIDED: &'static [&'static str] = &[#(#undecided),*];

                /// The workflow: its agents, and the steps in order with their tasks.
                #described_doc
                pub fn workflow(tasks: [&str; #count] #described_param) -> #runtime::Workflow {
                    #runtime::Workflow::new(#name)
                        #members
                        .goal(::core::iter::Iterator::zip(
                            ::core::iter::IntoIterator::into_iter(Self::STEPS),
                            tasks,
                        ))
                        #collects
                }

                /// Checks `Producer`'s typed output before `Consumer` starts; only a pair
                /// whose consumer reads the producer's output compiles.
                pub fn handoff<Producer, Consumer>(
                    workflow: #runtime::Workflow,
                    validate: impl ::core::ops::Fn(&<Producer as #runtime::Agent>::Output)
                        -> ::core::result::Result<(), ::std::string::String>
                        + ::core::marker::Send + ::core::marker::Sync + 'static,
                ) -> #runtime::Workflow
                where
                    Producer: #runtime::Agent #feeds_bound,
                    Consumer: #runtime::Agent,
                {
                    workflow.handoff::<Producer, Consumer>(validate)
                }
            }
        };
    }
}

/// `{ field = ["step", ...]; other = [...] }`: each field a consumer's input field, each
/// list the steps whose outputs it collects.
fn collect_decls(value: &syn::Expr, errors: &mut Ctxt) -> Vec<CollectDecl> {
    use syn::spanned::Spanned;
    const SHAPE: &str =
        "expected `collect = { field = [\"step\", ...] }` (several fields separated by `;`)";
    let syn::Expr::Block(block) = value else {
        errors.at(value.span(), SHAPE);
        return Vec::new();
    };
    let mut out = Vec::new();
    for stmt in &block.block.stmts {
        let syn::Stmt::Expr(syn::Expr::Assign(assign), _) = stmt else {
            errors.at(stmt.span(), SHAPE);
            continue;
        };
        let field = match &*assign.left {
            syn::Expr::Path(p) if p.qself.is_none() => p.path.get_ident().cloned(),
            _ => None,
        };
        let Some(field) = field else {
            errors.at(
                assign.left.span(),
                "expected the consumer's input field, such as `collected_information`",
            );
            continue;
        };
        let syn::Expr::Array(list) = &*assign.right else {
            errors.at(assign.right.span(), SHAPE);
            continue;
        };
        let mut from = Vec::new();
        for elem in &list.elems {
            match elem {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => from.push(s.clone()),
                other => errors.at(other.span(), "expected a step's agent, as a string"),
            }
        }
        if out.iter().any(|d: &CollectDecl| d.field == field) {
            errors.at(field.span(), format!("`{field}` is collected twice"));
            continue;
        }
        out.push(CollectDecl { field, from });
    }
    out
}

fn path_of(lit: &LitStr, errors: &mut Ctxt) -> Option<syn::Path> {
    match lit.parse() {
        Ok(path) => Some(path),
        Err(_) => {
            errors.at(lit.span(), "expected a path, such as `crate::agents`");
            None
        }
    }
}

fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from)
}
