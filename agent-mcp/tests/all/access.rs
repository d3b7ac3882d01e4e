//! Who reaches the HTTP endpoint: a bearer token (401 without it or with another one, before
//! any of the body is read), the Host a request names and the browser Origin it comes from
//! (403), and the server's name and version as rmcp's client reads them; how long a slow
//! client holds a connection (headers, body) and how many connections are served at once.

use agent_contracts_mcp::{AgentServer, HttpSettings};
use agent_contracts_runtime::ScriptedModel;
use agent_examples::agents::{DiscoveryAgent, PlanGeneratorAgent};
use rmcp::ServiceExt as _;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const TOKEN: &str = "a-long-random-test-token-0123456789";

/// Serves two agents with `settings` on a port the OS picks; the server stops with the
/// test's runtime.
async fn serve(settings: HttpSettings) -> SocketAddr {
    let model = Arc::new(ScriptedModel::default());
    let server =
        AgentServer::new(vec![&PlanGeneratorAgent, &DiscoveryAgent], model).with_http(settings);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    addr
}

/// Reads from `stream` until the server closes it, within `within`: the bytes it sent.
async fn closed_within(stream: &mut tokio::net::TcpStream, within: Duration) -> Vec<u8> {
    let mut read = Vec::new();
    let until_closed = async {
        let mut buffer = [0u8; 1024];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read.extend_from_slice(&buffer[..n]),
            }
        }
    };
    tokio::time::timeout(within, until_closed)
        .await
        .expect("the server kept the connection open");
    read
}

/// Sends `head` (request line and headers, without the blank line) and `body`, and reads the
/// response's head: its status and its header lines. A response must come within 5 s.
async fn send(addr: SocketAddr, head: &str, body: &[u8]) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(format!("{head}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    stream.write_all(body).await.unwrap();
    let mut read = Vec::new();
    let answer = async {
        let mut buffer = [0u8; 1024];
        while !read.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buffer).await.unwrap();
            assert!(n > 0, "the connection closed without a response");
            read.extend_from_slice(&buffer[..n]);
        }
    };
    tokio::time::timeout(Duration::from_secs(5), answer)
        .await
        .expect("no response within 5 s");
    let text = String::from_utf8_lossy(&read).into_owned();
    let status = text[9..12].parse().unwrap();
    (status, text.to_ascii_lowercase())
}

/// An `initialize` POST to `/mcp` with `headers` (each `Name: value`) besides the usual ones.
fn initialize(addr: SocketAddr, headers: &[&str]) -> (String, Vec<u8>) {
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}",
        body.len()
    );
    for header in headers {
        head.push_str("\r\n");
        head.push_str(header);
    }
    (head, body.to_vec())
}

#[tokio::test]
async fn a_request_without_the_token_or_with_another_is_unauthorized() {
    let addr = serve(HttpSettings::default().bearer_token(TOKEN)).await;
    let (head, body) = initialize(addr, &[]);
    let (status, headers) = send(addr, &head, &body).await;
    assert_eq!(status, 401, "{headers}");
    assert!(
        headers.contains("www-authenticate: bearer\r\n"),
        "{headers}"
    );
    for wrong in [
        format!("Authorization: Bearer {TOKEN}x"),
        "Authorization: Bearer a-long-random-test-token".to_owned(),
        format!("Authorization: Basic {TOKEN}"),
    ] {
        let (head, body) = initialize(addr, &[&wrong]);
        let (status, headers) = send(addr, &head, &body).await;
        assert_eq!(status, 401, "{wrong}: {headers}");
        assert!(headers.contains("www-authenticate: bearer"), "{headers}");
        assert!(!headers.contains(TOKEN), "the token is never echoed");
    }
    let (head, body) = initialize(addr, &[&format!("Authorization: Bearer {TOKEN}")]);
    let (status, headers) = send(addr, &head, &body).await;
    assert_eq!(status, 200, "{headers}");
}

#[tokio::test]
async fn the_refusal_comes_before_the_body_is_read() {
    let addr = serve(HttpSettings::default().bearer_token(TOKEN)).await;
    // Announces 4 MB, sends 20 bytes and waits: the answer is the 401, not a read of the rest.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 4000000"
    );
    let (status, _) = send(addr, &head, br#"{"jsonrpc":"2.0","id""#).await;
    assert_eq!(status, 401);
    // The same for a foreign Host, token or not.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: agents.evil.example\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 4000000"
    );
    let (status, _) = send(addr, &head, b"{").await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_foreign_origin_or_host_is_forbidden() {
    let addr = serve(HttpSettings::default().allowed_origin("http://localhost:6274")).await;
    let (head, body) = initialize(addr, &["Origin: http://evil.example"]);
    let (status, headers) = send(addr, &head, &body).await;
    assert_eq!(status, 403, "{headers}");
    let (head, body) = initialize(addr, &["Origin: http://localhost:6274"]);
    assert_eq!(send(addr, &head, &body).await.0, 200);
    // No Origin: a non-browser client.
    let (head, body) = initialize(addr, &[]);
    assert_eq!(send(addr, &head, &body).await.0, 200);
    // A DNS-rebound name: the Host is not the server's.
    let (head, body) = initialize(addr, &[]);
    let head = head.replace(&format!("Host: {addr}"), "Host: localhost.evil.example");
    assert_eq!(send(addr, &head, &body).await.0, 403);
    // A listed name is served.
    let named = serve(HttpSettings::default().allowed_host("agents.example.com")).await;
    let (head, body) = initialize(named, &[]);
    let head = head.replace(&format!("Host: {named}"), "Host: agents.example.com");
    assert_eq!(send(named, &head, &body).await.0, 200);
}

#[tokio::test]
async fn rmcps_client_with_the_token_is_served_and_reads_the_servers_name() {
    let addr = serve(HttpSettings::default().bearer_token(TOKEN)).await;
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"))
        .auth_header(TOKEN);
    agent_contracts_mcp::tls::install_crypto_provider();
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let info = client.peer_info().unwrap();
    let server = info.server_info.clone().unwrap();
    assert_eq!(server.name, "agent-contracts");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2);
    client.cancel().await.unwrap();

    // Without the token, rmcp's client cannot even start a session.
    agent_contracts_mcp::tls::install_crypto_provider();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    assert!(().serve(transport).await.is_err());
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let settings = HttpSettings::default().header_timeout(Duration::from_millis(300));
    let addr = serve(settings).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Ty")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    closed_within(&mut stream, Duration::from_secs(5)).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_body_that_does_not_arrive_gets_408() {
    let settings = HttpSettings::default()
        .bearer_token(TOKEN)
        .body_timeout(Duration::from_millis(300));
    let addr = serve(settings).await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000"
    );
    let (status, _) = send(addr, &head, br#"{"jsonrpc":"2.0","#).await;
    assert_eq!(status, 408);
}

#[tokio::test]
async fn past_the_connection_bound_the_oldest_idle_connection_makes_room() {
    let settings = HttpSettings::default().max_connections(2);
    let addr = serve(settings).await;
    // Two silent connections take both slots (the server accepts in order).
    let mut first = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A real client is served all the same: the oldest silent connection is closed for it.
    let (head, body) = initialize(addr, &[]);
    assert_eq!(send(addr, &head, &body).await.0, 200);
    let sent = closed_within(&mut first, Duration::from_secs(2)).await;
    assert!(sent.is_empty(), "{}", String::from_utf8_lossy(&sent));
    drop(second);
}

#[tokio::test]
async fn a_connection_serving_a_request_is_never_closed_to_make_room() {
    let model = Stalling::default();
    let settings = HttpSettings::default()
        .max_connections(1)
        .sessions(agent_contracts_mcp::Sessions::Stateless);
    let server =
        AgentServer::new(vec![&DiscoveryAgent], Arc::new(model.clone())).with_http(settings);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    // The only slot serves a call whose model never answers.
    let call = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_discovery_agent","arguments":{"task":"Scan","target_url":"https://a.example"}}}"#;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n",
        call.len()
    );
    let mut serving = tokio::net::TcpStream::connect(addr).await.unwrap();
    serving.write_all(head.as_bytes()).await.unwrap();
    serving.write_all(call).await.unwrap();
    assert!(set_within(&model.started, Duration::from_secs(5)).await);
    // A new connection is the one closed.
    let mut late = tokio::net::TcpStream::connect(addr).await.unwrap();
    let sent = closed_within(&mut late, Duration::from_secs(2)).await;
    assert!(sent.is_empty());
    // The call goes on: its connection is open and its model call was not dropped.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!model.dropped.load(std::sync::atomic::Ordering::SeqCst));
    let mut buffer = [0u8; 256];
    let read = tokio::time::timeout(Duration::from_millis(200), serving.read(&mut buffer)).await;
    match read {
        // Still waiting for the answer, or reading the response head of a stream that has
        // begun: either way not closed.
        Err(_) => {}
        Ok(n) => assert!(n.unwrap() > 0, "the serving connection was closed"),
    }
}

/// A model that never answers, and says when a call starts and when its future is dropped.
#[derive(Clone, Default)]
struct Stalling {
    started: Arc<std::sync::atomic::AtomicBool>,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

struct SetOnDrop(Arc<std::sync::atomic::AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl agent_contracts_runtime::ChatModel for Stalling {
    fn complete<'a>(
        &'a self,
        _: &'a agent_contracts_runtime::model::ChatRequest,
    ) -> agent_contracts_runtime::model::BoxFuture<
        'a,
        Result<
            agent_contracts_runtime::model::ChatResponse,
            agent_contracts_runtime::model::ModelError,
        >,
    > {
        Box::pin(async move {
            let _dropped = SetOnDrop(self.dropped.clone());
            self.started
                .store(true, std::sync::atomic::Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(60)).await;
            Err(agent_contracts_runtime::model::ModelError::Timeout)
        })
    }
}

/// Polls `flag` until it is set, for at most `within`.
async fn set_within(flag: &std::sync::atomic::AtomicBool, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < deadline {
        if flag.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_client_that_disconnects_mid_call_cancels_the_run() {
    let model = Stalling::default();
    let server = AgentServer::new(vec![&DiscoveryAgent], Arc::new(model.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));

    // The session: initialize, then initialized, on connections of their own.
    let (head, body) = initialize(addr, &[]);
    let (status, headers) = send(addr, &head, &body).await;
    assert_eq!(status, 200, "{headers}");
    let session = headers
        .lines()
        .find_map(|line| line.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_owned();
    let post = |body: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let (status, _) = {
        let text = post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        send(addr, head, body.as_bytes()).await
    };
    assert_eq!(status, 202);

    // The call: its answer streams on this connection, which the client drops mid-call.
    let mut call = tokio::net::TcpStream::connect(addr).await.unwrap();
    let arguments = r#"{"task":"Scan","target_url":"https://a.example"}"#;
    let request = post(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"run_discovery_agent","arguments":{arguments}}}}}"#
    ));
    call.write_all(request.as_bytes()).await.unwrap();
    assert!(
        set_within(&model.started, Duration::from_secs(5)).await,
        "the model was never called"
    );
    assert!(!model.dropped.load(std::sync::atomic::Ordering::SeqCst));
    drop(call);
    assert!(
        set_within(&model.dropped, Duration::from_secs(3)).await,
        "the run went on after its client left"
    );
}
