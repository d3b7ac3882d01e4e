//! `agent-mcp`'s HTTP endpoint under attack, in a process of its own (this binary, started
//! again as the server), its memory read from `/proc/<pid>/status`:
//!
//! 1. what idle sessions cost: 2,000 `initialize` requests over ten bearer tokens, of which the
//!    default bounds keep 1,000 (100 per token) and refuse the rest with 503;
//! 2. a siege of 20 s: 1,000 connections that announce a 4 MB body, send 64 KiB of it and
//!    stall (half with a foreign `Host`, half without a token), and 1,100 slow-loris
//!    connections that send their headers a byte a second, each attacker connecting again as
//!    soon as it is closed; meanwhile a legitimate client opens a connection and sends
//!    `initialize` every 250 ms, timed to its answer;
//! 3. the memory 3 s after the attackers leave.
//!
//! The server counts its heap (the bytes its allocations hold, from a counting allocator) and
//! prints it every 100 ms; its resident set is read as well, but the C allocator keeps freed
//! pages for reuse, so the heap is what says whether memory is given back.
//!
//! ```sh
//! cargo bench -p agent-examples --bench mcp_siege
//! ```
//!
//! The goals: the server's memory bounded during the siege and given back after it, and every
//! legitimate request answered within 1 s.

use agent_contracts::mcp::{AgentServer, HttpSettings};
use agent_examples::{agents, pipeline};
use counting::Counting;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Set in the environment of the server process this binary starts.
const SERVE: &str = "MCP_SIEGE_SERVE";
const TOKENS: usize = 10;
const SIEGE: Duration = Duration::from_secs(20);

#[path = "common/counting.rs"]
mod counting;

#[global_allocator]
static ALLOC: Counting = Counting;

fn token(i: usize) -> String {
    format!("siege-token-{i}-0123456789abcdef")
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    if std::env::var_os(SERVE).is_some() {
        return runtime.block_on(serve());
    }
    runtime.block_on(siege());
}

/// The server: the compiled-in agents on the canned model, ten tokens, default bounds; its
/// address on the first line of stdout.
async fn serve() {
    let mut settings = HttpSettings::default();
    for i in 0..TOKENS {
        settings = settings.bearer_token(token(i));
    }
    let server = AgentServer::new(agents::AGENTS.to_vec(), Arc::new(pipeline::canned_model()))
        .with_http(settings);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    println!("{}", listener.local_addr().expect("an address"));
    // The heap held now and the most held in the last 100 ms, every 100 ms, for the siege
    // to read.
    tokio::spawn(async {
        loop {
            println!("heap {} {}", Counting::held(), Counting::most());
            Counting::reset_most();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    server.serve_http_on(listener).await.expect("served");
}

/// `VmRSS` and `VmHWM` of process `pid`, in kB.
fn memory_kb(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn initialize(addr: SocketAddr, token: &str) -> Vec<u8> {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"siege","version":"1"}}}"#;
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Sends `request` on a new connection and reads until the answer's `serverInfo` (or the
/// connection's end): the status, whether the answer came, and the session it opened.
async fn ask(addr: SocketAddr, request: &[u8]) -> (u16, bool, Option<String>) {
    let Ok(mut stream) = TcpStream::connect(addr).await else {
        return (0, false, None);
    };
    if stream.write_all(request).await.is_err() {
        return (0, false, None);
    }
    let mut read = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => read.extend_from_slice(&buffer[..n]),
        }
        if read.windows(10).any(|w| w == b"serverInfo") {
            break;
        }
    }
    let text = String::from_utf8_lossy(&read);
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let session = text
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .map(str::to_owned);
    (status, text.contains("serverInfo"), session)
}

/// One attacker: connects, sends `head` and then `trickle` a byte a second, holds the
/// connection until the server closes it, and starts again, until `stop`.
async fn attacker(
    addr: SocketAddr,
    head: Vec<u8>,
    trickle: bool,
    stop: Arc<AtomicBool>,
    reconnects: Arc<AtomicU64>,
) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut stream) = TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        reconnects.fetch_add(1, Ordering::Relaxed);
        let (reader, mut writer) = stream.split();
        let mut reader = tokio::io::BufReader::new(reader);
        let mut sink = Vec::new();
        let hold = async {
            if trickle {
                for byte in head.iter().cycle() {
                    if writer.write_all(&[*byte]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            } else {
                let _ = writer.write_all(&head).await;
                std::future::pending::<()>().await;
            }
        };
        // Until the server closes the connection (its answer read and dropped), or the end.
        let closed = async {
            while reader
                .read_until(b'\n', &mut sink)
                .await
                .is_ok_and(|n| n > 0)
            {
                sink.clear();
            }
        };
        let stopped = async {
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        tokio::select! {
            () = hold => {}
            () = closed => {}
            () = stopped => {}
        }
        // A refused attacker comes back a second later, as a persistent one would.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn siege() {
    let mut child = tokio::process::Command::new(std::env::current_exe().expect("this binary"))
        .env(SERVE, "1")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the server");
    let pid = child.id().expect("a pid");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = lines.next_line().await.expect("the address");
    let addr: SocketAddr = first.expect("a line").trim().parse().expect("an address");
    // The server's heap: held at its latest report, and the most held since `peak` was last
    // set to 0.
    let heap = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let reading = heap.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let mut numbers = line
                .split_whitespace()
                .skip(1)
                .map(|n| n.parse().unwrap_or(0));
            reading
                .0
                .store(numbers.next().unwrap_or(0), Ordering::Relaxed);
            reading
                .1
                .fetch_max(numbers.next().unwrap_or(0), Ordering::Relaxed);
        }
    });
    let held_kb = || {
        let heap = heap.clone();
        async move {
            // A report made after now.
            tokio::time::sleep(Duration::from_millis(250)).await;
            heap.0.load(Ordering::Relaxed) / 1024
        }
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (start_kb, _) = memory_kb(pid);
    let start_heap = held_kb().await;

    // 1. Idle sessions.
    let mut kept = Vec::new();
    let mut refused = 0;
    for i in 0..2 * TOKENS * 100 {
        let token = token(i % TOKENS);
        match ask(addr, &initialize(addr, &token)).await {
            (200, true, Some(session)) => kept.push((token, session)),
            (503, _, _) => refused += 1,
            other => panic!("an initialize got {other:?}"),
        }
    }
    let (sessions_kb, _) = memory_kb(pid);
    let sessions_heap = held_kb().await;
    println!(
        "idle sessions: {} kept, {refused} refused with 503; heap {start_heap} kB before, {sessions_heap} kB after: {:.1} kB a session (resident set {start_kb} kB -> {sessions_kb} kB)",
        kept.len(),
        (sessions_heap.saturating_sub(start_heap)) as f64 / kept.len().max(1) as f64
    );
    // Their clients end them, so the siege's legitimate client has room for its own.
    for (token, session) in &kept {
        let delete = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
        );
        let (status, _, _) = ask(addr, delete.as_bytes()).await;
        assert!(status < 300, "DELETE got {status}");
    }
    let (ended_kb, _) = memory_kb(pid);
    let ended_heap = held_kb().await;
    println!("the sessions ended: heap {ended_heap} kB (resident set {ended_kb} kB)");

    // 2. The siege.
    let stop = Arc::new(AtomicBool::new(false));
    let reconnects = Arc::new(AtomicU64::new(0));
    let mut attackers = tokio::task::JoinSet::new();
    let large = |head: String| {
        let mut bytes = head.into_bytes();
        bytes.extend(std::iter::repeat_n(b' ', 64 * 1024));
        bytes
    };
    let foreign = large(format!(
        "POST /mcp HTTP/1.1\r\nHost: agents.evil.example\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n",
        token(0)
    ));
    let tokenless = large(format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n"
    ));
    let loris = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Padding: ").into_bytes();
    for i in 0..1_000 {
        let head = if i % 2 == 0 {
            foreign.clone()
        } else {
            tokenless.clone()
        };
        attackers.spawn(attacker(
            addr,
            head,
            false,
            stop.clone(),
            reconnects.clone(),
        ));
    }
    for _ in 0..1_100 {
        attackers.spawn(attacker(
            addr,
            loris.clone(),
            true,
            stop.clone(),
            reconnects.clone(),
        ));
    }
    heap.1.store(0, Ordering::Relaxed);
    let began = Instant::now();
    let mut peak_kb = 0;
    let mut latencies = Vec::new();
    let mut unanswered = 0;
    // Connection: close, and a session the token's bound has room for (80 in 20 s).
    let legitimate = initialize(addr, &token(1));
    while began.elapsed() < SIEGE {
        let asked = Instant::now();
        let answered = tokio::time::timeout(Duration::from_secs(5), ask(addr, &legitimate)).await;
        match answered {
            Ok((200, true, _)) => latencies.push(asked.elapsed()),
            _ => unanswered += 1,
        }
        peak_kb = peak_kb.max(memory_kb(pid).0);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (siege_kb, hwm_kb) = memory_kb(pid);
    let siege_heap = held_kb().await;
    let peak_heap = heap.1.load(Ordering::Relaxed) / 1024;
    stop.store(true, Ordering::Relaxed);
    while attackers.join_next().await.is_some() {}
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (after_kb, _) = memory_kb(pid);
    let after_heap = held_kb().await;
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    println!(
        "siege of {} s: 1,000 large unfinished bodies (foreign Host / no token) and 1,100 slow-loris connections, {} connections opened in all",
        SIEGE.as_secs(),
        reconnects.load(Ordering::Relaxed)
    );
    println!(
        "legitimate client: {} answered, {unanswered} not; latency p50 {:.1} ms, max {:.1} ms",
        latencies.len(),
        at(0.5).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3
    );
    println!(
        "server heap: {ended_heap} kB before the siege, {peak_heap} kB at most during it, {siege_heap} kB at its end, {after_heap} kB 3 s after"
    );
    println!(
        "server resident set: {ended_kb} kB before the siege, {peak_kb} kB at most (sampled; high-water mark {hwm_kb} kB), {siege_kb} kB at its end, {after_kb} kB 3 s after"
    );
    child.kill().await.ok();
    assert_eq!(unanswered, 0, "a legitimate request went unanswered");
    assert!(
        at(1.0) < Duration::from_secs(1),
        "a legitimate request took over 1 s"
    );
}
