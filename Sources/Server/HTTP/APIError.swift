import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import RooftopShared

/// HTTP status codes for Rooftop's error codes, and error responses with the `{code, message}`
/// body clients decode into a ``RooftopError``.
extension RooftopError {
    /// The HTTP status a code is answered with.
    var httpStatus: HTTPResponse.Status {
        switch code {
        case .illegalArgument, .badType, .badIndex, .invalidQuery, .request, .invalidOperation, .badState:
            .badRequest
        case .auth: .unauthorized
        case .disallowed, .quota: .forbidden
        case .notFound, .deleted: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .exists, .alreadyOpen: .conflict
        case .sizeLimit: .contentTooLarge
        case .retryLater: .tooManyRequests
        case .historyExpired: .gone
        case .timeout: .serviceUnavailable
        default: .internalServerError
        }
    }
}

/// Turns every error a handler throws into a JSON error response, so that no request ends with a
/// bare 500 or an HTML page: `RooftopError`s keep their code, decoding errors become `request`,
/// unknown routes `notFound` (a routed path with another method is answered 405 before, by
/// ``MethodNotAllowedMiddleware``), and anything unexpected `internal` (logged, details not sent).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            if let fault = RooftopError.storageFault(in: error) {
                // Not a bug and not the caller's fault: the disk is full or read-only. Whatever
                // was refused was rolled back; the client retries later.
                context.logger.error("storage unavailable", metadata: ["fault": "\(fault)", "error": "\(error)"])
                var response = try JSONBody.response(
                    RooftopError(.retryLater, "the server cannot use its storage now (\(fault)); retry later"),
                    status: .serviceUnavailable)
                response.headers[.retryAfter] = String(RooftopError.storageRetryAfterSeconds)
                return response
            }
            let rooftopError = RooftopError.translating(error)
            if rooftopError.httpStatus == .internalServerError {
                context.logger.error("request failed", metadata: ["error": "\(error)"])
            } else {
                context.logger.debug("request refused", metadata: ["code": "\(rooftopError.code)"])
            }
            var response = try JSONBody.response(rooftopError, status: rooftopError.httpStatus)
            if rooftopError.code == .retryLater {
                response.headers[.retryAfter] = String((error as? RetryLaterError)?.retryAfterSeconds ?? 60)
            }
            if rooftopError.code == .auth { response.headers[.wwwAuthenticate] = "Rooftop-Session" }
            return response
        }
    }

}

extension RooftopError {
    /// The `Retry-After` of a request refused for a storage fault.
    static let storageRetryAfterSeconds = 30

    /// The Rooftop error to answer with for any error a handler threw.
    static func translating(_ error: any Error) -> RooftopError {
        switch error {
        case let error as RooftopError:
            return error
        case let error as RetryLaterError:
            return error.error
        case let error as DecodingError:
            return RequestBody.describe(error)
        case let error as HTTPError:
            switch error.status {
            case .notFound: return RooftopError(.notFound, "no such endpoint")
            case .contentTooLarge: return RooftopError(.sizeLimit, "the request body is too large")
            case .methodNotAllowed: return RooftopError(.methodNotAllowed, "method not allowed on this endpoint")
            case .unauthorized: return RooftopError(.auth, error.body ?? "authentication required")
            default:
                if (400..<500).contains(error.status.code) {
                    return RooftopError(.request, error.body ?? error.status.reasonPhrase)
                }
                return RooftopError(.server, error.body ?? error.status.reasonPhrase)
            }
        case let error as any HTTPResponseError where (400..<500).contains(error.status.code):
            return RooftopError(.request, error.status.reasonPhrase)
        default:
            return RooftopError(.internal, "internal server error")
        }
    }
}
