//! The HTTPS server: actix-web with an OpenSSL acceptor (client
//! certificates required, see [`tls`]), `POST /am/3` and `POST /am/2`
//! answered by the one request [`Handler`] (403, body limit, XML-RPC
//! decoding, the [`Dispatch`] with the verified caller, a `tracing` span
//! per call), keep-alive, a request deadline (see `body`, and `watchdog`
//! for requests after the first on a connection), caps on open
//! connections (see `admission`), and graceful shutdown on SIGTERM/SIGINT.
//!
//! The listening socket is bound first ([`bind`]), so a process that
//! cannot have the port stops before it builds anything else; accepted
//! connections have `TCP_NODELAY` (inherited from the listening socket),
//! so small TLS records and the tail of large answers leave at once
//! instead of waiting for the client's delayed ACK.

mod admission;
mod body;
mod call_log;
mod handler;
mod routes;
mod sessions;
pub mod tls;
mod unpin;
mod watchdog;

pub use handler::{Content, Dispatch, Endpoint, Handler, Response};
pub use tls::PeerIdentity;

use crate::config::{ServerConfig, TlsFileError, TlsIdentity};
use actix_web::dev::{ServerHandle, Service};
use actix_web::{App, HttpServer, web};
use geni_credentials::{TrustLoadError, TrustStore};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The server certificate or key cannot be used.
    #[error("server.cert / server.key: {0}")]
    Identity(#[from] TlsFileError),
    /// The trust roots cannot be read.
    #[error("server.trust_roots: {0}")]
    Trust(#[from] TrustLoadError),
    /// OpenSSL refused the TLS setup.
    #[error("TLS setup failed: {0}")]
    Tls(#[from] openssl::error::ErrorStack),
    /// Binding or running failed.
    #[error("server.listen {listen}: {source}")]
    Io {
        /// The configured address.
        listen: String,
        /// The operating system error.
        source: std::io::Error,
    },
}

/// A server running on a thread of its own (tests, tools).
pub struct RunningServer {
    /// The address it listens on (the real port when 0 was configured).
    pub addr: SocketAddr,
    handle: ServerHandle,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl RunningServer {
    /// Stops accepting, lets calls in progress finish, and waits.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(thread) = self.thread.take() {
            actix_web::rt::System::new().block_on(self.handle.stop(true));
            let _ = thread.join();
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A server that holds its port, with TLS and roots checked, not yet
/// answering: made by [`bind`], started by [`Bound::run`].
pub struct Bound {
    listener: TcpListener,
    tls: openssl::ssl::SslAcceptorBuilder,
    trust: Arc<TrustStore>,
    config: ServerConfig,
}

/// Loads the server's TLS identity and binds its listening socket (with
/// `TCP_NODELAY`, which accepted connections inherit). Connections that
/// arrive before [`Bound::run`] wait in the socket's backlog.
pub fn bind(config: &ServerConfig, trust: Arc<TrustStore>) -> Result<Bound, ServerError> {
    let identity = TlsIdentity::load(&config.cert, &config.key)?;
    let tls = tls::acceptor(&identity, &trust)?;
    let io = |source| ServerError::Io {
        listen: config.listen.clone(),
        source,
    };
    let listener = TcpListener::bind(&config.listen).map_err(io)?;
    socket2::SockRef::from(&listener)
        .set_tcp_nodelay(true)
        .map_err(io)?;
    Ok(Bound {
        listener,
        tls,
        trust,
        config: config.clone(),
    })
}

impl Bound {
    /// The address it listens on (the real port when 0 was configured).
    pub fn local_addr(&self) -> Result<SocketAddr, ServerError> {
        self.listener.local_addr().map_err(|source| self.io(source))
    }

    /// Runs the server in the foreground until SIGTERM or SIGINT, then lets
    /// calls in progress finish (up to `shutdown_timeout_secs`) and returns.
    pub fn run(self, handler: Handler) -> Result<(), ServerError> {
        let listen = self.config.listen.clone();
        actix_web::rt::System::new()
            .block_on(async move { self.build(handler)?.await })
            .map_err(|source| ServerError::Io { listen, source })
    }

    fn io(&self, source: std::io::Error) -> ServerError {
        ServerError::Io {
            listen: self.config.listen.clone(),
            source,
        }
    }

    /// Builds the actix server (must run inside an actix system).
    fn build(self, handler: Handler) -> std::io::Result<actix_web::dev::Server> {
        let Bound {
            listener,
            tls,
            trust,
            config,
        } = self;
        let request_timeout = Duration::from_secs(config.request_timeout_secs);
        let state = web::Data::new(routes::State {
            handler,
            request_timeout,
        });
        let gate = routes::Gate {
            trust,
            connections: admission::Connections::new(
                config.max_connections,
                config.max_connections_per_client,
            ),
            between_requests: Duration::from_secs(config.keep_alive_secs)
                .saturating_add(request_timeout),
        };
        let mut server = HttpServer::new(move || {
            App::new()
                // Before any route reads them, so that the requests actix
                // keeps for reuse hold no connection's read buffer.
                .wrap_fn(|mut request, service| {
                    unpin::unpin(&mut request.head_mut().headers);
                    service.call(request)
                })
                .app_data(state.clone())
                .configure(routes::configure)
        })
        .on_connect(move |connection, data| gate.on_connect(connection, data))
        .keep_alive(Duration::from_secs(config.keep_alive_secs))
        .client_request_timeout(request_timeout)
        .shutdown_timeout(config.shutdown_timeout_secs);
        let workers = match config.workers {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        // A hard bound on open sockets, refused ones included: the
        // admission cap plus a quarter, shared out among the workers.
        let per_worker = (config.max_connections + config.max_connections / 4) / workers + 1;
        server = server
            .workers(workers)
            .max_connections(per_worker)
            .worker_max_blocking_threads(config.call_threads);
        Ok(server.listen_openssl(listener, tls)?.run())
    }
}

/// Loads the trust roots named by the configuration.
pub fn load_trust(config: &ServerConfig) -> Result<Arc<TrustStore>, ServerError> {
    Ok(Arc::new(TrustStore::from_dir(&config.trust_roots)?))
}

/// Starts the server on a thread of its own and returns once it listens.
pub fn spawn(
    config: &ServerConfig,
    trust: Arc<TrustStore>,
    handler: Handler,
) -> Result<RunningServer, ServerError> {
    let bound = bind(config, trust)?;
    let addr = bound.local_addr()?;
    let io = |source| ServerError::Io {
        listen: config.listen.clone(),
        source,
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let server = bound.build(handler)?;
            let _ = sender.send(server.handle());
            server.await
        })
    });
    let Ok(handle) = receiver.recv() else {
        let error = thread.join().ok().and_then(Result::err);
        return Err(io(error.unwrap_or_else(|| {
            std::io::Error::other("the server thread stopped before listening")
        })));
    };
    Ok(RunningServer {
        addr,
        handle,
        thread: Some(thread),
    })
}
