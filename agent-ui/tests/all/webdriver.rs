//! A small WebDriver client over reqwest, driving Debian's headless Chromium through its
//! chromedriver: a session, navigation, elements found by CSS selector (waited for), their
//! text and attributes, clicks, typing, and a script's value. `None` when chromium or
//! chromedriver is not installed (the tests then skip, saying so; `.ci/run` installs both).

use serde_json::{Value, json};
use std::process::Stdio;
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The key WebDriver names an element by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    driver: tokio::process::Child,
    client: reqwest::Client,
    session: String,
    profile: std::path::PathBuf,
}

pub struct Element(String);

impl Browser {
    /// A headless Chromium session, or `None` (with the reason printed) when chromium or
    /// chromedriver is missing.
    pub async fn start() -> Option<Self> {
        for path in [CHROMIUM, CHROMEDRIVER] {
            if !std::path::Path::new(path).exists() {
                println!(
                    "skipped: {path} is missing (apt-get install chromium chromium-driver; .ci/run installs them)"
                );
                return None;
            }
        }
        // A free port for the driver (it takes no port 0).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = tokio::process::Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver starts");
        // reqwest's rustls has no crypto provider of its own in a workspace build.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = client.get(format!("{base}/status")).send().await;
            if let Ok(r) = ready
                && let Ok(v) = r.json_text().await
                && v["value"]["ready"] == true
            {
                break;
            }
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile =
            std::env::temp_dir().join(format!("agent-ui-chromium-{}-{port}", std::process::id()));
        // The flags of a closed machine: no background connections, no sandbox as root.
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1280,2000",
        ];
        let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        args.push(format!("--user-data-dir={}", profile.display()));
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
        }}});
        let created = client
            .post(format!("{base}/session"))
            .body(capabilities.to_string())
            .send()
            .await
            .unwrap()
            .json_text()
            .await
            .unwrap();
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {created}"))
            .to_owned();
        Some(Self {
            driver,
            client,
            session: format!("{base}/session/{session}"),
            profile,
        })
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        request.send().await.unwrap().json_text().await.unwrap()
    }

    /// Opens `url`.
    pub async fn open(&self, url: &str) {
        let done = self
            .call(reqwest::Method::POST, "/url", Some(json!({"url": url})))
            .await;
        assert!(done["value"].is_null(), "{done}");
    }

    /// The first element `css` selects, waited for up to 10 s.
    pub async fn find(&self, css: &str) -> Element {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let found = self
                .call(
                    reqwest::Method::POST,
                    "/element",
                    Some(json!({"using": "css selector", "value": css})),
                )
                .await;
            if let Some(id) = found["value"][ELEMENT].as_str() {
                return Element(id.to_owned());
            }
            assert!(Instant::now() < deadline, "no element `{css}`: {found}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits up to 10 s for `script` (a function body that returns a value) to return true.
    pub async fn wait_for(&self, what: &str, script: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.script(script).await != Value::Bool(true) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// What `script` (a function body) returns.
    pub async fn script(&self, script: &str) -> Value {
        let done = self
            .call(
                reqwest::Method::POST,
                "/execute/sync",
                Some(json!({"script": script, "args": []})),
            )
            .await;
        done["value"].clone()
    }

    /// The element's visible text.
    pub async fn text(&self, element: &Element) -> String {
        let got = self
            .call(
                reqwest::Method::GET,
                &format!("/element/{}/text", element.0),
                None,
            )
            .await;
        got["value"].as_str().unwrap_or_default().to_owned()
    }

    /// The element's attribute `name` (`None` when it has none).
    pub async fn attribute(&self, element: &Element, name: &str) -> Option<String> {
        let got = self
            .call(
                reqwest::Method::GET,
                &format!("/element/{}/attribute/{name}", element.0),
                None,
            )
            .await;
        got["value"].as_str().map(str::to_owned)
    }

    /// Clicks the element.
    pub async fn click(&self, element: &Element) {
        let done = self
            .call(
                reqwest::Method::POST,
                &format!("/element/{}/click", element.0),
                Some(json!({})),
            )
            .await;
        assert!(done["value"].is_null(), "{done}");
    }

    /// Types `text` into the element (a key at a time, as a person does).
    pub async fn type_text(&self, element: &Element, text: &str) {
        let done = self
            .call(
                reqwest::Method::POST,
                &format!("/element/{}/value", element.0),
                Some(json!({"text": text})),
            )
            .await;
        assert!(done["value"].is_null(), "{done}");
    }

    /// Ends the session and the driver.
    pub async fn close(mut self) {
        self.call(reqwest::Method::DELETE, "", None).await;
        let _ = self.driver.kill().await;
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// A response's body as JSON (WebDriver answers JSON; reqwest's `json` feature is not on).
trait JsonText {
    async fn json_text(self) -> Result<Value, reqwest::Error>;
}

impl JsonText for reqwest::Response {
    async fn json_text(self) -> Result<Value, reqwest::Error> {
        let text = self.text().await?;
        Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }
}
