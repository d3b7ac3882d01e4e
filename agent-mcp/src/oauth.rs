//! OAuth access tokens at the HTTP endpoint, as the MCP authorization spec has a resource
//! server take them: the protected-resource metadata (RFC 9728) that names the authorization
//! server, a `WWW-Authenticate` challenge that points to it, and JWT access tokens checked
//! against the authorization server's JWKS (signature, issuer, audience, expiry, scopes).
//!
//! The keys are fetched from the JWKS URL on the first token, kept for ten minutes, and
//! fetched again (at most once every 30 s) when a token names a key not among them.

use crate::paths::HTTP_PATH;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature;
use serde_json::{Value, json};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Where protected-resource metadata is served (RFC 9728), and, with the endpoint's path
/// appended, the URL a challenge points to.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Most bytes of an access token read.
const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Most bytes of a JWKS document read.
const MAX_JWKS_BYTES: usize = 1024 * 1024;
/// Clock skew allowed on `exp` and `nbf`.
const LEEWAY_SECS: u64 = 60;
/// How long fetched keys are used before they are fetched again.
const KEYS_TTL: Duration = Duration::from_secs(600);
/// The least time between two fetches that a token naming an unknown key may cause.
const REFETCH_AFTER: Duration = Duration::from_secs(30);

/// The authorization server whose JWT access tokens the endpoint takes, beside any static
/// bearer tokens ([`HttpSettings::oauth`](crate::HttpSettings::oauth)).
///
/// ```
/// use agent_contracts_mcp::{HttpSettings, oauth::OAuth};
///
/// let oauth = OAuth::new(
///     "https://auth.example.com",
///     "https://auth.example.com/.well-known/jwks.json",
///     "https://agents.example.com/mcp",
/// )
/// .scope("agents:call");
/// let settings = HttpSettings::default().oauth(oauth);
/// ```
#[derive(Clone)]
pub struct OAuth {
    issuer: String,
    jwks_url: String,
    audience: String,
    scopes: Vec<String>,
    resource: Option<String>,
    keys: Arc<tokio::sync::Mutex<Keys>>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("issuer", &self.issuer)
            .field("jwks_url", &self.jwks_url)
            .field("audience", &self.audience)
            .field("scopes", &self.scopes)
            .field("resource", &self.resource)
            .finish()
    }
}

impl OAuth {
    /// Tokens issued by `issuer` (the `iss` claim, exactly), signed by a key of the JWKS at
    /// `jwks_url`, for `audience` (the `aud` claim, or one of its values). The audience is the
    /// resource the metadata names when it is an `http(s)` URL, as the MCP spec has tokens
    /// bound to the server's URL.
    pub fn new(
        issuer: impl Into<String>,
        jwks_url: impl Into<String>,
        audience: impl Into<String>,
    ) -> Self {
        Self {
            issuer: issuer.into(),
            jwks_url: jwks_url.into(),
            audience: audience.into(),
            scopes: Vec::new(),
            resource: None,
            keys: Arc::default(),
        }
    }

    /// Tokens must also carry `scope` (in `scope`, space-separated, or `scp`); called again,
    /// one more is required. The metadata lists them in `scopes_supported`.
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scopes.push(scope.into());
        self
    }

    /// The resource the metadata names, when it is not the audience (a URL such as
    /// `https://agents.example.com/mcp`).
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// The resource: set, or the audience when it is a URL, or this endpoint as the request
    /// names it (`http://HOST/mcp`).
    fn resource_for(&self, headers: &HeaderMap) -> String {
        if let Some(resource) = &self.resource {
            return resource.clone();
        }
        if self.audience.starts_with("https://") || self.audience.starts_with("http://") {
            return self.audience.clone();
        }
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost");
        format!("http://{host}{HTTP_PATH}")
    }

    /// The metadata's URL for `resource`: the well-known path, then the resource's path.
    fn metadata_url(resource: &str) -> String {
        match reqwest::Url::parse(resource) {
            Ok(url) => {
                let path = url.path().trim_end_matches('/');
                let origin = url.origin().ascii_serialization();
                format!("{origin}{METADATA_PATH}{path}")
            }
            Err(_) => METADATA_PATH.to_owned(),
        }
    }

    /// The protected-resource metadata document (RFC 9728).
    pub(crate) fn metadata(&self, headers: &HeaderMap) -> Value {
        let mut document = json!({
            "resource": self.resource_for(headers),
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes.is_empty() {
            document["scopes_supported"] = json!(self.scopes);
        }
        document
    }

    /// The `WWW-Authenticate` value of a refusal: `Bearer`, the metadata URL, the required
    /// scopes, and the error when a token was given.
    pub(crate) fn challenge(&self, headers: &HeaderMap, error: Option<&TokenError>) -> HeaderValue {
        let resource = self.resource_for(headers);
        let mut value = format!(
            r#"Bearer resource_metadata="{}""#,
            Self::metadata_url(&resource)
        );
        if !self.scopes.is_empty() {
            value.push_str(&format!(r#", scope="{}""#, self.scopes.join(" ")));
        }
        if let Some(error) = error {
            let code = match error {
                TokenError::Scope(_) => "insufficient_scope",
                _ => "invalid_token",
            };
            // The description is this crate's own text: no quote or control character.
            let description: String = error
                .to_string()
                .chars()
                .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
                .collect();
            value.push_str(&format!(
                r#", error="{code}", error_description="{description}""#
            ));
        }
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
    }

    /// The client a token stands for (a hash of its issuer and subject), or why it is refused.
    pub(crate) async fn verify(&self, token: &str) -> Result<u64, TokenError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(TokenError::Malformed("longer than 16 KiB".into()));
        }
        let jwt = Jwt::parse(token)?;
        let key = self.key_for(&jwt).await?;
        key.verify(&jwt)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        check_claims(&jwt.claims, &self.issuer, &self.audience, &self.scopes, now)?;
        use sha2::Digest as _;
        let mut hash = sha2::Sha256::new();
        hash.update(self.issuer.as_bytes());
        hash.update([0]);
        hash.update(jwt.claims["sub"].as_str().unwrap_or("").as_bytes());
        let digest = hash.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        Ok(u64::from_be_bytes(first))
    }

    /// The key that signed `jwt`: among those fetched, or among those fetched again.
    async fn key_for(&self, jwt: &Jwt) -> Result<Jwk, TokenError> {
        let mut keys = self.keys.lock().await;
        let stale = keys
            .fetched
            .is_none_or(|at| at.elapsed() > KEYS_TTL || keys.set.is_empty());
        if !stale && let Some(key) = keys.find(jwt) {
            return Ok(key);
        }
        let may_fetch = keys
            .fetched
            .is_none_or(|at| stale || at.elapsed() > REFETCH_AFTER);
        if may_fetch {
            keys.set = fetch_jwks(&self.jwks_url).await?;
            keys.fetched = Some(Instant::now());
        }
        keys.find(jwt).ok_or_else(|| {
            TokenError::Signature(match &jwt.kid {
                Some(kid) => format!("no key `{kid}` in the JWKS"),
                None => format!("no {} key in the JWKS", jwt.alg),
            })
        })
    }
}

/// Why an access token is refused. It says so in `error_description`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Not a JWT this server reads.
    #[error("the token is not a JWT: {0}")]
    Malformed(String),
    /// The signature does not verify, or no key of the JWKS made it.
    #[error("the token's signature does not verify: {0}")]
    Signature(String),
    /// The JWKS could not be fetched or read.
    #[error("the authorization server's keys could not be read: {0}")]
    Keys(String),
    /// A claim is wrong: issuer, audience, expiry.
    #[error("{0}")]
    Claim(String),
    /// A required scope is missing.
    #[error("the token lacks the scope {0}")]
    Scope(String),
}

/// The status a refused token gets: 403 for a missing scope, else 401.
pub(crate) fn status_of(error: &TokenError) -> StatusCode {
    match error {
        TokenError::Scope(_) => StatusCode::FORBIDDEN,
        _ => StatusCode::UNAUTHORIZED,
    }
}

/// A JWT, split and decoded; its signature not yet checked.
struct Jwt {
    alg: String,
    kid: Option<String>,
    claims: Value,
    signed: Vec<u8>,
    signature: Vec<u8>,
}

impl Jwt {
    fn parse(token: &str) -> Result<Self, TokenError> {
        let malformed = |what: &str| TokenError::Malformed(what.to_owned());
        let mut parts = token.split('.');
        let (Some(head), Some(body), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed("not three dot-separated parts"));
        };
        let decode = |part: &str, what: &str| {
            URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| malformed(&format!("its {what} is not base64url")))
        };
        let header: Value = serde_json::from_slice(&decode(head, "header")?)
            .map_err(|_| malformed("its header is not JSON"))?;
        let claims: Value = serde_json::from_slice(&decode(body, "payload")?)
            .map_err(|_| malformed("its payload is not JSON"))?;
        if !claims.is_object() {
            return Err(malformed("its payload is not a JSON object"));
        }
        let alg = header["alg"]
            .as_str()
            .ok_or_else(|| malformed("its header names no `alg`"))?
            .to_owned();
        Ok(Self {
            alg,
            kid: header["kid"].as_str().map(str::to_owned),
            claims,
            signed: format!("{head}.{body}").into_bytes(),
            signature: decode(signature, "signature")?,
        })
    }
}

/// The keys of the JWKS, and when they were fetched.
#[derive(Default)]
struct Keys {
    set: Vec<Jwk>,
    fetched: Option<Instant>,
}

impl Keys {
    fn find(&self, jwt: &Jwt) -> Option<Jwk> {
        let fits = |key: &&Jwk| key.fits(&jwt.alg);
        match &jwt.kid {
            Some(kid) => self
                .set
                .iter()
                .filter(fits)
                .find(|key| key.kid.as_deref() == Some(kid)),
            None => self.set.iter().find(fits),
        }
        .cloned()
    }
}

/// One key of a JWKS: its id, the algorithm it is for (when it says), and its public part.
#[derive(Clone)]
struct Jwk {
    kid: Option<String>,
    alg: Option<String>,
    public: Public,
}

#[derive(Clone)]
enum Public {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// An uncompressed point (0x04, x, y) on `crv`.
    Ec {
        crv: String,
        point: Vec<u8>,
    },
    Ed25519(Vec<u8>),
}

impl Jwk {
    fn read(key: &Value) -> Option<Self> {
        let bytes = |name: &str| URL_SAFE_NO_PAD.decode(key[name].as_str()?).ok();
        let public = match key["kty"].as_str()? {
            "RSA" => Public::Rsa {
                n: bytes("n")?,
                e: bytes("e")?,
            },
            "EC" => {
                let mut point = vec![4];
                point.extend(bytes("x")?);
                point.extend(bytes("y")?);
                Public::Ec {
                    crv: key["crv"].as_str()?.to_owned(),
                    point,
                }
            }
            "OKP" if key["crv"] == "Ed25519" => Public::Ed25519(bytes("x")?),
            _ => return None,
        };
        // A key for encryption only is not a signing key.
        if key["use"].as_str().is_some_and(|u| u != "sig") {
            return None;
        }
        Some(Self {
            kid: key["kid"].as_str().map(str::to_owned),
            alg: key["alg"].as_str().map(str::to_owned),
            public,
        })
    }

    /// Whether this key may have made a signature of `alg`.
    fn fits(&self, alg: &str) -> bool {
        if self.alg.as_deref().is_some_and(|own| own != alg) {
            return false;
        }
        match (&self.public, alg) {
            (Public::Rsa { .. }, "RS256" | "RS384" | "RS512" | "PS256" | "PS384" | "PS512") => true,
            (Public::Ec { crv, .. }, "ES256") => crv == "P-256",
            (Public::Ec { crv, .. }, "ES384") => crv == "P-384",
            (Public::Ed25519(_), "EdDSA" | "Ed25519") => true,
            _ => false,
        }
    }

    fn verify(&self, jwt: &Jwt) -> Result<(), TokenError> {
        let refused = || TokenError::Signature("the key did not make it".into());
        let (message, sig) = (&jwt.signed[..], &jwt.signature[..]);
        match &self.public {
            Public::Rsa { n, e } => {
                let params = match jwt.alg.as_str() {
                    "RS256" => &signature::RSA_PKCS1_2048_8192_SHA256,
                    "RS384" => &signature::RSA_PKCS1_2048_8192_SHA384,
                    "RS512" => &signature::RSA_PKCS1_2048_8192_SHA512,
                    "PS256" => &signature::RSA_PSS_2048_8192_SHA256,
                    "PS384" => &signature::RSA_PSS_2048_8192_SHA384,
                    "PS512" => &signature::RSA_PSS_2048_8192_SHA512,
                    _ => return Err(refused()),
                };
                signature::RsaPublicKeyComponents { n, e }
                    .verify(params, message, sig)
                    .map_err(|_| refused())
            }
            Public::Ec { point, .. } => {
                let algorithm: &'static dyn signature::VerificationAlgorithm =
                    match jwt.alg.as_str() {
                        "ES256" => &signature::ECDSA_P256_SHA256_FIXED,
                        "ES384" => &signature::ECDSA_P384_SHA384_FIXED,
                        _ => return Err(refused()),
                    };
                signature::UnparsedPublicKey::new(algorithm, point)
                    .verify(message, sig)
                    .map_err(|_| refused())
            }
            Public::Ed25519(x) => signature::UnparsedPublicKey::new(&signature::ED25519, x)
                .verify(message, sig)
                .map_err(|_| refused()),
        }
    }
}

/// The issuer, audience, expiry, start and scopes of `claims`, at `now` (seconds since the
/// epoch).
fn check_claims(
    claims: &Value,
    issuer: &str,
    audience: &str,
    scopes: &[String],
    now: u64,
) -> Result<(), TokenError> {
    let claim = |text: String| TokenError::Claim(text);
    if claims["iss"].as_str() != Some(issuer) {
        return Err(claim(format!("the token was not issued by {issuer}")));
    }
    let audiences: Vec<&str> = match &claims["aud"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences.contains(&audience) {
        return Err(claim(format!(
            "the token is not for the audience {audience}"
        )));
    }
    let Some(exp) = claims["exp"].as_u64() else {
        return Err(claim("the token has no expiry (exp)".into()));
    };
    if now >= exp.saturating_add(LEEWAY_SECS) {
        return Err(claim("the token has expired".into()));
    }
    if claims["nbf"]
        .as_u64()
        .is_some_and(|nbf| nbf > now.saturating_add(LEEWAY_SECS))
    {
        return Err(claim("the token is not valid yet (nbf)".into()));
    }
    let granted: Vec<&str> = match (&claims["scope"], &claims["scp"]) {
        (Value::String(text), _) | (_, Value::String(text)) => text.split_whitespace().collect(),
        (_, Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for scope in scopes {
        if !granted.contains(&scope.as_str()) {
            return Err(TokenError::Scope(scope.clone()));
        }
    }
    Ok(())
}

/// The signing keys of the JWKS at `url`.
async fn fetch_jwks(url: &str) -> Result<Vec<Jwk>, TokenError> {
    let keys = |text: String| TokenError::Keys(format!("{}: {text}", crate::tls::shown_url(url)));
    crate::tls::install_crypto_provider();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| keys(e.to_string()))?;
    let mut response = client
        .get(url)
        .header(header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| keys(e.without_url().to_string()))?;
    if !response.status().is_success() {
        return Err(keys(format!("HTTP {}", response.status())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| keys(e.without_url().to_string()))?
    {
        if body.len() + chunk.len() > MAX_JWKS_BYTES {
            return Err(keys("the JWKS is larger than 1 MiB".into()));
        }
        body.extend_from_slice(&chunk);
    }
    let document: Value =
        serde_json::from_slice(&body).map_err(|e| keys(format!("not JSON: {e}")))?;
    let Some(listed) = document["keys"].as_array() else {
        return Err(keys("no `keys` array".into()));
    };
    Ok(listed.iter().filter_map(Jwk::read).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(extra: Value) -> Value {
        let mut base =
            json!({"iss": "https://as", "aud": "https://rs/mcp", "exp": 2_000, "sub": "u"});
        for (k, v) in extra.as_object().unwrap() {
            base[k] = v.clone();
        }
        base
    }

    fn check(claims: &Value, scopes: &[&str], now: u64) -> Result<(), String> {
        let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        check_claims(claims, "https://as", "https://rs/mcp", &scopes, now)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_claims_are_checked_each_with_its_reason() {
        assert_eq!(check(&claims(json!({})), &[], 1_000), Ok(()));
        assert_eq!(
            check(&claims(json!({"aud": ["x", "https://rs/mcp"]})), &[], 1_000),
            Ok(())
        );
        assert_eq!(
            check(&claims(json!({"iss": "https://other"})), &[], 1_000),
            Err("the token was not issued by https://as".into())
        );
        assert_eq!(
            check(&claims(json!({"aud": "https://other/mcp"})), &[], 1_000),
            Err("the token is not for the audience https://rs/mcp".into())
        );
        assert_eq!(
            check(&claims(json!({})), &[], 2_060),
            Err("the token has expired".into())
        );
        assert_eq!(check(&claims(json!({})), &[], 2_059), Ok(()), "the leeway");
        assert_eq!(
            check(&claims(json!({"nbf": 1_100})), &[], 1_000),
            Err("the token is not valid yet (nbf)".into())
        );
        assert_eq!(
            check(&claims(json!({"scope": "a b"})), &["b", "a"], 1_000),
            Ok(())
        );
        assert_eq!(
            check(&claims(json!({"scp": ["a"]})), &["a", "c"], 1_000),
            Err("the token lacks the scope c".into())
        );
        let mut no_exp = claims(json!({}));
        no_exp.as_object_mut().unwrap().remove("exp");
        assert_eq!(
            check(&no_exp, &[], 1_000),
            Err("the token has no expiry (exp)".into())
        );
    }

    #[test]
    fn a_token_that_is_not_a_jwt_is_refused_before_any_key_is_fetched() {
        for (token, reason) in [
            ("abc", "not three dot-separated parts"),
            ("a.b.c.d", "not three dot-separated parts"),
            ("!!.e30.AA", "its header is not base64url"),
            ("e30.e30.AA", "its header names no `alg`"),
        ] {
            match Jwt::parse(token) {
                Err(TokenError::Malformed(why)) => assert_eq!(why, reason, "{token}"),
                _ => panic!("{token} parsed"),
            }
        }
    }

    #[test]
    fn the_challenge_points_to_the_metadata_of_the_resource() {
        let oauth = OAuth::new("https://as", "https://as/jwks", "https://rs.example/mcp")
            .scope("agents:call");
        let headers = HeaderMap::new();
        assert_eq!(
            oauth.challenge(&headers, None),
            r#"Bearer resource_metadata="https://rs.example/.well-known/oauth-protected-resource/mcp", scope="agents:call""#
        );
        let expired = TokenError::Claim("the token has expired".into());
        assert_eq!(
            oauth.challenge(&headers, Some(&expired)),
            r#"Bearer resource_metadata="https://rs.example/.well-known/oauth-protected-resource/mcp", scope="agents:call", error="invalid_token", error_description="the token has expired""#
        );
        let local = OAuth::new("https://as", "https://as/jwks", "agents");
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        assert_eq!(
            local.metadata(&headers),
            json!({"resource": "http://127.0.0.1:8080/mcp", "authorization_servers": ["https://as"],
                "bearer_methods_supported": ["header"]})
        );
    }
}
