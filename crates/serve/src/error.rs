//! Why serving failed: what was asked cannot be done, a server cannot be reached, or one did
//! not start.

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Connect(#[from] crate::backend::ConnectError),
    #[error("{0}")]
    Failed(String),
}
