//! Who may reach the inspector: the `Host` a request names, the browser `Origin` it comes
//! from, and, for the API, the bearer token it carries; the rule of `agent-contract mcp
//! --http`. Loopback names and the bound address are always answered; a page of another origin
//! (a site the browser also has open) is refused, so it can neither read runs nor answer them.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use subtle::ConstantTimeEq as _;

/// The hosts every inspector answers to: the loopback names.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Who may reach the inspector. The default answers loopback names only, from its own origin,
/// without a token; serving beyond loopback takes a token ([`bearer_token`](Self::bearer_token)),
/// which `agent-contract ui` requires as `mcp --http` does.
///
/// ```
/// let access = agent_contracts_ui::Access::default()
///     .bearer_token("0123456789abcdef0123")
///     .allowed_host("inspector.internal");
/// assert!(access.has_token());
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Access {
    token: Option<String>,
    hosts: Vec<String>,
    origins: Vec<String>,
    /// The address bound, set when serving: its `ip:port` is a host, and its origin allowed.
    bound: Option<SocketAddr>,
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    Host,
    Origin,
    NoToken,
    WrongToken,
}

impl Access {
    /// This access, with API requests required to carry `Authorization: Bearer <token>`.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// This access, also answering requests whose Host is `host` (`name` or `name:port`).
    pub fn allowed_host(mut self, host: impl Into<String>) -> Self {
        self.hosts.push(host.into().to_ascii_lowercase());
        self
    }

    /// This access, also answering browsers on `origin` (`https://app.example.com`).
    pub fn allowed_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins
            .push(origin.into().trim_end_matches('/').to_ascii_lowercase());
        self
    }

    /// Whether API requests need a token.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// This access for a server bound at `addr`.
    pub(crate) fn bound(mut self, addr: SocketAddr) -> Self {
        self.bound = Some(addr);
        self
    }

    /// Whether a request with `headers` may be served; `api`: it reads or changes runs, and
    /// needs the token when there is one.
    pub(crate) fn admit(&self, headers: &HeaderMap, api: bool) -> Result<(), Refused> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_ascii_lowercase);
        let Some(host) = host.filter(|h| self.host_allowed(h)) else {
            return Err(Refused::Host);
        };
        if let Some(origin) = headers.get(header::ORIGIN)
            && !self.origin_allowed(origin, &host)
        {
            return Err(Refused::Origin);
        }
        let Some(token) = self.token.as_deref().filter(|_| api) else {
            return Ok(());
        };
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or(Refused::NoToken)?;
        match bool::from(given.as_bytes().ct_eq(token.as_bytes())) {
            true => Ok(()),
            false => Err(Refused::WrongToken),
        }
    }

    fn host_allowed(&self, host: &str) -> bool {
        let Ok(authority) = host.parse::<axum::http::uri::Authority>() else {
            return false;
        };
        let name = authority.host();
        let bound = self.bound.map(|a| a.to_string());
        LOOPBACK_HOSTS.contains(&name)
            || bound.as_deref() == Some(host)
            || self
                .hosts
                .iter()
                .any(|allowed| allowed == name || allowed == host)
    }

    /// The page's own origin (`http://` and the Host it was served under, which passed the
    /// host check), or a listed one.
    fn origin_allowed(&self, origin: &HeaderValue, host: &str) -> bool {
        let Ok(origin) = origin.to_str() else {
            return false;
        };
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        origin == format!("http://{host}") || self.origins.contains(&origin)
    }
}

impl Refused {
    /// 403 for a host or an origin, 401 with a bearer challenge for a token.
    pub(crate) fn response(self) -> Response {
        let (status, message, challenge) = match self {
            Self::Host => (
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed",
                None,
            ),
            Self::Origin => (
                StatusCode::FORBIDDEN,
                "Forbidden: Origin is not allowed",
                None,
            ),
            Self::NoToken => (
                StatusCode::UNAUTHORIZED,
                "Unauthorized: a bearer token is required",
                Some("Bearer"),
            ),
            Self::WrongToken => (
                StatusCode::UNAUTHORIZED,
                "Unauthorized: a bearer token is required",
                Some(r#"Bearer error="invalid_token""#),
            ),
        };
        let mut response = (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            message,
        )
            .into_response();
        if let Some(challenge) = challenge {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(challenge),
            );
        }
        response
    }
}
