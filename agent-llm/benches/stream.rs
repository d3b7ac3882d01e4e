//! The per-chunk overhead of a streamed answer: one call against a loopback server that sends
//! a body of `n` events at once, for `n` = 1 and 1,000. The difference over 999 is what one
//! more chunk costs (SSE parsing, JSON parsing of the event, reassembly, the sink), apart from
//! the request itself. Both wire formats.

use agent_contracts_llm::{HttpModel, Provider};
use agent_contracts_runtime::{ChatModel, Message, model::ChatRequest, model::StreamDelta};
use axum::extract::Path;
use std::ops::ControlFlow;
use std::sync::OnceLock;

fn main() {
    divan::main();
}

/// An OpenAI stream of `n` content chunks, usage, `[DONE]`.
fn openai_body(n: usize) -> String {
    let chunk = |content: &str, finish: &str| {
        format!(
            r#"data: {{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-test","system_fingerprint":"fp_1","choices":[{{"index":0,"delta":{{"content":"{content}"}},"logprobs":null,"finish_reason":{finish}}}],"usage":null}}"#
        ) + "\n\n"
    };
    let mut body: String = (0..n).map(|_| chunk(" token", "null")).collect();
    body.push_str(&chunk("", r#""stop""#));
    body.push_str("data: {\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}\n\ndata: [DONE]\n\n");
    body
}

/// An Anthropic stream of one text block of `n` deltas.
fn anthropic_body(n: usize) -> String {
    let mut body = String::from(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_9\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n\
         event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    );
    for _ in 0..n {
        body.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" token\"}}\n\n");
    }
    body.push_str("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
         event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":5}}\n\n\
         event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    body
}

/// The runtime and the loopback server, started once: `/{n}/v1/chat/completions` and
/// `/{n}/v1/messages` answer with `n` chunks.
fn server() -> &'static (tokio::runtime::Runtime, String) {
    static SERVER: OnceLock<(tokio::runtime::Runtime, String)> = OnceLock::new();
    SERVER.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let uri = runtime.block_on(async {
            let sse = |body: String| {
                axum::response::Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(axum::body::Body::from(body))
                    .unwrap_or_default()
            };
            let app = axum::Router::new()
                .route(
                    "/{n}/v1/chat/completions",
                    axum::routing::post(
                        move |Path(n): Path<usize>| async move { sse(openai_body(n)) },
                    ),
                )
                .route(
                    "/{n}/v1/messages",
                    axum::routing::post(move |Path(n): Path<usize>| async move {
                        sse(anthropic_body(n))
                    }),
                );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a loopback port");
            let uri = format!("http://{}", listener.local_addr().expect("an address"));
            tokio::spawn(async move { axum::serve(listener, app).await });
            uri
        });
        (runtime, uri)
    })
}

fn bench_stream(bencher: divan::Bencher, provider: Provider, n: usize) {
    let (runtime, uri) = server();
    let base = match provider {
        Provider::Anthropic => format!("{uri}/{n}"),
        _ => format!("{uri}/{n}/v1"),
    };
    let model = HttpModel::builder(provider, "m")
        .base_url(base)
        .api_key("k")
        .build()
        .expect("a model");
    let request = ChatRequest::new("a", vec![Message::user("go")], Vec::new());
    bencher.bench(|| {
        let mut deltas = 0usize;
        let mut sink = |_: StreamDelta<'_>| {
            deltas += 1;
            ControlFlow::Continue(())
        };
        let response = runtime.block_on(model.stream(&request, &mut sink));
        assert!(response.is_ok() && deltas == n, "{response:?}");
    });
}

#[divan::bench(args = [1, 1000])]
fn openai(bencher: divan::Bencher, n: usize) {
    bench_stream(bencher, Provider::OpenAi, n);
}

#[divan::bench(args = [1, 1000])]
fn anthropic(bencher: divan::Bencher, n: usize) {
    bench_stream(bencher, Provider::Anthropic, n);
}
