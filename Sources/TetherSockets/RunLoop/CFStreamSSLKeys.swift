// The CFNetwork key and value strings that RunLoop-era code passes to `AsyncSocket.startTLS(_:)`. On Apple platforms
// CFNetwork defines them; on Linux Tether does, with the same strings (each key's string is its own name).

/// The minimum protocol: one of the `kCFStreamSocketSecurityLevel…` values.
public let kCFStreamSSLLevel = "kCFStreamSSLLevel"
/// The name to verify in the server's certificate (and to send as SNI); `NSNull()` turns the name check off.
public let kCFStreamSSLPeerName = "kCFStreamSSLPeerName"
/// `true`: accept a certificate whose root is unknown or self-signed (no chain verification).
public let kCFStreamSSLAllowsAnyRoot = "kCFStreamSSLAllowsAnyRoot"
/// `true`: accept expired certificates (the chain must otherwise verify).
public let kCFStreamSSLAllowsExpiredCertificates = "kCFStreamSSLAllowsExpiredCertificates"
/// `true`: accept an expired root (the chain must otherwise verify).
public let kCFStreamSSLAllowsExpiredRoots = "kCFStreamSSLAllowsExpiredRoots"
/// `false`: do not verify the certificate chain at all. Default `true`.
public let kCFStreamSSLValidatesCertificateChain = "kCFStreamSSLValidatesCertificateChain"
/// Your own certificates, leaf first: an array of `NIOSSLCertificate` (Δ: Linux has no `SecIdentity`; the private
/// key goes under ``kTetherStreamSSLPrivateKey``).
public let kCFStreamSSLCertificates = "kCFStreamSSLCertificates"
/// `true`: act as the TLS server (with ``kCFStreamSSLCertificates`` and ``kTetherStreamSSLPrivateKey``).
public let kCFStreamSSLIsServer = "kCFStreamSSLIsServer"
/// Δ: the trust roots (an array of `NIOSSLCertificate`) the server's chain is verified against, in place of the
/// system's: Linux has no keychain to add an anchor to.
public let kTetherStreamSSLTrustRoots = "kTetherStreamSSLTrustRoots"
/// Δ: the `NIOSSLPrivateKey` of the leaf in ``kCFStreamSSLCertificates`` (a `SecIdentity` bundled both).
public let kTetherStreamSSLPrivateKey = "kTetherStreamSSLPrivateKey"

/// No security: refused by Tether (a socket without TLS simply does not call `startTLS`).
public let kCFStreamSocketSecurityLevelNone = "kCFStreamSocketSecurityLevelNone"
/// SSL 3: refused (BoringSSL does not offer it).
public let kCFStreamSocketSecurityLevelSSLv3 = "kCFStreamSocketSecurityLevelSSLv3"
/// TLS 1.0 or later, as the original.
public let kCFStreamSocketSecurityLevelTLSv1 = "kCFStreamSocketSecurityLevelTLSv1"
/// The highest protocol both sides offer, with Tether's default floor (TLS 1.2).
public let kCFStreamSocketSecurityLevelNegotiatedSSL = "kCFStreamSocketSecurityLevelNegotiatedSSL"
