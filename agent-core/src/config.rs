//! The one settings object of a run: the bounds the runtime and workflows keep, the limits
//! every contract check applies, and the token that cancels a run.

use crate::cost::Prices;
use crate::delivery::Delivery;
use crate::transcript::TranscriptSink;
use agent_contracts_contract::{Limits, Repairs};
use std::sync::Arc;
pub use tokio_util::sync::CancellationToken;

/// Bounds and limits of a run, shared by [`Runtime`](crate::Runtime) and
/// [`Workflow`](crate::Workflow).
///
/// ```
/// use agent_contracts::{Config, Limits};
///
/// let config = Config::default()
///     .with_max_retries(1)
///     .with_limits(Limits::default().with_max_errors(5));
/// assert_eq!(config.max_turns, 16);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone)]
pub struct Config {
    /// Retries after a first failed attempt: per tool for a caller's input, per call for an
    /// agent's output, per producer for a handoff (default 3).
    pub max_retries: u32,
    /// Model turns that call tools one agent may take before it must answer: a parent
    /// model's loop over its sub-agents, a sub-agent or a workflow agent with plain tools
    /// (default 16). Past it the call stops with [`Error::TooManyTurns`](crate::Error::TooManyTurns).
    pub max_turns: u32,
    /// Agents a workflow run may route to before it is stopped, so routing that loops ends
    /// (default 32).
    pub max_hops: u32,
    /// Tool calls of one model turn that run at the same time (default 4); results are kept
    /// in the order the model asked for them.
    pub max_concurrency: usize,
    /// Limits on every tool call's arguments, every answer, every retry error and every
    /// resume state.
    pub limits: Limits,
    /// Most tokens (input and output, as providers report them) a run may use; past it the
    /// run stops with [`Error::TokenBudget`](crate::Error::TokenBudget). `None` (the default)
    /// sets no budget.
    pub token_budget: Option<u64>,
    /// What each model costs, for [`Transcript::cost`](crate::transcript::Transcript::cost) and the cost
    /// budget (empty by default: prices differ per account and change).
    pub prices: Prices,
    /// Most US dollars a run may spend, priced by [`Config::prices`]; past it the run stops
    /// with [`Error::CostBudget`](crate::Error::CostBudget), and a call whose model has no
    /// price stops it with [`Error::Unpriced`](crate::Error::Unpriced), so a budget is never
    /// silently unenforced. `None` (the default) sets no budget.
    pub cost_budget: Option<f64>,
    /// Cancels the run: the next model or tool call it reaches ends the run with
    /// [`Error::Cancelled`](crate::Error::Cancelled); the transcript is kept.
    pub cancel: CancellationToken,
    /// Whether answers arrive whole (the default) or stream, checked against their output
    /// contract as they arrive and shown to a watch: see [`Delivery`].
    pub delivery: Delivery,
    /// The lossless repairs made to a model's answer or a parent's kwargs that broke their
    /// contract, before any retry (all kinds by default; [`Repairs::none`] retries every
    /// malformed value as before). Each repair is recorded in the transcript and on the
    /// agent's span; [`Limits::max_repairs`] bounds them.
    pub repairs: Repairs,
    /// Where each transcript event goes as it happens, beside the transcript kept in memory
    /// (`None`, the default: nowhere else). A [`RunRecorder`](crate::recorder::RunRecorder)
    /// keeps a run's events in a store.
    pub transcript_sink: Option<Arc<dyn TranscriptSink>>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_retries: 3,
            max_turns: 16,
            max_hops: 32,
            max_concurrency: 4,
            limits: Limits::default(),
            token_budget: None,
            prices: Prices::default(),
            cost_budget: None,
            cancel: CancellationToken::new(),
            delivery: Delivery::Whole,
            repairs: Repairs::default(),
            transcript_sink: None,
        }
    }
}

/// Each setter returns the settings with one field changed, so a config reads as one chain
/// from [`Config::default`] (fields added later break no caller).
impl Config {
    /// These settings with [`max_retries`](Self::max_retries) set.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// These settings with [`max_turns`](Self::max_turns) set.
    pub fn with_max_turns(mut self, max_turns: u32) -> Self {
        self.max_turns = max_turns;
        self
    }

    /// These settings with [`max_hops`](Self::max_hops) set.
    pub fn with_max_hops(mut self, max_hops: u32) -> Self {
        self.max_hops = max_hops;
        self
    }

    /// These settings with [`max_concurrency`](Self::max_concurrency) set.
    pub fn with_max_concurrency(mut self, max_concurrency: usize) -> Self {
        self.max_concurrency = max_concurrency;
        self
    }

    /// These settings with [`limits`](Self::limits) set.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// These settings with a [`token_budget`](Self::token_budget).
    pub fn with_token_budget(mut self, token_budget: u64) -> Self {
        self.token_budget = Some(token_budget);
        self
    }

    /// These settings with [`prices`](Self::prices) set.
    pub fn with_prices(mut self, prices: Prices) -> Self {
        self.prices = prices;
        self
    }

    /// These settings with a [`cost_budget`](Self::cost_budget).
    pub fn with_cost_budget(mut self, cost_budget: f64) -> Self {
        self.cost_budget = Some(cost_budget);
        self
    }

    /// These settings with the [`cancel`](Self::cancel) token set.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// These settings with [`delivery`](Self::delivery) set.
    pub fn with_delivery(mut self, delivery: Delivery) -> Self {
        self.delivery = delivery;
        self
    }

    /// These settings with [`repairs`](Self::repairs) set.
    pub fn with_repairs(mut self, repairs: Repairs) -> Self {
        self.repairs = repairs;
        self
    }

    /// These settings with [`transcript_sink`](Self::transcript_sink) set.
    pub fn with_transcript_sink(mut self, sink: Arc<dyn TranscriptSink>) -> Self {
        self.transcript_sink = Some(sink);
        self
    }
}
