//! What model calls cost: a user's price table, per model, applied to the usage providers
//! report. Prices change and differ per account, so the toolkit ships none.

use crate::chat::Usage;
use std::collections::BTreeMap;

/// US dollars per million tokens of one model.
///
/// ```
/// use agent_contracts::{model::Price, model::Usage};
/// let sonnet = Price { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
/// let usage = Usage::new(1_000_000, 0).with_cached_tokens(500_000);
/// assert_eq!(sonnet.cost(&usage), 1.65);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Price {
    /// Per million prompt tokens neither read from nor written to the cache.
    pub input: f64,
    /// Per million answer tokens (reasoning included).
    pub output: f64,
    /// Per million prompt tokens read from the cache.
    pub cache_read: f64,
    /// Per million prompt tokens written to the cache.
    pub cache_write: f64,
}

impl Price {
    /// What `usage` costs, in US dollars. Providers count cache reads and writes inside
    /// `input_tokens` (agent-llm adds Anthropic's back), so the rest is the uncached input.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_tokens.saturating_add(usage.cache_write_tokens);
        let uncached = usage.input_tokens.saturating_sub(cached);
        let dollars = uncached as f64 * self.input
            + usage.cached_tokens as f64 * self.cache_read
            + usage.cache_write_tokens as f64 * self.cache_write
            + usage.output_tokens as f64 * self.output;
        dollars / 1_000_000.0
    }
}

/// A price table: a [`Price`] per model name. A response's model (`gpt-4o-mini-2024-07-18`)
/// takes the price of the longest name in the table it starts with (`gpt-4o-mini`).
///
/// ```
/// use agent_contracts::{model::Price, model::Prices};
/// let prices = Prices::default()
///     .with("gpt-4o", Price { input: 2.5, output: 10.0, cache_read: 1.25, cache_write: 0.0 })
///     .with("gpt-4o-mini", Price { input: 0.15, output: 0.6, cache_read: 0.075, cache_write: 0.0 });
/// assert_eq!(prices.price("gpt-4o-mini-2024-07-18").map(|p| p.input), Some(0.15));
/// assert_eq!(prices.price("claude-sonnet-4-5"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices(BTreeMap<String, Price>);

impl Prices {
    /// The table with `model` at `price`.
    #[must_use]
    pub fn with(mut self, model: impl Into<String>, price: Price) -> Self {
        self.0.insert(model.into(), price);
        self
    }

    /// The price of `model`, if the table has one.
    pub fn price(&self, model: &str) -> Option<&Price> {
        let names = self
            .0
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()));
        names
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| price)
    }
}
