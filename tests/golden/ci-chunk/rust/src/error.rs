use std::fmt;

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    RateLimited { retry_after_ms: u64 },
    UnknownClient(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RateLimited { retry_after_ms } => write!(f, "retry after {retry_after_ms} ms"),
            Error::UnknownClient(id) => write!(f, "unknown client {id}"),
        }
    }
}
