import Crypto
import Foundation
import SwiftASN1
import X509

/// A development certificate authority and a server certificate it signed, for running the server
/// over TLS on a developer's machine or in tests.
///
/// The server certificate is valid for `localhost`, `127.0.0.1` and `::1` (plus any extra names
/// given). Clients trust the CA certificate (`ca.pem`), never the system roots, so these files
/// must not be used in production.
///
/// ```swift
/// let files = try DevelopmentCertificates.ensure(in: "/var/lib/rooftop/tls")
/// print("development CA: \(files.caCertificatePath)")
/// ```
public struct DevelopmentCertificates: Sendable {
    /// The CA certificate, PEM.
    public var caCertificatePEM: String
    /// The server certificate, PEM.
    public var serverCertificatePEM: String
    /// The server certificate's private key (P-256), PEM.
    public var serverPrivateKeyPEM: String

    /// Where ``ensure(in:extraHostNames:)`` keeps the files.
    public struct Files: Sendable {
        /// The CA certificate clients should trust.
        public var caCertificatePath: String
        /// The server certificate.
        public var serverCertificatePath: String
        /// The server certificate's private key.
        public var serverPrivateKeyPath: String
        /// Whether the files were created by this call (as opposed to found).
        public var created: Bool
    }

    /// Generates a new CA and server certificate.
    /// - Parameters:
    ///   - extraHostNames: DNS names or IP addresses to add to `localhost`, `127.0.0.1` and `::1`.
    ///   - validity: How long the certificates are valid (default 825 days).
    ///   - now: The start of validity (default: now, minus an hour for clock skew).
    /// - Throws: Errors from certificate construction or serialization.
    public static func generate(
        extraHostNames: [String] = [],
        validity: Duration = .seconds(825 * 86_400),
        now: Date = Date()
    ) throws -> DevelopmentCertificates {
        let notBefore = now.addingTimeInterval(-3600)
        let notAfter = now.addingTimeInterval(TimeInterval(validity.components.seconds))

        let caKey = P256.Signing.PrivateKey()
        let caPublicKey = Certificate.PublicKey(caKey.publicKey)
        let caName = try DistinguishedName {
            OrganizationName("Rooftop")
            CommonName("Rooftop Development CA")
        }
        let caKeyIdentifier = SubjectKeyIdentifier(hash: caPublicKey)
        let caCertificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: caPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                caKeyIdentifier
            },
            issuerPrivateKey: .init(caKey)
        )

        let serverKey = P256.Signing.PrivateKey()
        let serverPublicKey = Certificate.PublicKey(serverKey.publicKey)
        let serverName = try DistinguishedName {
            OrganizationName("Rooftop")
            CommonName("localhost")
        }
        var alternativeNames: [GeneralName] = [.dnsName("localhost")]
        for name in ["127.0.0.1", "::1"] + extraHostNames {
            if let address = ipAddressBytes(name) {
                alternativeNames.append(.ipAddress(ASN1OctetString(contentBytes: address[...])))
            } else if name != "localhost" {
                alternativeNames.append(.dnsName(name))
            }
        }
        let serverCertificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: serverPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: serverName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(alternativeNames)
                SubjectKeyIdentifier(hash: serverPublicKey)
                AuthorityKeyIdentifier(keyIdentifier: caKeyIdentifier.keyIdentifier)
            },
            issuerPrivateKey: .init(caKey)
        )

        return DevelopmentCertificates(
            caCertificatePEM: try caCertificate.serializeAsPEM().pemString,
            serverCertificatePEM: try serverCertificate.serializeAsPEM().pemString,
            serverPrivateKeyPEM: serverKey.pemRepresentation
        )
    }

    /// Writes the files into `directory` (`ca.pem`, `server.pem`, `server-key.pem`; the key
    /// readable by the owner only).
    /// - Throws: File-system errors.
    public func write(to directory: String) throws -> Files {
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let files = DevelopmentCertificates.paths(in: directory, created: true)
        try Data(caCertificatePEM.utf8).write(to: URL(fileURLWithPath: files.caCertificatePath), options: .atomic)
        try Data(serverCertificatePEM.utf8).write(
            to: URL(fileURLWithPath: files.serverCertificatePath), options: .atomic)
        try Data(serverPrivateKeyPEM.utf8).write(
            to: URL(fileURLWithPath: files.serverPrivateKeyPath), options: .atomic)
        try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: files.serverPrivateKeyPath)
        return files
    }

    /// Returns the development certificates in `directory`, generating them first if any file is
    /// missing.
    /// - Throws: Generation or file-system errors.
    public static func ensure(in directory: String, extraHostNames: [String] = []) throws -> Files {
        let existing = paths(in: directory, created: false)
        let manager = FileManager.default
        if [existing.caCertificatePath, existing.serverCertificatePath, existing.serverPrivateKeyPath]
            .allSatisfy(manager.fileExists(atPath:))
        {
            return existing
        }
        return try generate(extraHostNames: extraHostNames).write(to: directory)
    }

    private static func paths(in directory: String, created: Bool) -> Files {
        let base = URL(fileURLWithPath: directory)
        return Files(
            caCertificatePath: base.appendingPathComponent("ca.pem").path,
            serverCertificatePath: base.appendingPathComponent("server.pem").path,
            serverPrivateKeyPath: base.appendingPathComponent("server-key.pem").path,
            created: created)
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 address literal, or `nil` for a host name.
    static func ipAddressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
