import Foundation
import RooftopTestSupport
@testable import Rooftop
import RooftopShared

/// The client library's network layer pointed at a test server.
enum ClientTransportFixture {
    /// The PEM text of the server's development CA (or of its own certificate).
    static func caPEM(_ server: ServerProcess) throws -> String {
        try String(contentsOfFile: server.caCertificatePath, encoding: .utf8)
    }

    /// A client configuration for the server, trusting `trust` (default: its CA), with the
    /// server's application ID.
    static func configuration(_ server: ServerProcess, trust: TrustPolicy? = nil) throws -> ClientConfiguration {
        guard let url = URL(string: server.baseURL) else { throw FixtureError("bad server URL \(server.baseURL)") }
        var configuration = ClientConfiguration(serverURL: url)
        configuration.appId = server.appId
        configuration.trust = try trust ?? .certificateAuthority(pem: caPEM(server))
        configuration.requestTimeout = .seconds(30)
        return configuration
    }

    /// Runs `body` with a ``RemoteAPI`` over a real ``AsyncHTTPTransport``, shut down afterwards.
    /// - Parameters:
    ///   - trust: What to trust (default: the server's CA).
    ///   - appId: The application ID to send (default: the server's).
    ///   - session: The session token store (default: signed out).
    static func withRemoteAPI<T>(
        _ server: ServerProcess, trust: TrustPolicy? = nil, appId: String? = nil,
        session: SessionTokenStore = SessionTokenStore(), _ body: (RemoteAPI) async throws -> T
    ) async throws -> T {
        let configuration = try configuration(server, trust: trust)
        let transport = try AsyncHTTPTransport(
            baseURL: configuration.serverURL, trust: configuration.trust, timeout: configuration.requestTimeout)
        let api = RemoteAPI(transport: transport, appId: appId ?? configuration.appId, session: session)
        return try await scoped(api, release: { _ in await transport.shutdown() }, body)
    }

    /// Signs up a new user through the client API and keeps its token in `session`.
    @discardableResult
    static func signUp(_ api: RemoteAPI, session: SessionTokenStore, prefix: String = "client") async throws -> Session {
        let signedUp = try await api.signUp(SignUpRequest(username: Unique.name(prefix), password: "password-1"))
        session.set(signedUp.sessionToken)
        return signedUp
    }

    /// Writes one new object (`n = value`) into `datastore` through a push.
    @discardableResult
    static func write(
        _ api: RemoteAPI, in datastore: DatastoreID, className: String = "Note", objectId: String = ObjectID.generate(),
        value: Int64 = 1
    ) async throws -> MutationResult {
        let mutation = Mutation(
            datastore: datastore, className: className, objectId: objectId,
            change: .update([FieldUpdate("n", .set(.int(value)))]))
        let response = try await api.push(PushRequest(mutations: [mutation]))
        guard let result = response.result(for: mutation.mutationId), result.isApplied else {
            throw FixtureError("the write was not applied: \(response)")
        }
        return result
    }
}

/// Certificates made with the `openssl` command-line tool (CI installs it).
enum ClientTransportOpenSSL {
    /// A new self-signed P-256 certificate and key, valid for two days, written into `directory`.
    /// - Parameters:
    ///   - commonName: The subject's CN.
    ///   - alternativeNames: The subjectAltName entries, e.g. `DNS:localhost`.
    /// - Returns: The paths of the certificate and the key (PEM).
    static func selfSigned(
        commonName: String, alternativeNames: [String] = ["DNS:localhost", "IP:127.0.0.1"], in directory: String
    ) throws -> (certificate: String, key: String) {
        let certificate = directory + "/\(commonName.filter(\.isLetter))-cert.pem"
        let key = directory + "/\(commonName.filter(\.isLetter))-key.pem"
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=\(commonName)",
            "-addext", "subjectAltName=" + alternativeNames.joined(separator: ","),
        ]
        let output = Pipe()
        process.standardOutput = .pipe(output)
        process.standardError = .pipe(output)
        try process.run()
        let log = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError("openssl failed (\(process.terminationStatus)): \(String(decoding: log, as: UTF8.self))")
        }
        return (certificate, key)
    }
}
