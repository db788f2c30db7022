import NIOSSL

/// The TLS configuration the server runs with.
enum TLSSetup {
    /// `nil` for plain HTTP (only with `insecureHTTP`); the configured certificate; or the
    /// development certificate in `<dataDirectory>/tls`, created on first start.
    static func configuration(for configuration: ServerConfiguration, output: @Sendable (String) -> Void) throws
        -> TLSConfiguration?
    {
        if configuration.insecureHTTP {
            output("WARNING: serving plain HTTP (--insecure-http); use this for local development only")
            return nil
        }
        let certificatePath: String
        let keyPath: String
        if let files = configuration.tls {
            certificatePath = files.certificatePath
            keyPath = files.privateKeyPath
        } else {
            let files = try DevelopmentCertificates.ensure(in: configuration.dataDirectory + "/tls")
            output("development CA: \(files.caCertificatePath)")
            certificatePath = files.serverCertificatePath
            keyPath = files.serverPrivateKeyPath
        }
        let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        return tls
    }
}
