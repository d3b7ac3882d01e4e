//! `plan-pipeline --mcp-config FILE` naming an `https://` server: `agent-demo mcp --http`
//! behind a TLS proxy written here, whose certificate (made at test time, for `localhost`,
//! by a CA made at test time) is trusted through `SSL_CERT_FILE`. The model (a loopback
//! Chat Completions server) calls one of the server's tools; the proxy sees the call go
//! through. With another CA in `SSL_CERT_FILE`, the run stops with an error that names the
//! host and the certificate's problem.

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const PLAN_PIPELINE: &str = env!("CARGO_BIN_EXE_plan-pipeline");

/// A CA, self-signed, as PEM, and the issuer that signs with its key.
fn authority(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

/// Starts `agent-demo mcp --http 127.0.0.1:0` and reads the address it bound.
async fn plain_server() -> (tokio::process::Child, std::net::SocketAddr) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-demo"))
        .args(["mcp", "--http", "127.0.0.1:0"])
        .env_remove("AGENT_CONTRACT_MCP_TOKEN")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut line = String::new();
    tokio::io::BufReader::new(stderr)
        .read_line(&mut line)
        .await
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("agent-demo: serving MCP at http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (child, addr.parse().unwrap())
}

/// A TLS proxy on a loopback port to `backend`, with the certificate `issuer` signs for
/// `localhost`; what clients send, decrypted, is appended to `seen`.
async fn tls_proxy(
    issuer: &CertifiedIssuer<'static, KeyPair>,
    backend: std::net::SocketAddr,
    seen: Arc<Mutex<Vec<u8>>>,
) -> u16 {
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, issuer)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake: nothing to serve.
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let Ok(plain) = tokio::net::TcpStream::connect(backend).await else {
                    return;
                };
                let (mut tls_read, mut tls_write) = tokio::io::split(tls);
                let (mut plain_read, mut plain_write) = plain.into_split();
                let upstream = async {
                    let mut buffer = vec![0; 16 * 1024];
                    while let Ok(n @ 1..) = tls_read.read(&mut buffer).await {
                        seen.lock().unwrap().extend_from_slice(&buffer[..n]);
                        if plain_write.write_all(&buffer[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = plain_write.shutdown().await;
                };
                let downstream = async {
                    let _ = tokio::io::copy(&mut plain_read, &mut tls_write).await;
                    let _ = tls_write.shutdown().await;
                };
                tokio::join!(upstream, downstream);
            });
        }
    });
    port
}

/// Answers Chat Completions requests in order: a call of the MCP server's
/// `run_event_planning`, then the final answer.
struct Replay(Mutex<std::vec::IntoIter<String>>);

impl Respond for Replay {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        match self.0.lock().ok().and_then(|mut bodies| bodies.next()) {
            Some(body) => ResponseTemplate::new(200).set_body_raw(body, "application/json"),
            None => ResponseTemplate::new(599),
        }
    }
}

fn completion(n: usize, message: Value) -> String {
    json!({"id": format!("chatcmpl-{n}"), "model": "m",
        "choices": [{"message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_pipeline_lists_and_calls_the_tools_of_an_https_server_it_trusts() {
    let dir = std::env::temp_dir().join(format!("plan-pipeline-mcp-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trusted = authority("agent-contracts test CA");
    let stranger = authority("another CA");
    let trusted_pem = dir.join("trusted.pem");
    let stranger_pem = dir.join("stranger.pem");
    std::fs::write(&trusted_pem, trusted.pem()).unwrap();
    std::fs::write(&stranger_pem, stranger.pem()).unwrap();

    let (_server, backend) = plain_server().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let port = tls_proxy(&trusted, backend, seen.clone()).await;
    let config = dir.join("mcp.json");
    let servers =
        json!({"mcpServers": {"secure": {"url": format!("https://localhost:{port}/mcp")}}});
    std::fs::write(&config, servers.to_string()).unwrap();

    let task = agent_examples::event_planning::REQUEST;
    let arguments = json!({"task": task}).to_string();
    let bodies = vec![
        completion(
            0,
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_0",
                "type": "function", "function": {"name": "run_event_planning", "arguments": arguments}}]}),
        ),
        completion(
            1,
            json!({"role": "assistant", "content": "The event planning is waiting for the user."}),
        ),
    ];
    let model = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Replay(Mutex::new(bodies.into_iter())))
        .mount(&model)
        .await;
    let run = |cert_file: &std::path::Path| {
        tokio::process::Command::new(PLAN_PIPELINE)
            .args(["--model", "openai:test-model", "--mcp-config"])
            .arg(&config)
            .env("OPENAI_API_KEY", "sk-test")
            .env("OPENAI_BASE_URL", format!("{}/v1", model.uri()))
            .env("SSL_CERT_FILE", cert_file)
            .env_remove("SSL_CERT_DIR")
            .output()
    };

    let out = run(&trusted_pem).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("=== MCP server `secure`: "),
        "the tools are listed: {stdout}"
    );
    // The tool's answer, through TLS: the workflow paused at its question.
    assert!(stdout.contains("\"status\":\"input_required\""), "{stdout}");
    let sent = String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
    assert!(sent.contains("\"method\":\"tools/list\""), "{sent}");
    assert!(sent.contains("\"method\":\"tools/call\""), "{sent}");
    assert!(sent.contains("\"name\":\"run_event_planning\""), "{sent}");
    // The model got the tool's result back.
    let requests = model.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    let second: Value = requests[1].body_json().unwrap();
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("input_required"),
        "{tool_message}"
    );

    // Another CA in SSL_CERT_FILE: the server's certificate is not trusted.
    let out = run(&stranger_pem).await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: cannot connect to the MCP server `secure`: https://localhost:{port}/mcp: the TLS certificate of `localhost` was refused: invalid peer certificate: UnknownIssuer"
        )),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
