//! TLS for PostgreSQL over rustls, the same library (and crypto provider) tiberius and
//! mysql_async use here, so one TLS stack serves every server and nothing needs OpenSSL.
//!
//! libpq's `sslmode` decides two things: whether TLS is attempted (see the PostgreSQL
//! backend) and how much of the certificate is checked, which is [`Verify`]. `require`
//! checks nothing unless a root certificate is given (then it acts as `verify-ca`), exactly
//! as libpq does; `verify-ca` checks the chain; `verify-full` the chain and the host name.
//!
//! Under `require`/`prefer` the certificate is not even parsed: libpq accepts any
//! certificate there, and servers do send ones webpki cannot read (`CREATE EXTENSION citus`
//! installs a self-signed X.509 v1 certificate, which webpki refuses as
//! `UnsupportedCertVersion`). rustls can check a handshake signature only against a parsed
//! certificate (its raw-key check needs the SubjectPublicKeyInfo, i.e. parsing too, and is
//! TLS 1.3 only), so in that mode the signature is accepted as libpq's mode implies: without
//! a trusted certificate it proves nothing anyway, since whoever sits in the middle can sign
//! with a key of their own. The key exchange still encrypts the session.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{aws_lc_rs, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

use crate::error::{Error, Result};

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Encrypt only (libpq `require` without a root certificate).
    Nothing,
    /// The chain must lead to a trusted root (`verify-ca`).
    Chain,
    /// The chain, and the certificate must name the host (`verify-full`).
    Full,
}

/// The certificate files a connection string names.
#[derive(Debug, Clone, Default)]
pub struct TlsFiles {
    /// Trusted roots (PEM); `system` means the operating system's store.
    pub root: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

/// A rustls client configuration for `verify` with `files`.
pub fn client_config(verify: Verify, files: &TlsFiles) -> Result<ClientConfig> {
    let provider = Arc::new(aws_lc_rs::default_provider());
    let roots = match verify {
        Verify::Nothing => RootCertStore::empty(),
        _ => root_store(files.root.as_deref())?,
    };
    let webpki = match verify {
        Verify::Nothing => None,
        _ => Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| Error::Usage(format!("TLS root certificates are not usable: {e}")))?,
        ),
    };
    let verifier = Arc::new(Verifier {
        webpki,
        verify,
        provider: provider.clone(),
    });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Usage(format!("TLS setup failed: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    match (&files.cert, &files.key) {
        (Some(cert), Some(key)) => {
            let chain = read_certs(cert, "client certificate")?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                Error::Usage(format!("cannot read client key {}: {e}", key.display()))
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::Usage(format!("client certificate and key do not match: {e}")))
        }
        (None, None) => Ok(builder.with_no_client_auth()),
        _ => Err(Error::Usage(
            "a client certificate needs both sslcert and sslkey".into(),
        )),
    }
}

/// The roots to trust: the file given, else libpq's `~/.postgresql/root.crt`, else the
/// operating system's store.
fn root_store(root: Option<&Path>) -> Result<RootCertStore> {
    let default = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".postgresql/root.crt"))
        .filter(|p| p.is_file());
    let mut store = RootCertStore::empty();
    match root.map(PathBuf::from).or(default) {
        Some(path) if path.as_os_str() != "system" => {
            for cert in read_certs(&path, "root certificate")? {
                store.add(cert).map_err(|e| {
                    Error::Usage(format!(
                        "root certificate {} is not usable: {e}",
                        path.display()
                    ))
                })?;
            }
        }
        _ => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
        }
    }
    Ok(store)
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| Error::Usage(format!("cannot read {what} {}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(Error::Usage(format!(
            "{what} file {} holds no PEM certificate",
            path.display()
        )));
    }
    Ok(certs)
}

/// Checks as much as [`Verify`] asks; handshake signatures whenever a certificate is judged.
#[derive(Debug)]
struct Verifier {
    webpki: Option<Arc<WebPkiServerVerifier>>,
    verify: Verify,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.verify == Verify::Chain => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        if self.verify == Verify::Nothing {
            return Ok(HandshakeSignatureValid::assertion());
        }
        let algs = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        if self.verify == Verify::Nothing {
            return Ok(HandshakeSignatureValid::assertion());
        }
        let algs = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// tokio-postgres's TLS hook over tokio-rustls.
#[derive(Clone)]
pub struct MakeRustls(Arc<ClientConfig>);

impl MakeRustls {
    pub fn new(config: ClientConfig) -> MakeRustls {
        MakeRustls(Arc::new(config))
    }
}

pub struct RustlsConnect {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
}

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> io::Result<RustlsConnect> {
        let name = ServerName::try_from(domain.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(RustlsConnect {
            config: self.0.clone(),
            name,
        })
    }
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        let connector = tokio_rustls::TlsConnector::from(self.config);
        Box::pin(async move {
            let tls = connector.connect(self.name, stream).await?;
            Ok(RustlsStream(tls))
        })
    }
}

/// A TLS session to PostgreSQL. No channel binding is offered: SCRAM still authenticates,
/// and the server accepts `channel_binding=prefer` (libpq's default) without it.
pub struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
