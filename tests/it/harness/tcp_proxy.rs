//! A TCP proxy that stands in for a virtual IP or HAProxy in front of a
//! database: clients connect to it, it forwards to the current target, and
//! switching the target cuts every connection it carries, as a moved
//! address does.

use std::{
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU16, Ordering},
    },
};

use tokio::{
    net::{TcpListener, TcpStream},
    task::JoinHandle,
};

pub struct TcpProxy {
    pub addr: SocketAddr,
    target: Arc<AtomicU16>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl TcpProxy {
    /// Listens on a free loopback port and forwards to `127.0.0.1:target`.
    pub async fn start(target: u16) -> TcpProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port for the proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let target = Arc::new(AtomicU16::new(target));
        let connections: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = tokio::spawn({
            let (target, connections) = (target.clone(), connections.clone());
            async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    let port = target.load(Ordering::SeqCst);
                    let carried = tokio::spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(("127.0.0.1", port)).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                    let mut open = connections.lock().unwrap_or_else(|e| e.into_inner());
                    open.retain(|c| !c.is_finished());
                    open.push(carried);
                }
            }
        });
        TcpProxy {
            addr,
            target,
            connections,
            accept,
        }
    }

    /// Forwards new connections to `127.0.0.1:port` and cuts the open ones.
    pub fn switch_to(&self, port: u16) {
        self.target.store(port, Ordering::SeqCst);
        let open = std::mem::take(&mut *self.connections.lock().unwrap_or_else(|e| e.into_inner()));
        for connection in open {
            connection.abort();
        }
    }

    /// The URL of the `postgres` database behind it.
    pub fn postgres_url(&self) -> String {
        format!("postgres://postgres@{}/postgres", self.addr)
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.accept.abort();
        for connection in self
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            connection.abort();
        }
    }
}
