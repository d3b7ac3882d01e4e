//! The paths the HTTP server serves, below every module that names them.

/// The path the streamable HTTP transport serves.
pub const HTTP_PATH: &str = "/mcp";
