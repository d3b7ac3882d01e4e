//! The settings of the HTTP endpoint: who may reach it (checked in `guard`) and how long a
//! slow client may hold a connection.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Who may reach [`AgentServer`](crate::AgentServer)'s HTTP endpoint, and how long a slow
/// client may hold a connection.
///
/// By default: requests naming a loopback host (`localhost`, `127.0.0.1`, `[::1]`, any port),
/// from no browser origin (a request without `Origin` passes, as non-browser clients send
/// none), without a token; a request's headers within 10 s, its body within 30 s, at most 512
/// connections at once, 64 MiB of request bodies held at once, and [`Sessions::default`]. A
/// server that listens beyond loopback needs the host names its clients use, and a token.
///
/// ```
/// use agent_contracts_mcp::HttpSettings;
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
    pub(crate) oauth: Option<crate::oauth::OAuth>,
    pub(crate) hosts: Vec<String>,
    pub(crate) origins: Vec<String>,
    pub(crate) header_timeout: Duration,
    pub(crate) body_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) max_buffered_bytes: usize,
    pub(crate) sessions: Sessions,
}

/// What the HTTP endpoint keeps of a client between its requests.
///
/// A client on protocol `2026-07-28` or later makes every request self-contained, and is
/// served that way whatever this says. A client on an older version opens a session with
/// `initialize` and names it in `Mcp-Session-Id` on each request after, unless the server gives
/// it none ([`Sessions::Stateless`]).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sessions {
    /// Nothing is kept: every request is served on its own (the SDK's stateless mode), so any
    /// instance behind one address serves any request, and paused workflow runs go on through
    /// whichever instance shares their store. An older client gets no session ID, and a
    /// `GET` for a stream of server messages gets 405; every call's progress and answer come
    /// on its own response, as the tools here need nothing else.
    Stateless,
    /// Older clients' sessions live in this process's memory (one instance serves them) and
    /// end after 5 idle minutes: at most `max` at once, and at most `per_client` for each
    /// bearer token (when tokens are set), so no client can take every session. An
    /// `initialize` past either bound gets 503 with a JSON-RPC error.
    InMemory {
        /// Sessions at once, for all clients.
        max: usize,
        /// Sessions at once for one bearer token.
        per_client: usize,
    },
}

impl Default for Sessions {
    /// In memory: at most 1,000 sessions, 100 per token.
    fn default() -> Self {
        Sessions::InMemory {
            max: 1_000,
            per_client: 100,
        }
    }
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            tokens: Vec::new(),
            oauth: None,
            hosts: Vec::new(),
            origins: Vec::new(),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 512,
            max_buffered_bytes: 64 * 1024 * 1024,
            sessions: Sessions::default(),
        }
    }
}

impl HttpSettings {
    /// Requests must carry `Authorization: Bearer <token>`; others get 401 with
    /// `WWW-Authenticate: Bearer`. The token is compared in constant time and never shown.
    ///
    /// Called again, it admits one more token: each token is a client of its own, with its
    /// own share of the sessions and of the paused runs the server keeps in memory, so one
    /// client cannot crowd out or evict another's.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.tokens.push(Arc::from(token.into()));
        self
    }

    /// Also takes OAuth access tokens: JWTs of `oauth`'s issuer, for its audience, with its
    /// scopes, checked against its JWKS. The endpoint then serves its protected-resource
    /// metadata at [`METADATA_PATH`](crate::oauth::METADATA_PATH) (and with `/mcp` after it),
    /// and a request without a token, or with one refused, gets 401 (403 for a missing scope)
    /// with a `WWW-Authenticate` that points to the metadata. Static tokens
    /// ([`bearer_token`](Self::bearer_token)) are still taken beside them.
    pub fn oauth(mut self, oauth: crate::oauth::OAuth) -> Self {
        self.oauth = Some(oauth);
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
    /// serves. Past it, the oldest connection with no request in flight (silent, slow with its
    /// headers, or idle between requests) is closed to make room, so slow clients cannot lock
    /// real ones out; a new connection is closed at once only when every open one is serving
    /// a request.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// Bytes of request bodies held at once, over all connections: a request whose body
    /// would pass it gets 503 with a JSON-RPC error (and `Retry-After`) instead of waiting,
    /// so many large bodies at once cannot exhaust the server's memory. At least one message
    /// of the largest size the server reads always fits.
    pub fn max_buffered_bytes(mut self, max: usize) -> Self {
        self.max_buffered_bytes = max;
        self
    }

    /// What is kept of a client between its requests: see [`Sessions`].
    pub fn sessions(mut self, sessions: Sessions) -> Self {
        self.sessions = sessions;
        self
    }
}

impl fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSettings")
            .field("tokens", &vec!["***"; self.tokens.len()])
            .field("oauth", &self.oauth)
            .field("hosts", &self.hosts)
            .field("origins", &self.origins)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("max_connections", &self.max_connections)
            .field("max_buffered_bytes", &self.max_buffered_bytes)
            .field("sessions", &self.sessions)
            .finish()
    }
}
