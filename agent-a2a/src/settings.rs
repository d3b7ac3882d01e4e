//! The settings of the HTTP endpoint: who may reach it (checked in `guard`) and how long a
//! slow client may hold a connection. The same settings, and the same defaults, as
//! agent-contracts-mcp's endpoint.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Who may reach [`A2aServer`](crate::A2aServer)'s HTTP endpoint, and how long a slow
/// client may hold a connection.
///
/// By default: requests naming a loopback host (`localhost`, `127.0.0.1`, `[::1]`, any port),
/// from no browser origin (a request without `Origin` passes, as non-browser clients send
/// none), without a token; a request's headers within 10 s, its body within 30 s, at most 512
/// connections at once. A server that listens beyond loopback needs the host names its
/// clients use, and a token.
///
/// ```
/// use agent_contracts_a2a::HttpSettings;
///
/// let settings = HttpSettings::default()
///     .bearer_token("a long random secret")
///     .allowed_host("agents.example.com")
///     .allowed_origin("https://app.example.com");
/// assert!(format!("{settings:?}").contains(r#"tokens: ["***"]"#));
/// ```
#[derive(Clone)]
pub struct HttpSettings {
    pub(crate) tokens: Vec<Arc<str>>,
    pub(crate) hosts: Vec<String>,
    pub(crate) origins: Vec<String>,
    pub(crate) header_timeout: Duration,
    pub(crate) body_timeout: Duration,
    pub(crate) max_connections: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            tokens: Vec::new(),
            hosts: Vec::new(),
            origins: Vec::new(),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 512,
        }
    }
}

impl HttpSettings {
    /// Requests must carry `Authorization: Bearer <token>`; others get 401 with
    /// `WWW-Authenticate: Bearer`. The token is compared in constant time and never shown.
    ///
    /// Called again, it admits one more token: each token is a client of its own, with its
    /// own tasks: another token can neither read, answer nor cancel them.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.tokens.push(Arc::from(token.into()));
        self
    }

    /// Also answers requests whose `Host` is `host`: a name (any port) or `name:port`.
    pub fn allowed_host(mut self, host: impl Into<String>) -> Self {
        self.hosts.push(host.into().to_ascii_lowercase());
        self
    }

    /// Also answers browsers on `origin`: `scheme://host`, with `:port` (that port only),
    /// `:*` (any port) or no port (the scheme's default port). Requests from any other
    /// `Origin` get 403.
    pub fn allowed_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.push(origin.into().to_ascii_lowercase());
        self
    }

    /// A connection that has not sent a request's headers this long after it opened (or after
    /// its last response) is closed: a slow or silent client holds no connection.
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// An accepted request whose body has not arrived this long after its headers gets 408.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Connections held at once, so the process keeps file descriptors for the ones it
    /// serves: past it, a new connection is closed as soon as it is accepted.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }
}

impl fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSettings")
            .field("tokens", &vec!["***"; self.tokens.len()])
            .field("hosts", &self.hosts)
            .field("origins", &self.origins)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("max_connections", &self.max_connections)
            .finish()
    }
}
