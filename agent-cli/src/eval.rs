//! `agent-contract eval`: the datasets of a folder (`<agent>.jsonl`, one case a line) run
//! through their agents on a model, or on recorded answers, after the build's check of every
//! dataset against its contracts. Reports: markdown on stdout, JUnit XML, JSON.

use crate::convention::{Failure, ProviderEnv};
use crate::folder::UserAgent;
use agent_contracts::eval::{
    AssertionFailure, Case, CaseModel, Judge, Recording, Verdict, run_case,
};
use agent_contracts::model::{Price, Prices, Usage};
use agent_contracts::{ChatModel, DynAgent};
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The flags of `eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// The folder of datasets, one `<agent>.jsonl` per agent of `--schemas`
    #[arg(value_name = "EVALS_DIR")]
    pub evals: PathBuf,
    /// The model the agents run on: `openai:<model>`, `azure:<deployment>`,
    /// `anthropic:<model>` or a comma-separated list; not needed with `--replay`
    #[arg(
        long,
        value_name = "PROVIDER:MODEL",
        required_unless_present = "replay"
    )]
    pub model: Option<String>,
    /// How many cases run at once
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
    /// Run each case N times: its verdict is its worst run, with its pass rate
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Write the report as JUnit XML to FILE
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the report as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Prices per model, per million tokens: `{"gpt-4o": {"input": 2.5, "output": 10}}`
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// A previous `--json` report: exit 1 only when a case that passed there fails or
    /// errors now
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Save every model answer, keyed by case, run, call and its prompt's hash, to FILE
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Answer from a recording (`--record`) instead of a model: offline; each case whose
    /// prompt changed since is marked
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    pub replay: Option<PathBuf>,
    /// The model that decides `judge` assertions; without it they are skipped, and said so
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub judge_model: Option<String>,
    #[command(flatten)]
    pub providers: ProviderEnv,
}

/// One case of one agent, as the report has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseReport {
    pub agent: String,
    pub name: String,
    pub verdict: Verdict,
    pub failures: Vec<AssertionFailure>,
    pub error: Option<String>,
    pub tokens: Tokens,
    pub cost: Option<f64>,
    pub prompt_changed: bool,
    pub judged: bool,
    /// Each judge's rubric, decision and reason.
    #[serde(default)]
    pub judgements: Vec<agent_contracts::eval::Judgement>,
    /// Judge assertions not asked, for want of `--judge-model`.
    #[serde(default)]
    pub judges_skipped: usize,
    pub runs: u32,
    pub passes: u32,
    pub pass_rate: f64,
}

/// Tokens used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
}

/// The whole report: every case, in agent and dataset order, and the totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub cases: Vec<CaseReport>,
    pub total: Total,
}

/// The totals of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Total {
    pub cases: usize,
    pub pass: usize,
    pub fail: usize,
    pub error: usize,
    pub tokens: Tokens,
    pub cost: Option<f64>,
    pub prompt_changed: usize,
    pub runs: u32,
    pub passes: u32,
    pub pass_rate: f64,
}

/// Runs `eval`: check, run, report; the exit code by the verdicts (and the baseline).
pub fn eval(schemas: &Path, args: EvalArgs) -> Result<(), Failure> {
    let absolute = |p: &Path| {
        std::path::absolute(p).map_err(|e| Failure::Usage(format!("{}: {e}", p.display())))
    };
    let cwd = absolute(Path::new("."))?;
    // The build's check of every dataset, before any model call: a problem is a usage error.
    let counts = agent_contracts_codegen::Builder::new(absolute(schemas)?)
        .manifest_dir(&cwd)
        .evals(absolute(&args.evals)?)
        .check_evals()
        .map_err(|e| {
            Failure::Usage(format!(
                "the datasets fail their check:\n{}",
                e.to_string().trim_end()
            ))
        })?;
    let mut suites = Vec::new();
    for (agent, _) in &counts {
        let path = args.evals.join(format!("{agent}.jsonl"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))?;
        let cases = Case::parse_dataset(&text)
            .map_err(|e| Failure::Usage(format!("{}: {e}", path.display())))?;
        let loaded = UserAgent::load(schemas, agent).map_err(Failure::Usage)?;
        let loaded: &'static UserAgent = Box::leak(Box::new(loaded));
        suites.push((loaded, cases));
    }
    let prices = args.prices.as_deref().map(read_prices).transpose()?;
    let baseline = args.baseline.as_deref().map(read_report).transpose()?;
    let env = |name: &str| args.providers.var(name);
    let source = match (&args.replay, &args.model) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))?;
            let recording = Recording::from_json(&text)
                .map_err(|e| Failure::Usage(format!("{}: not a recording: {e}", path.display())))?;
            Source::Replay(Arc::new(recording))
        }
        (None, Some(spec)) => {
            let model = agent_contracts::llm::from_spec_with(spec, env)
                .map_err(|e| Failure::Usage(format!("--model {spec}: {e}")))?;
            match args.record {
                Some(_) => Source::Record(model, Arc::new(Recording::default())),
                None => Source::Live(model),
            }
        }
        (None, None) => return Err(Failure::Usage("--model or --replay is needed".into())),
    };
    let judge = match &args.judge_model {
        Some(spec) => Some(Judge::new(
            agent_contracts::llm::from_spec_with(spec, env)
                .map_err(|e| Failure::Usage(format!("--judge-model {spec}: {e}")))?,
        )),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Usage(format!("cannot start the runtime: {e}")))?;
    let report = runtime.block_on(run_all(
        &suites,
        &source,
        judge.as_ref(),
        args.repeat,
        usize::from(args.concurrency),
        prices.as_ref(),
    ));
    if let (Some(path), Source::Record(_, recording)) = (&args.record, &source) {
        write(path, &recording.to_json())?;
    }
    if let Some(path) = &args.json {
        write(
            path,
            &serde_json::to_string_pretty(&report).unwrap_or_default(),
        )?;
    }
    if let Some(path) = &args.junit {
        write(path, &junit(&report))?;
    }
    let mut text = markdown(&report);
    let skipped: usize = report.cases.iter().map(|c| c.judges_skipped).sum();
    if skipped > 0 {
        text.push_str(&format!(
            "\n{skipped} judge assertion(s) skipped: no `--judge-model`\n"
        ));
    }
    // Written here, not through the root's helpers: a module imports only downwards.
    writeln!(std::io::stdout().lock(), "{}", text.trim_end())
        .map_err(|e| Failure::Usage(format!("cannot write to stdout: {e}")))?;
    let failed = match &baseline {
        None => report.cases.iter().any(|c| c.verdict != Verdict::Pass),
        Some(baseline) => !regressions(baseline, &report).is_empty(),
    };
    if failed {
        Err(Failure::Failed(String::new()))
    } else {
        Ok(())
    }
}

/// Where each run's answers come from.
enum Source {
    Live(Arc<dyn ChatModel>),
    Record(Arc<dyn ChatModel>, Arc<Recording>),
    Replay(Arc<Recording>),
}

impl Source {
    fn model(&self, case: &str, run: u32) -> CaseModel {
        match self {
            Self::Live(model) => CaseModel::live(model.clone(), case, run),
            Self::Record(model, recording) => {
                CaseModel::record(model.clone(), recording.clone(), case, run)
            }
            Self::Replay(recording) => CaseModel::replay(recording.clone(), case, run),
        }
    }
}

/// The key a recording files a case's answers under: its agent and name.
fn case_key(agent: &str, name: &str) -> String {
    format!("{agent}/{name}")
}

/// Every run of every case, `concurrency` at a time, gathered per case.
async fn run_all(
    suites: &[(&'static UserAgent, Vec<Case>)],
    source: &Source,
    judge: Option<&Judge>,
    repeat: u32,
    concurrency: usize,
    prices: Option<&Prices>,
) -> Report {
    let jobs = suites.iter().enumerate().flat_map(|(s, (agent, cases))| {
        cases
            .iter()
            .enumerate()
            .flat_map(move |(c, case)| (1..=repeat).map(move |run| (s, c, *agent, case, run)))
    });
    let runs: Vec<_> = futures_util::stream::iter(jobs)
        .map(|(s, c, agent, case, run)| async move {
            let model = source.model(&case_key(agent.name(), &case.name), run);
            let runtime = agent_contracts::eval::case_runtime(model.clone());
            let outcome = run_case(&runtime, agent as &dyn DynAgent, case, judge).await;
            (s, c, outcome, model)
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let mut by_case: BTreeMap<(usize, usize), Vec<_>> = BTreeMap::new();
    for (s, c, outcome, model) in runs {
        by_case.entry((s, c)).or_default().push((outcome, model));
    }
    let cases: Vec<CaseReport> = by_case
        .into_iter()
        .map(|((s, c), runs)| {
            let (agent, cases) = &suites[s];
            summarize(agent.name(), &cases[c].name, runs, prices)
        })
        .collect();
    Report {
        total: total(&cases),
        cases,
    }
}

/// One case's runs as its report: the worst run's verdict and details.
fn summarize(
    agent: &str,
    name: &str,
    runs: Vec<(agent_contracts::eval::CaseRun, CaseModel)>,
    prices: Option<&Prices>,
) -> CaseReport {
    let mut usage = Usage::default();
    let mut cost = Some(0.0);
    for (_, model) in &runs {
        usage += model.usage();
        for (name, used) in model.usage_by_model() {
            let price = prices.zip(name.as_deref()).and_then(|(p, n)| p.price(n));
            cost = cost.zip(price).map(|(sum, price)| sum + price.cost(&used));
        }
    }
    if prices.is_none() {
        cost = None;
    }
    let passes = runs
        .iter()
        .filter(|(r, _)| r.verdict == Verdict::Pass)
        .count() as u32;
    let prompt_changed = runs.iter().any(|(_, m)| m.prompt_changed());
    let count = runs.len() as u32;
    let worst = runs
        .into_iter()
        .map(|(r, _)| r)
        .max_by_key(|r| r.verdict)
        .expect("a case runs at least once");
    CaseReport {
        agent: agent.to_owned(),
        name: name.to_owned(),
        verdict: worst.verdict,
        failures: worst.failures,
        error: worst.error,
        tokens: Tokens {
            input: usage.input_tokens,
            output: usage.output_tokens,
        },
        cost,
        prompt_changed,
        judged: !worst.judged.is_empty(),
        judgements: worst.judged,
        judges_skipped: worst.judges_skipped,
        runs: count,
        passes,
        pass_rate: f64::from(passes) / f64::from(count.max(1)),
    }
}

fn total(cases: &[CaseReport]) -> Total {
    let count = |v: Verdict| cases.iter().filter(|c| c.verdict == v).count();
    let runs = cases.iter().map(|c| c.runs).sum::<u32>();
    let passes = cases.iter().map(|c| c.passes).sum::<u32>();
    Total {
        cases: cases.len(),
        pass: count(Verdict::Pass),
        fail: count(Verdict::Fail),
        error: count(Verdict::Error),
        tokens: Tokens {
            input: cases.iter().map(|c| c.tokens.input).sum(),
            output: cases.iter().map(|c| c.tokens.output).sum(),
        },
        cost: cases.iter().map(|c| c.cost).sum(),
        prompt_changed: cases.iter().filter(|c| c.prompt_changed).count(),
        runs,
        passes,
        pass_rate: f64::from(passes) / f64::from(runs.max(1)),
    }
}

/// The cases that passed in `baseline` and do not now.
fn regressions<'a>(baseline: &Report, report: &'a Report) -> Vec<&'a CaseReport> {
    report
        .cases
        .iter()
        .filter(|c| c.verdict != Verdict::Pass)
        .filter(|c| {
            baseline
                .cases
                .iter()
                .any(|b| b.agent == c.agent && b.name == c.name && b.verdict == Verdict::Pass)
        })
        .collect()
}

/// One assertion failure in a line: `/status` equals "success", seen "partial".
fn failure_text(f: &AssertionFailure) -> String {
    let seen = f
        .seen
        .as_ref()
        .map_or("nothing".to_owned(), Value::to_string);
    let path = if f.path.is_empty() {
        String::new()
    } else {
        format!("`{}` ", f.path)
    };
    format!("{path}{} {}, seen {seen}", f.check, f.expected)
}

/// Markdown: a table with one line per case (its name, verdict word and pass rate), then the
/// totals.
fn markdown(report: &Report) -> String {
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let mut out = String::from(
        "| agent | case | verdict | pass rate | details |\n| --- | --- | --- | --- | --- |\n",
    );
    for c in &report.cases {
        let mut details: Vec<String> = c.failures.iter().map(failure_text).collect();
        details.extend(c.error.clone());
        for j in &c.judgements {
            details.push(format!(
                "judge {}: {}",
                if j.pass { "passed" } else { "failed" },
                j.reason
            ));
        }
        if c.judges_skipped > 0 {
            details.push(format!(
                "{} judge(s) skipped (no --judge-model)",
                c.judges_skipped
            ));
        }
        if c.prompt_changed {
            details.push("prompt changed since the recording".into());
        }
        out.push_str(&format!(
            "| {} | {} | {} | {}/{} ({:.0}%) | {} |\n",
            cell(&c.agent),
            cell(&c.name),
            c.verdict.word(),
            c.passes,
            c.runs,
            c.pass_rate * 100.0,
            cell(&details.join("; "))
        ));
    }
    let t = &report.total;
    let cost = t.cost.map_or("unpriced".to_owned(), |c| format!("${c:.6}"));
    out.push_str(&format!(
        "\n{} cases: {} pass, {} fail, {} error; {} of {} runs passed; {} input and {} output tokens, {cost}",
        t.cases, t.pass, t.fail, t.error, t.passes, t.runs, t.tokens.input, t.tokens.output
    ));
    if t.prompt_changed > 0 {
        let names: Vec<String> = report
            .cases
            .iter()
            .filter(|c| c.prompt_changed)
            .map(|c| case_key(&c.agent, &c.name))
            .collect();
        out.push_str(&format!(
            "\nprompt changed since the recording: {}",
            names.join(", ")
        ));
    }
    out.push('\n');
    out
}

/// XML text escaped for an attribute or an element.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: a suite per agent, a test case per case, `<failure>` or `<error>`.
fn junit(report: &Report) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let t = &report.total;
    out.push_str(&format!(
        "<testsuites name=\"agent-contract eval\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n",
        t.cases, t.fail, t.error
    ));
    let mut agents: Vec<&str> = report.cases.iter().map(|c| c.agent.as_str()).collect();
    agents.dedup();
    for agent in agents {
        let cases: Vec<&CaseReport> = report.cases.iter().filter(|c| c.agent == agent).collect();
        let count = |v: Verdict| cases.iter().filter(|c| c.verdict == v).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n",
            xml(agent),
            cases.len(),
            count(Verdict::Fail),
            count(Verdict::Error)
        ));
        for c in cases {
            out.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\">",
                xml(agent),
                xml(&c.name)
            ));
            match c.verdict {
                Verdict::Pass => {}
                Verdict::Fail => {
                    let lines: Vec<String> = c.failures.iter().map(failure_text).collect();
                    out.push_str(&format!(
                        "\n      <failure message=\"{} assertion(s) failed\">{}</failure>\n    ",
                        c.failures.len(),
                        xml(&lines.join("\n"))
                    ));
                }
                Verdict::Error => {
                    let error = c.error.clone().unwrap_or_default();
                    out.push_str(&format!(
                        "\n      <error message=\"{}\">{}</error>\n    ",
                        xml(&error),
                        xml(&error)
                    ));
                }
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// A price file: per model, US dollars per million input and output tokens (cache reads
/// and writes at `cache_read`/`cache_write` when given, else at the input price).
fn read_prices(path: &Path) -> Result<Prices, Failure> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        input: f64,
        output: f64,
        cache_read: Option<f64>,
        cache_write: Option<f64>,
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))?;
    let entries: BTreeMap<String, Entry> = serde_json::from_str(&text).map_err(|e| {
        Failure::Usage(format!(
            "{}: not a price file (`{{\"model\": {{\"input\": 2.5, \"output\": 10}}}}`): {e}",
            path.display()
        ))
    })?;
    let mut prices = Prices::default();
    for (model, e) in entries {
        let all = [Some(e.input), Some(e.output), e.cache_read, e.cache_write];
        if all.iter().flatten().any(|p| !p.is_finite() || *p < 0.0) {
            return Err(Failure::Usage(format!(
                "{}: `{model}`: a price is a finite number of dollars, not negative",
                path.display()
            )));
        }
        let price = Price {
            input: e.input,
            output: e.output,
            cache_read: e.cache_read.unwrap_or(e.input),
            cache_write: e.cache_write.unwrap_or(e.input),
        };
        prices = prices.with(model, price);
    }
    Ok(prices)
}

/// A previous `--json` report.
fn read_report(path: &Path) -> Result<Report, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::Usage(format!(
            "{}: not an `eval --json` report: {e}",
            path.display()
        ))
    })
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", path.display())))
}
