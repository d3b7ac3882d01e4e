//! The sessions of clients on the protocol's older versions, kept in memory within bounds: at
//! most so many in all and so many per bearer token ([`Sessions::InMemory`]).
//!
//! rmcp's [`LocalSessionManager`] keeps every session a client opens until it is idle for five
//! minutes: 20,000 `initialize` requests held 1.36 GB. [`Bounded`] wraps it, counts the
//! sessions of each client (the token of the request that opened it, which rmcp does not pass
//! to a session manager: the guard sets it in [`CLIENT`] around each request), and refuses a
//! session past a bound. rmcp answers such a refusal with a bare 500, so the arguments tap
//! asks [`Bounded::room_for`] first and answers an `initialize` that would be refused with
//! 503 and a JSON-RPC error; the bound here holds even when two requests race.

use crate::guard::{CLIENT, Client};
use crate::settings::Sessions;
use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use std::collections::HashMap;
use std::fmt;

/// rmcp's in-memory sessions, at most `max` at once and `per_client` for one token.
pub(crate) struct Bounded {
    inner: LocalSessionManager,
    max: usize,
    per_client: usize,
    /// The client each open session belongs to.
    owners: tokio::sync::Mutex<HashMap<SessionId, Client>>,
}

/// Why a session was not opened or served.
#[derive(Debug)]
pub(crate) enum SessionError {
    /// The bound on sessions, of all clients or of this one, is reached.
    Full(&'static str),
    Local(LocalSessionManagerError),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Full(which) => write!(f, "no room for another session: {which}"),
            SessionError::Local(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for SessionError {}

impl From<LocalSessionManagerError> for SessionError {
    fn from(error: LocalSessionManagerError) -> Self {
        SessionError::Local(error)
    }
}

impl Bounded {
    /// The manager for `sessions`, or `None` when the server keeps none.
    pub(crate) fn new(sessions: Sessions) -> Option<Self> {
        match sessions {
            Sessions::Stateless => None,
            Sessions::InMemory { max, per_client } => Some(Self {
                inner: LocalSessionManager::default(),
                max,
                per_client,
                owners: Default::default(),
            }),
        }
    }

    /// `Ok` when `client` may open a session now, else which bound is reached.
    pub(crate) async fn room_for(&self, client: Client) -> Result<(), SessionError> {
        let owners = self.owners.lock().await;
        self.check(&owners, client)
    }

    fn check(
        &self,
        owners: &HashMap<SessionId, Client>,
        client: Client,
    ) -> Result<(), SessionError> {
        if owners.len() >= self.max {
            return Err(SessionError::Full(
                "the server holds as many sessions as it keeps",
            ));
        }
        // Without tokens every client is one: only the total bound applies.
        let counted = matches!(client, Client::Token(_) | Client::Subject(_));
        if counted && owners.values().filter(|c| **c == client).count() >= self.per_client {
            return Err(SessionError::Full(
                "this token holds as many sessions as one client may",
            ));
        }
        Ok(())
    }
}

impl SessionManager for Bounded {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let client = CLIENT.try_with(|client| *client).unwrap_or(Client::Anyone);
        let mut owners = self.owners.lock().await;
        self.check(&owners, client).inspect_err(|error| {
            tracing::warn!(?client, %error, "refused a session");
        })?;
        let (id, transport) = self.inner.create_session().await?;
        owners.insert(id.clone(), client);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // rmcp closes a session here on `DELETE` and when its worker ends (idle, or the
        // server stopping), so the count follows every way a session ends.
        self.owners.lock().await.remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn open(manager: &Bounded, client: Client) -> Result<SessionId, SessionError> {
        CLIENT
            .scope(client, manager.create_session())
            .await
            .map(|(id, _)| id)
    }

    #[tokio::test]
    async fn sessions_are_bounded_in_all_and_per_token() {
        let manager = Bounded::new(Sessions::InMemory {
            max: 5,
            per_client: 2,
        })
        .unwrap();
        let a = Client::Token(0);
        let first = open(&manager, a).await.unwrap();
        open(&manager, a).await.unwrap();
        assert!(matches!(
            open(&manager, a).await,
            Err(SessionError::Full(_))
        ));
        assert!(manager.room_for(a).await.is_err());
        // Another token has its own share.
        let b = Client::Token(1);
        assert!(manager.room_for(b).await.is_ok());
        open(&manager, b).await.unwrap();
        // A closed session gives its room back.
        manager.close_session(&first).await.unwrap();
        open(&manager, a).await.unwrap();
        // Without tokens only the total counts: two more fill it.
        open(&manager, Client::Anyone).await.unwrap();
        open(&manager, Client::Anyone).await.unwrap();
        let full = open(&manager, Client::Anyone).await.unwrap_err();
        assert!(
            full.to_string().contains("as many sessions as it keeps"),
            "{full}"
        );
        assert!(Bounded::new(Sessions::Stateless).is_none());
    }
}
