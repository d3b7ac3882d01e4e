//! TLS for the client's `https://` servers: the crypto provider reqwest's rustls needs, and a
//! failed connection said in one line that names the host and the cause.

use rmcp::transport::streamable_http_client::StreamableHttpError;
use std::error::Error;

/// Installs ring as the process's rustls crypto provider unless one is installed: reqwest's
/// rustls (without aws-lc-rs, which this workspace leaves out for its C build) needs one to
/// build any client, rmcp's own included. Its verifier trusts the platform's roots, or the
/// certificates of `SSL_CERT_FILE` and `SSL_CERT_DIR` when they are set.
///
/// An application that builds reqwest clients of its own in a process without an MCP or model
/// client built first calls it (or installs a provider of its choice) before them.
pub fn install_crypto_provider() {
    #[cfg(feature = "rustls")]
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one first: either way one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// Why connecting to `url` failed, in one line: the URL (without credentials or query), then
/// the transport's causes, innermost last; or, when TLS refused the server's certificate, the
/// host and what is wrong with it.
pub(crate) fn connect_failure(url: &str, error: &rmcp::service::ClientInitializeError) -> String {
    let shown = shown_url(url);
    let host = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    let transport: Option<&(dyn Error + 'static)> = match error {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
            let inner: &(dyn Error + 'static) = error.error.as_ref();
            Some(inner)
        }
        _ => None,
    };
    let Some(transport) = transport else {
        return format!("{shown}: {error}");
    };
    let mut causes: Vec<String> = Vec::new();
    let mut certificate: Option<String> = None;
    let mut next = Some(transport);
    while let Some(cause) = next {
        next = cause.source();
        if let Some(http) = cause.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            if let StreamableHttpError::Client(inner) = http {
                // reqwest's own line repeats the URL (said above): its causes say the rest.
                next = inner.source();
                if inner.is_timeout() {
                    causes.push("timed out".into());
                }
                continue;
            }
            causes.push(http.to_string());
            continue;
        }
        if certificate.is_none() {
            certificate = refused_certificate(cause);
        }
        let text = cause.to_string();
        // An error whose line is its cause's (io::Error around rustls's) is said once.
        if causes.last() != Some(&text) {
            causes.push(text);
        }
    }
    if let Some(problem) = certificate {
        return format!("{shown}: the TLS certificate of `{host}` was refused: {problem}");
    }
    let mut line = shown;
    for cause in causes {
        line.push_str(": ");
        line.push_str(&cause);
    }
    line
}

/// What TLS found wrong with the server's certificate, if `error` is that refusal.
fn refused_certificate(error: &(dyn Error + 'static)) -> Option<String> {
    #[cfg(feature = "rustls")]
    {
        // rustls's error travels inside io::Errors (one in another), whose `source` skips it.
        let mut current = error;
        let tls = loop {
            if let Some(tls) = current.downcast_ref::<rustls::Error>() {
                break Some(tls);
            }
            match current
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
            {
                Some(inner) => current = inner,
                None => break None,
            }
        };
        if let Some(
            tls @ (rustls::Error::InvalidCertificate(_)
            | rustls::Error::InvalidCertRevocationList(_)),
        ) = tls
        {
            return Some(tls.to_string());
        }
    }
    #[cfg(not(feature = "rustls"))]
    let _ = error;
    None
}

/// `url` as errors show it: scheme, host, port and path, without user, password or query.
pub(crate) fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => "the URL".to_owned(),
    }
}
