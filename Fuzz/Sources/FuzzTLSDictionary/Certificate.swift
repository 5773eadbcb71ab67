// A self-signed P-256 certificate (CN and SAN fuzz.example, IP 192.0.2.1) and its key, made with openssl for the
// fuzzer: values of kCFStreamSSLCertificates, kTetherStreamSSLTrustRoots and kTetherStreamSSLPrivateKey.

let certificatePEM = """
    -----BEGIN CERTIFICATE-----
    MIIBoTCCAUigAwIBAgIUKi5r3lDtELxnXbUWCAWDpbdK5ocwCgYIKoZIzj0EAwIw
    FzEVMBMGA1UEAwwMZnV6ei5leGFtcGxlMB4XDTI2MTEyNjE5MDg0N1oXDTM2MTEy
    MzE5MDg0N1owFzEVMBMGA1UEAwwMZnV6ei5leGFtcGxlMFkwEwYHKoZIzj0CAQYI
    KoZIzj0DAQcDQgAEDiqCEj0m4jKugvToGmTujRbNsOC1NKE2e1rR/J4C/MYZ2Hu1
    cb0IqX0JTIq1HA5tntHSd/qbn8kAHps27BqKsKNyMHAwHQYDVR0OBBYEFJZBO+dv
    edSR5xxgYxG8sIgJY8ZbMB8GA1UdIwQYMBaAFJZBO+dvedSR5xxgYxG8sIgJY8Zb
    MA8GA1UdEwEB/wQFMAMBAf8wHQYDVR0RBBYwFIIMZnV6ei5leGFtcGxlhwTAAAIB
    MAoGCCqGSM49BAMCA0cAMEQCICnYEZUlxFHrh/VGeXvhgk2kbPE+WHVTVLt9b4zG
    yJUSAiAZxg8uYOgSAcdr2KXrxmEbspN3c13HKCMYvgbkNvvuAA==
    -----END CERTIFICATE-----
    """

let privateKeyPEM = """
    -----BEGIN PRIVATE KEY-----
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQglTLEjxQ5qjDQFkFj
    KeUztezvhrk8Nuch/+CPguT+F9ehRANCAAQOKoISPSbiMq6C9OgaZO6NFs2w4LU0
    oTZ7WtH8ngL8xhnYe7VxvQipfQlMirUcDm2e0dJ3+pufyQAemzbsGoqw
    -----END PRIVATE KEY-----
    """
