//! The inspector at the HTTP level, on a SQLite store (and PostgreSQL with `DATABASE_URL`):
//! the runs list (newest first, by status, paged), a run's detail with its transcript, an
//! answer refused with its field named and one accepted (recorded as answered, with its
//! history), a run not paused refused, Host and Origin refused, the bearer token, and the
//! live updates of an open run.

use crate::support::{Fixture, get, start};
use agent_contracts_runtime::store::{RunEvent, RunStatus};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_list_detail_and_answers() {
    let fixture = Fixture::sqlite("http").await;
    let server = start(fixture.store.clone(), agent_contracts_ui::Access::default()).await;

    // Newest first: the paused run was saved after the recorded one.
    let (status, body) = get(&server, "/api/runs").await;
    assert_eq!(status, 200, "{body}");
    let ids: Vec<&str> = body["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            fixture.paused.as_str(),
            fixture.recorded.as_str(),
            fixture.refused.as_str()
        ]
    );
    let recorded = &body["runs"][1];
    assert_eq!(recorded["status"], "completed");
    assert_eq!(recorded["kind"], "runtime");
    assert_eq!(recorded["workflow"], "main_agent");
    assert_eq!(body["next"], Value::Null);

    // By status, and paged.
    let (_, body) = get(&server, "/api/runs?status=paused").await;
    assert_eq!(body["runs"].as_array().unwrap().len(), 1);
    assert_eq!(body["runs"][0]["id"], fixture.paused.as_str());
    let (_, first) = get(&server, "/api/runs?limit=2").await;
    let next = first["next"].as_str().unwrap().to_owned();
    let (_, second) = get(&server, &format!("/api/runs?limit=2&before={next}")).await;
    assert_eq!(second["runs"][0]["id"], fixture.refused.as_str());
    assert_eq!(second["runs"].as_array().unwrap().len(), 1);
    assert_eq!(second["next"], Value::Null);
    let (status, body) = get(&server, "/api/runs?status=done").await;
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("`done`"), "{body}");

    // A recorded run's detail: its transcript, the model's `<script>` as data.
    let (status, detail) = get(&server, &format!("/api/runs/{}", fixture.recorded)).await;
    assert_eq!(status, 200, "{detail}");
    let events = detail["events"].as_array().unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"]["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"message"), "{kinds:?}");
    assert!(detail.to_string().contains("<script>alert(1)</script>"));
    assert_eq!(detail["question"], Value::Null);
    let history: Vec<&str> = detail["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["event"].as_str().unwrap())
        .collect();
    assert_eq!(history, ["claimed", "completed"]);
    let (status, _) = get(&server, "/api/runs/no-such-run").await;
    assert_eq!(status, 404);

    // The paused run's question.
    let (_, detail) = get(&server, &format!("/api/runs/{}", fixture.paused)).await;
    assert_eq!(
        detail["question"]["prompt"],
        "How many guests need catering?"
    );
    assert_eq!(detail["question"]["agent"], "catering_agent");

    // Answers that break the resume contract name the field.
    let answer_path = format!("/api/runs/{}/answer", fixture.paused);
    for (bad, field) in [
        (json!({"answer": ""}), "answer"),
        (json!({"answer": 5}), "answer"),
        (json!({}), "answer"),
        (json!({"answer": "x", "extra": 1}), "extra"),
    ] {
        let (status, body) = server.post(&answer_path, &bad).await;
        assert_eq!(status, 422, "{bad} -> {body}");
        assert!(body["retry"].to_string().contains(field), "{bad} -> {body}");
    }
    let (status, body) = server.post_text(&answer_path, "not json").await;
    assert_eq!(status, 400, "{body}");
    // Nothing was recorded.
    let stored = fixture.store.load(&fixture.paused).await.unwrap();
    assert_eq!(stored.status, RunStatus::Paused);

    // An answer that passes is recorded as answered.
    let (status, body) = server
        .post(
            &answer_path,
            &json!({"answer": "40 guests, two vegetarian"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "answered");
    let stored = fixture.store.load(&fixture.paused).await.unwrap();
    assert_eq!(stored.status, RunStatus::Answered);
    assert_eq!(stored.answer.as_deref(), Some("40 guests, two vegetarian"));
    let history = fixture.store.history(&fixture.paused).await.unwrap();
    assert_eq!(history.entries.last().unwrap().event, RunEvent::Answered);
    // Not paused any more: a second answer is refused.
    let (status, body) = server.post(&answer_path, &json!({"answer": "again"})).await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("answered"),
        "{body}"
    );
    // A finished run asks nothing.
    let (status, _) = server
        .post(
            &format!("/api/runs/{}/answer", fixture.recorded),
            &json!({"answer": "x"}),
        )
        .await;
    assert_eq!(status, 409);
    fixture.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_origin_and_token() {
    let fixture = Fixture::sqlite("access").await;
    let server = start(fixture.store.clone(), agent_contracts_ui::Access::default()).await;
    let client = crate::support::http_client();
    let url = format!("{}/api/runs", server.base);
    let status = |r: reqwest::Response| r.status().as_u16();
    // A rebinding page's Host, a foreign page's Origin: refused before anything is read.
    let r = client
        .get(&url)
        .header("Host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    let r = client
        .get(format!("{}/", server.base))
        .header("Host", "evil.example:80")
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    let r = client
        .get(&url)
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    let r = client
        .post(format!(
            "{}/api/runs/{}/answer",
            server.base, fixture.paused
        ))
        .header("Origin", "http://evil.example")
        .body(r#"{"answer": "x"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    assert_eq!(
        fixture.store.load(&fixture.paused).await.unwrap().status,
        RunStatus::Paused
    );
    // The page's own origin is answered.
    let r = client
        .get(&url)
        .header("Origin", server.base.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 200);

    // With a token: the API needs it, the page does not.
    let token = "0123456789abcdef-token";
    let guarded = start(
        fixture.store.clone(),
        agent_contracts_ui::Access::default().bearer_token(token),
    )
    .await;
    let url = format!("{}/api/runs", guarded.base);
    let r = client.get(&url).send().await.unwrap();
    assert_eq!(status(r), 401);
    let r = client
        .get(&url)
        .bearer_auth("wrong-token-0123456")
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 401);
    let r = client.get(&url).bearer_auth(token).send().await.unwrap();
    assert_eq!(status(r), 200);
    let page = client
        .get(format!("{}/", guarded.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    let html = page.text().await.unwrap();
    assert!(html.contains("/app.js"));
    // The script never parses text as HTML.
    let js = client
        .get(format!("{}/app.js", guarded.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!js.contains(".innerHTML") && !js.contains("insertAdjacentHTML"));
    fixture.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_run_streams_its_changes() {
    let fixture = Fixture::sqlite("live").await;
    let server = start(fixture.store.clone(), agent_contracts_ui::Access::default()).await;
    let client = crate::support::http_client();
    let mut response = client
        .get(format!(
            "{}/api/runs/{}/live?after=0",
            server.base, fixture.paused
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let mut seen = String::new();
    let read = async {
        while let Some(chunk) = response.chunk().await.unwrap() {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("\"status\":\"completed\"") {
                break;
            }
            if seen.contains("event: run") && !seen.contains("finishing") {
                seen.push_str("finishing");
                // A worker ends the run: the stream says so, then ends.
                let mut record = fixture.store.load(&fixture.paused).await.unwrap();
                record.status = RunStatus::Finished;
                fixture.store.save(&record).await.unwrap();
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), read)
        .await
        .expect("the stream said the run completed");
    assert!(seen.contains("\"status\":\"paused\""), "{seen}");
    assert!(seen.contains("\"status\":\"completed\""), "{seen}");
    fixture.close().await;
}
