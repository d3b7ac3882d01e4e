//! Prompt caching on Anthropic's wire format, and what a run costs by the user's price table,
//! with the cost budget that ends a run when passed.

use crate::common::*;
use agent_contracts_llm::PromptCaching;
use agent_contracts_runtime::{
    ChatModel, Config, Error, Message, Runtime, contract::ToolDefinition, model::ChatRequest,
    model::Price, model::Prices,
};
use agent_examples::agents::VenueAgent;
use serde_json::json;

/// Each reply of `message` reports 10 uncached input tokens, 3 read from the cache, 2
/// written to it, and 6 output tokens.
const SONNET: Price = Price {
    input: 3.0,
    output: 15.0,
    cache_read: 0.3,
    cache_write: 3.75,
};
/// (10 * 3 + 3 * 0.3 + 2 * 3.75 + 6 * 15) / 1e6 dollars.
const ONE_CALL: f64 = 128.4e-6;

fn venue_reply(answer: &str) -> wiremock::ResponseTemplate {
    let text = serde_json::to_string(answer).expect("a JSON string");
    ok(message(
        &format!(r#"{{"type":"text","text":{text}}}"#),
        "end_turn",
    ))
}

const GOOD: &str = r#"{"venue_name": "Hall 9", "capacity": 80, "cost_usd": 1200}"#;
const BAD: &str = r#"{"venue_name": "Hall 9"}"#;

fn config(prices: Prices, budget: f64) -> Config {
    Config::default()
        .with_prices(prices)
        .with_cost_budget(budget)
}

#[tokio::test]
async fn a_cost_budget_passed_mid_run_ends_it_with_a_typed_error() {
    let server = serve(ANTHROPIC_PATH, vec![venue_reply(BAD), venue_reply(GOOD)]).await;
    let model = anthropic_builder(&server).build().expect("a model");
    let prices = Prices::default().with("claude-test", SONNET);
    // Room for one call, not two: the retry after the broken answer passes it.
    let runtime = Runtime::with_config(model, config(prices.clone(), 0.0002));
    let error = runtime
        .call::<VenueAgent>(r#"{"task": "Find a venue"}"#)
        .await;
    let Err(Error::CostBudget {
        agent,
        spent,
        budget,
    }) = error
    else {
        panic!("expected the cost budget, got {error:?}")
    };
    assert_eq!((agent.as_str(), budget), ("venue_agent", 0.0002));
    assert!((spent - 2.0 * ONE_CALL).abs() < 1e-12, "{spent}");
    assert_eq!(runtime.transcript().cost(&prices), spent);
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn a_run_within_its_budget_has_its_cost_and_an_unpriced_model_is_refused() {
    let server = serve(ANTHROPIC_PATH, vec![venue_reply(GOOD), venue_reply(GOOD)]).await;
    let prices = Prices::default().with("claude-test", SONNET);
    let model = anthropic_builder(&server).build().expect("a model");
    let runtime = Runtime::with_config(model, config(prices.clone(), 1.0));
    runtime
        .call::<VenueAgent>(r#"{"task": "Find a venue"}"#)
        .await
        .expect("within the budget");
    assert!((runtime.transcript().cost(&prices) - ONE_CALL).abs() < 1e-12);

    let other = Prices::default().with("gpt-4o", SONNET);
    let model = anthropic_builder(&server).build().expect("a model");
    let runtime = Runtime::with_config(model, config(other, 1.0));
    let error = runtime
        .call::<VenueAgent>(r#"{"task": "Find a venue"}"#)
        .await;
    assert_eq!(
        error.map(drop).map_err(|e| e.to_string()),
        Err("`venue_agent` was answered by `claude-test-2026`, which the price table does not name; the cost budget cannot be kept".to_owned())
    );
}

#[tokio::test]
async fn prompt_caching_marks_the_tools_and_the_system_prompt() {
    let reply = message(r#"{"type":"text","text":"ok"}"#, "end_turn");
    let server = serve(ANTHROPIC_PATH, vec![ok(reply.clone()), ok(reply)]).await;
    let tool = |name: &str| ToolDefinition {
        name: name.into(),
        description: "A tool.".into(),
        parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    };
    let request = ChatRequest::new(
        "agent",
        vec![Message::system("Be brief."), Message::user("Hi")],
        vec![tool("a"), tool("b")],
    );
    for caching in [PromptCaching::FiveMinutes, PromptCaching::OneHour] {
        let model = anthropic_builder(&server)
            .prompt_caching(caching)
            .build()
            .expect("a model");
        model.complete(&request).await.expect("a reply");
    }
    let bodies = bodies(&server).await;
    let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    for (body, cache_control) in bodies.iter().zip([
        json!({"type": "ephemeral"}),
        json!({"type": "ephemeral", "ttl": "1h"}),
    ]) {
        let expected = json!({
            "model": "claude-test",
            "max_tokens": 4096,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": cache_control}],
            "tools": [
                {"name": "a", "description": "A tool.", "input_schema": schema},
                {"name": "b", "description": "A tool.", "input_schema": schema,
                    "cache_control": cache_control},
            ],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        });
        assert_eq!(body, &expected);
    }
}
