//! A TCP proxy in front of a receiver that, while holding, passes each
//! request on at once but keeps the answer back for a while: the receiver
//! has done its work (say, committed the event) and hookd, tired of waiting,
//! records a timeout. Released, it carries both ways at once.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    task::JoinHandle,
};

pub struct SlowAnswer {
    pub addr: SocketAddr,
    holding: Arc<AtomicBool>,
    accept: JoinHandle<()>,
}

impl SlowAnswer {
    /// Listens on a free loopback port, forwarding to `target`; answers
    /// opened while holding reach the client `hold_for` late.
    pub async fn start(target: SocketAddr, hold_for: Duration) -> SlowAnswer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let addr = listener.local_addr().expect("its address");
        let holding = Arc::new(AtomicBool::new(false));
        let accept = tokio::spawn({
            let holding = holding.clone();
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    let held = holding.load(Ordering::SeqCst).then_some(hold_for);
                    tokio::spawn(carry(client, target, held));
                }
            }
        });
        SlowAnswer {
            addr,
            holding,
            accept,
        }
    }

    /// Keeps the answers of new connections back (or not).
    pub fn hold(&self, on: bool) {
        self.holding.store(on, Ordering::SeqCst);
    }
}

impl Drop for SlowAnswer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Requests on at once; the answer after `held`, if any.
async fn carry(client: TcpStream, target: SocketAddr, held: Option<Duration>) {
    let Ok(server) = TcpStream::connect(target).await else {
        return;
    };
    let (mut client_in, mut client_out) = client.into_split();
    let (mut server_in, mut server_out) = server.into_split();
    let up = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_in, &mut server_out).await;
    });
    let mut first = vec![0; 64 * 1024];
    if let Ok(n @ 1..) = server_in.read(&mut first).await {
        if let Some(delay) = held {
            tokio::time::sleep(delay).await;
        }
        if client_out.write_all(&first[..n]).await.is_ok() {
            let _ = tokio::io::copy(&mut server_in, &mut client_out).await;
        }
    }
    up.abort();
}
