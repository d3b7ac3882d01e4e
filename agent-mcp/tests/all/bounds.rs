//! What the HTTP endpoint holds for its clients, and how it refuses: a JSON-RPC error for a
//! body that is not JSON (-32700), not a JSON-RPC message (-32600) or too long (413); 503 with
//! a JSON-RPC error and `Retry-After` when the bytes held at once or the sessions are at their
//! bound; no session at all in stateless mode.

use agent_contracts_mcp::{AgentServer, HttpSettings, MAX_ENVELOPE_BYTES, Sessions};
use agent_contracts_runtime::{Config, Limits, ScriptedModel};
use agent_examples::agents::PlanGeneratorAgent;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The bytes of arguments the test server's contract takes: a message is at most this plus
/// [`MAX_ENVELOPE_BYTES`].
const MAX_BYTES: usize = 1_000;

async fn serve(settings: HttpSettings) -> SocketAddr {
    let config = Config::default().with_limits(Limits::default().with_max_bytes(MAX_BYTES));
    let model = Arc::new(ScriptedModel::default());
    let server =
        AgentServer::with_config(vec![&PlanGeneratorAgent], model, config).with_http(settings);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    addr
}

/// A POST of `body` to `/mcp` with `headers` besides the usual ones; the whole response (the
/// connection closes after it): status, lowercased head, body.
async fn post(addr: SocketAddr, headers: &[&str], body: &[u8]) -> (u16, String, String) {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}",
        body.len()
    );
    for header in headers {
        head.push_str("\r\n");
        head.push_str(header);
    }
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(format!("{head}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    stream.write_all(body).await.unwrap();
    response(&mut stream).await
}

/// The whole response on `stream`, within 5 s.
async fn response(stream: &mut tokio::net::TcpStream) -> (u16, String, String) {
    let mut read = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut read))
        .await
        .expect("no whole response within 5 s")
        .unwrap();
    let text = String::from_utf8_lossy(&read).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (
        head[9..12].parse().unwrap(),
        head.to_ascii_lowercase(),
        body.to_owned(),
    )
}

/// The JSON-RPC error of a refusal's body: its code and id.
fn rpc_error(body: &str) -> (i64, Value) {
    let error: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(error["jsonrpc"], "2.0", "{body}");
    assert!(error["error"]["message"].as_str().is_some(), "{body}");
    (
        error["error"]["code"].as_i64().unwrap(),
        error["id"].clone(),
    )
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

#[tokio::test]
async fn a_body_that_is_not_json_rpc_gets_a_json_rpc_error() {
    let addr = serve(HttpSettings::default()).await;
    let (status, _, body) = post(addr, &[], br#"{"jsonrpc":"2.0","id":1,"#).await;
    assert_eq!(status, 400, "{body}");
    // The id its start names comes back, so the client's call ends with the error.
    assert_eq!(rpc_error(&body), (-32700, Value::from(1)));
    let (status, _, body) = post(addr, &[], b"not json").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(rpc_error(&body), (-32700, Value::Null));
    // JSON, but no JSON-RPC message: the id, when there is one, comes back.
    for (message, id) in [
        (r#"{"jsonrpc":"2.0","id":5,"method":42}"#, Value::from(5)),
        (
            r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#,
            Value::from("a"),
        ),
        (r#"[1, 2]"#, Value::Null),
    ] {
        let (status, _, body) = post(addr, &[], message.as_bytes()).await;
        assert_eq!(status, 400, "{message}: {body}");
        assert_eq!(rpc_error(&body), (-32600, id), "{message}");
    }
    // A well-formed message is served as before.
    let (status, head, _) = post(addr, &[], INITIALIZE.as_bytes()).await;
    assert_eq!(status, 200, "{head}");
}

#[tokio::test]
async fn a_body_past_the_bound_is_refused_unread() {
    let addr = serve(HttpSettings::default()).await;
    let max = MAX_BYTES + MAX_ENVELOPE_BYTES;
    // Announced too long: refused on its headers, with none of it sent.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        max + 1
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (status, _, body) = response(&mut stream).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(rpc_error(&body).0, -32600);
    assert!(body.contains(&format!("at most {max} bytes")), "{body}");
    // Sent in chunks, with no length announced: refused once it passes the bound.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 16 * 1024];
    for _ in 0..=(max / chunk.len()) {
        let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
        framed.extend_from_slice(&chunk);
        framed.extend_from_slice(b"\r\n");
        if stream.write_all(&framed).await.is_err() {
            break;
        }
    }
    let (status, _, body) = response(&mut stream).await;
    assert_eq!(status, 413, "{body}");
}

#[tokio::test]
async fn bodies_held_at_once_are_bounded() {
    // Room for one message of the largest size, and no more.
    let addr = serve(HttpSettings::default().max_buffered_bytes(0)).await;
    let max = MAX_BYTES + MAX_ENVELOPE_BYTES;
    // A client announces a body of the largest size and sends only part of it.
    let mut holding = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {max}\r\n\r\n{{"
    );
    holding.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Another's body does not fit: 503 at once, with a JSON-RPC error and when to come back.
    let (status, head, body) = post(addr, &[], INITIALIZE.as_bytes()).await;
    assert_eq!(status, 503, "{body}");
    assert!(head.contains("retry-after: 1"), "{head}");
    assert_eq!(rpc_error(&body).0, -32000);
    // When the first client goes away, its room is given back.
    drop(holding);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, _, body) = post(addr, &[], INITIALIZE.as_bytes()).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn sessions_are_bounded_per_token_and_in_all() {
    let (first, second) = ("first-client-token-0123", "second-client-token-0123");
    let settings = HttpSettings::default()
        .bearer_token(first)
        .bearer_token(second)
        .sessions(Sessions::InMemory {
            max: 3,
            per_client: 2,
        });
    let addr = serve(settings).await;
    let as_first = format!("Authorization: Bearer {first}");
    let as_second = format!("Authorization: Bearer {second}");
    for _ in 0..2 {
        let (status, head, _) = post(addr, &[&as_first], INITIALIZE.as_bytes()).await;
        assert_eq!(status, 200, "{head}");
        assert!(head.contains("mcp-session-id: "), "{head}");
    }
    // The first token's share is taken; the second's is not.
    let (status, head, body) = post(addr, &[&as_first], INITIALIZE.as_bytes()).await;
    assert_eq!(status, 503, "{head}");
    let (code, id) = rpc_error(&body);
    assert_eq!((code, id), (-32000, Value::from(1)));
    assert!(
        body.contains("as many sessions as one client may"),
        "{body}"
    );
    let (status, _, _) = post(addr, &[&as_second], INITIALIZE.as_bytes()).await;
    assert_eq!(status, 200);
    // Three in all: the second token's next one finds no room.
    let (status, _, body) = post(addr, &[&as_second], INITIALIZE.as_bytes()).await;
    assert_eq!(status, 503);
    assert!(body.contains("as many sessions as it keeps"), "{body}");
}

#[tokio::test]
async fn a_stateless_server_keeps_no_session() {
    let addr = serve(HttpSettings::default().sessions(Sessions::Stateless)).await;
    let (status, head, _) = post(addr, &[], INITIALIZE.as_bytes()).await;
    assert_eq!(status, 200, "{head}");
    assert!(!head.contains("mcp-session-id"), "{head}");
    // A call needs no session: it is served on its own.
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, body) =
        post(addr, &["MCP-Protocol-Version: 2025-06-18"], list.as_bytes()).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("run_plan_generator_agent"), "{body}");
}
