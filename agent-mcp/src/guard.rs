//! Who may reach the HTTP endpoint: the `Host` a request names, the browser `Origin` it comes
//! from, and the bearer token it carries, checked before its body is read.
//!
//! The checks run in the outermost layer of [`AgentServer::http_router`](crate::AgentServer):
//! a refused request reaches neither the arguments tap (which reads the body) nor rmcp. rmcp
//! has Host and Origin checks of its own, but they run after the tap; they are turned off, so
//! these are the only lists, and what is allowed here is what rmcp serves.

use crate::settings::HttpSettings;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use subtle::ConstantTimeEq as _;

/// Who made a request: the bearer token it carried (its place among
/// [`HttpSettings::bearer_token`]'s), or anyone, when the server has no token. The bounds kept
/// per client (sessions, paused runs in memory) are kept per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Client {
    Anyone,
    Token(usize),
    /// An OAuth access token's subject (a hash of its issuer and `sub`).
    Subject(u64),
}

tokio::task_local! {
    /// The client of the request being served, for rmcp's session manager, which sees no
    /// request (see `sessions`).
    pub(crate) static CLIENT: Client;
}

/// The hosts every server answers to: the loopback names.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

impl HttpSettings {
    /// The client `headers` (and the request's `uri`) come from, or why they may not be served.
    pub(crate) fn admit(&self, uri: &Uri, headers: &HeaderMap) -> Result<Client, Refused> {
        if !self.host_allowed(uri, headers) {
            tracing::warn!(host = ?headers.get(header::HOST), "refused a request for a host that is not allowed");
            return Err(Refused::Host);
        }
        if let Some(origin) = headers.get(header::ORIGIN)
            && !self.origin_allowed(origin)
        {
            tracing::warn!(
                ?origin,
                "refused a request from an origin that is not allowed"
            );
            return Err(Refused::Origin);
        }
        if self.tokens.is_empty() && self.oauth.is_none() {
            return Ok(Client::Anyone);
        }
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        let Some(given) = given else {
            return Err(Refused::NoToken);
        };
        // Every token is compared, whichever matches, so the time taken tells nothing.
        let mut matched = None;
        for (index, token) in self.tokens.iter().enumerate() {
            if bool::from(given.as_bytes().ct_eq(token.as_bytes())) {
                matched = Some(index);
            }
        }
        match matched {
            Some(index) => Ok(Client::Token(index)),
            None => {
                tracing::warn!("refused a request with a wrong bearer token");
                Err(Refused::WrongToken)
            }
        }
    }

    fn host_allowed(&self, uri: &Uri, headers: &HeaderMap) -> bool {
        // HTTP/2 carries the host in `:authority`, which a nested router may not copy to `Host`.
        let authority = match headers.get(header::HOST) {
            Some(host) => host.to_str().ok(),
            None => uri.authority().map(|a| a.as_str()),
        };
        let Some(authority) = authority.and_then(|a| a.parse::<axum::http::uri::Authority>().ok())
        else {
            return false;
        };
        let name = authority.host().to_ascii_lowercase();
        let with_port = authority.as_str().to_ascii_lowercase();
        LOOPBACK_HOSTS
            .iter()
            .copied()
            .chain(self.hosts.iter().map(String::as_str))
            .any(|allowed| allowed == name || allowed == with_port)
    }

    fn origin_allowed(&self, origin: &HeaderValue) -> bool {
        let Some(origin) = origin.to_str().ok().and_then(Origin::parse) else {
            return false;
        };
        self.origins
            .iter()
            .filter_map(|allowed| Origin::parse(allowed))
            .any(|allowed| allowed.admits(&origin))
    }
}

/// A browser origin (`scheme://host:port`), or an allowed one whose port may be any.
#[derive(Debug, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    /// `None`: any port (an allowed origin written with `:*`).
    port: Option<u16>,
}

impl Origin {
    fn parse(text: &str) -> Option<Self> {
        let (text, any_port) = match text.strip_suffix(":*") {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let uri: Uri = text.parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        // An origin is scheme, host and port only.
        if uri
            .path_and_query()
            .is_some_and(|p| !p.as_str().is_empty() && p.as_str() != "/")
        {
            return None;
        }
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        Some(Self {
            host: authority.host().to_ascii_lowercase(),
            port: match any_port {
                true => None,
                false => Some(authority.port_u16().unwrap_or(default_port)),
            },
            scheme,
        })
    }

    fn admits(&self, origin: &Origin) -> bool {
        self.scheme == origin.scheme
            && self.host == origin.host
            && self.port.is_none_or(|port| origin.port == Some(port))
    }
}

/// Why a request may not be served.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    Host,
    Origin,
    NoToken,
    WrongToken,
    /// Refused by the OAuth checks: the status and the challenge that points to the metadata.
    OAuth(StatusCode, HeaderValue),
}

impl Refused {
    /// The answer: 403 for a host or origin, 401 with a bearer challenge for a token.
    pub(crate) fn response(self) -> Response {
        match self {
            Refused::Host => refuse(
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed",
            ),
            Refused::Origin => refuse(StatusCode::FORBIDDEN, "Forbidden: Origin is not allowed"),
            Refused::NoToken => unauthorized("Bearer"),
            Refused::WrongToken => unauthorized(r#"Bearer error="invalid_token""#),
            Refused::OAuth(status, challenge) => {
                let mut response = refuse(
                    status,
                    match status {
                        StatusCode::FORBIDDEN => "Forbidden: the token lacks a required scope",
                        _ => "Unauthorized: a valid access token is required",
                    },
                );
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, challenge);
                response
            }
        }
    }
}

fn refuse(status: StatusCode, message: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        message,
    )
        .into_response()
}

fn unauthorized(challenge: &'static str) -> Response {
    let mut response = refuse(
        StatusCode::UNAUTHORIZED,
        "Unauthorized: a bearer token is required",
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}

/// The outermost layer of the HTTP router: a refused request gets its answer here, before any
/// of its body is read.
pub(crate) async fn guard(
    State(settings): State<Arc<HttpSettings>>,
    request: Request,
    next: Next,
) -> Response {
    let admitted = match settings.admit(request.uri(), request.headers()) {
        // The metadata is for clients without a token yet.
        Err(Refused::NoToken | Refused::WrongToken)
            if request
                .uri()
                .path()
                .starts_with(crate::oauth::METADATA_PATH) =>
        {
            Ok(Client::Anyone)
        }
        Err(refused @ (Refused::NoToken | Refused::WrongToken)) => match &settings.oauth {
            Some(oauth) => oauth_client(oauth, request.headers(), refused).await,
            None => Err(refused),
        },
        other => other,
    };
    match admitted {
        Ok(client) => {
            let mut request = request;
            request.extensions_mut().insert(client);
            CLIENT.scope(client, next.run(request)).await
        }
        Err(refused) => refused.response(),
    }
}

/// The client of a request that no static token admitted: its OAuth access token's subject,
/// or the refusal with a challenge that points to the metadata.
async fn oauth_client(
    oauth: &crate::oauth::OAuth,
    headers: &HeaderMap,
    refused: Refused,
) -> Result<Client, Refused> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let Some(token) = token.filter(|_| refused == Refused::WrongToken) else {
        return Err(Refused::OAuth(
            StatusCode::UNAUTHORIZED,
            oauth.challenge(headers, None),
        ));
    };
    match oauth.verify(token).await {
        Ok(subject) => Ok(Client::Subject(subject)),
        Err(error) => {
            tracing::warn!(%error, "refused an access token");
            Err(Refused::OAuth(
                crate::oauth::status_of(&error),
                oauth.challenge(headers, Some(&error)),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| (name.clone(), HeaderValue::from_str(value).unwrap()))
            .collect()
    }

    fn status(access: &HttpSettings, pairs: &[(header::HeaderName, &str)]) -> Option<StatusCode> {
        let uri: Uri = "/mcp".parse().unwrap();
        access
            .admit(&uri, &headers(pairs))
            .err()
            .map(|r| r.response().status())
    }

    #[test]
    fn loopback_hosts_pass_and_others_need_listing() {
        let open = HttpSettings::default();
        for host in ["localhost", "localhost:8080", "127.0.0.1:3000", "[::1]:9"] {
            assert_eq!(status(&open, &[(header::HOST, host)]), None, "{host}");
        }
        for host in [
            "evil.example",
            "localhost.evil.example",
            "127.0.0.2",
            "[::2]:80",
        ] {
            assert_eq!(
                status(&open, &[(header::HOST, host)]),
                Some(StatusCode::FORBIDDEN),
                "{host}"
            );
        }
        assert_eq!(
            status(&open, &[]),
            Some(StatusCode::FORBIDDEN),
            "no host at all"
        );
        let named = HttpSettings::default()
            .allowed_host("Agents.Example.com")
            .allowed_host("10.0.0.5:8080");
        assert_eq!(
            status(&named, &[(header::HOST, "agents.example.com:443")]),
            None
        );
        assert_eq!(status(&named, &[(header::HOST, "10.0.0.5:8080")]), None);
        assert_eq!(
            status(&named, &[(header::HOST, "10.0.0.5:8081")]),
            Some(StatusCode::FORBIDDEN)
        );
    }

    #[test]
    fn a_present_origin_must_be_listed_with_its_port() {
        let host = (header::HOST, "localhost");
        let access = HttpSettings::default()
            .allowed_origin("https://app.example.com")
            .allowed_origin("http://localhost:*");
        for origin in [
            "https://app.example.com",
            "https://app.example.com:443",
            "http://localhost:6274",
            "http://localhost",
        ] {
            assert_eq!(
                status(&access, &[host.clone(), (header::ORIGIN, origin)]),
                None
            );
        }
        for origin in [
            "https://app.example.com:8443",
            "http://app.example.com",
            "https://evil.example",
            "null",
            "https://app.example.com.evil.example",
            "not an origin",
        ] {
            assert_eq!(
                status(&access, &[host.clone(), (header::ORIGIN, origin)]),
                Some(StatusCode::FORBIDDEN),
                "{origin}"
            );
        }
        // No allowed origin at all: every browser is refused, every other client served.
        let none = HttpSettings::default();
        assert_eq!(
            status(
                &none,
                &[host.clone(), (header::ORIGIN, "http://localhost:3000")]
            ),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(status(&none, &[host]), None);
    }

    #[test]
    fn the_token_is_required_whole() {
        let host = (header::HOST, "localhost");
        let access = HttpSettings::default().bearer_token("s3cret-token");
        let challenge = |pairs: &[(header::HeaderName, &str)]| {
            let uri: Uri = "/mcp".parse().unwrap();
            let response = access.admit(&uri, &headers(pairs)).unwrap_err().response();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
            response.headers()[header::WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(challenge(std::slice::from_ref(&host)), "Bearer");
        for wrong in [
            "Bearer s3cret",
            "Bearer s3cret-token2",
            "Bearer ",
            "bearer s3cret-token",
        ] {
            let pairs = [host.clone(), (header::AUTHORIZATION, wrong)];
            let expected = match wrong.starts_with("Bearer ") {
                true => r#"Bearer error="invalid_token""#,
                false => "Bearer",
            };
            assert_eq!(challenge(&pairs), expected, "{wrong}");
        }
        assert_eq!(
            status(
                &access,
                &[host, (header::AUTHORIZATION, "Bearer s3cret-token")]
            ),
            None
        );
        assert!(!format!("{access:?}").contains("s3cret"));
    }

    #[test]
    fn each_token_is_a_client_of_its_own() {
        let uri: Uri = "/mcp".parse().unwrap();
        let host = (header::HOST, "localhost");
        let client = |access: &HttpSettings, token: &str| {
            let auth = format!("Bearer {token}");
            access
                .admit(
                    &uri,
                    &headers(&[host.clone(), (header::AUTHORIZATION, &auth)]),
                )
                .ok()
        };
        let two = HttpSettings::default()
            .bearer_token("first-client-token")
            .bearer_token("second-client-token");
        assert_eq!(client(&two, "first-client-token"), Some(Client::Token(0)));
        assert_eq!(client(&two, "second-client-token"), Some(Client::Token(1)));
        assert_eq!(client(&two, "third-client-token"), None);
        let open = HttpSettings::default();
        assert_eq!(
            open.admit(&uri, &headers(std::slice::from_ref(&host))).ok(),
            Some(Client::Anyone)
        );
    }
}
