/// Runs `body` with `resource` and then `release`s it, whatever happens: after `body` returns
/// or throws. The one shape of every `with…` helper of the tests (servers, clients, proxies,
/// connections, harnesses), so that none forgets a path.
///
/// ```swift
/// let proxy = try await FaultProxy.start(targetPort: port)
/// try await scoped(proxy, release: { await $0.shutdown() }) { proxy in … }
/// ```
public func scoped<Resource: Sendable, Result>(
    _ resource: Resource, release: (Resource) async -> Void, _ body: (Resource) async throws -> Result
) async throws -> Result {
    do {
        let result = try await body(resource)
        await release(resource)
        return result
    } catch {
        await release(resource)
        throw error
    }
}
