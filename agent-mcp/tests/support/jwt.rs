//! An authorization server's signing key and JWKS, made at test time, for the OAuth tests of
//! agent-mcp and of the examples' `agent-demo mcp --oauth-*` (which includes this file).

#![allow(dead_code)]

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde_json::{Value, json};

pub const ISSUER: &str = "https://as.test";
pub const AUDIENCE: &str = "https://agents.test/mcp";
pub const METADATA_URL: &str = "https://agents.test/.well-known/oauth-protected-resource/mcp";

/// An ES256 key of the authorization server, with its id.
pub struct Signer {
    key: EcdsaKeyPair,
    kid: &'static str,
}

impl Signer {
    pub fn new(kid: &'static str) -> Self {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        Self { key, kid }
    }

    /// The key as a JWK: the public point's coordinates.
    pub fn jwk(&self) -> Value {
        let point = self.key.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "kid": self.kid, "use": "sig", "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..])})
    }

    /// A JWT of `claims`, signed.
    pub fn token(&self, claims: &Value) -> String {
        let header = json!({"alg": "ES256", "typ": "at+jwt", "kid": self.kid});
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = ring::rand::SystemRandom::new();
        let signature = self.key.sign(&rng, signed.as_bytes()).unwrap();
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }
}

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims for the server, valid for an hour, with `changes` over them.
pub fn claims(changes: Value) -> Value {
    let mut claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1",
        "iat": now(), "exp": now() + 3600, "scope": "agents:call profile"});
    for (key, value) in changes.as_object().unwrap() {
        claims[key] = value.clone();
    }
    claims
}

/// Serves `jwks` at `/jwks` on a loopback port: its URL.
pub async fn jwks_server(jwks: Value) -> String {
    let body = jwks.to_string();
    let router = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let body = body.clone();
            async move { body }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}/jwks")
}
